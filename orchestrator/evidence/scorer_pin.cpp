#include "orchestrator/evidence/scorer_pin.hpp"

#include "common/sha256.hpp"

namespace cuopt {

namespace {

std::string digest_or_empty(const std::filesystem::path& file) {
    try {
        return sha256_file_hex(file);
    } catch (const std::exception&) {
        return "";
    }
}

std::string shown(const std::string& sha256) {
    return sha256.empty() ? "unreadable" : "sha256 " + sha256.substr(0, 16) + "...";
}

}  // namespace

void scorer_pin::add(const std::string& role, const std::filesystem::path& file) {
    m_files.push_back({role, file, digest_or_empty(file)});
}

void scorer_pin::add(const std::string& role, const std::filesystem::path& file,
                     std::string sha256) {
    m_files.push_back({role, file, std::move(sha256)});
}

std::vector<std::string> scorer_pin::changes() const {
    std::vector<std::string> out;
    for (const pinned& p : m_files) {
        const std::string now = digest_or_empty(p.file);
        if (now == p.sha256) continue;
        out.push_back("harness_error: the " + p.role + " " + p.file.string() +
                      " changed during the run (" + shown(p.sha256) + " when pinned, " +
                      shown(now) +
                      " before the verdict): the verdict would rest on another "
                      "scorer than the one the run started with");
    }
    return out;
}

}  // namespace cuopt
