#include <algorithm>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/proposers/candidate_reader.hpp"
#include "orchestrator/proposers/proposer.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

class files_proposer final : public proposer {
  public:
    explicit files_proposer(const fs::path& folder) {
        if (!fs::is_directory(folder))
            throw std::invalid_argument("--candidates " + folder.string() + ": no such folder");
        for (const auto& e : fs::directory_iterator(folder))
            if (e.is_regular_file() && e.path().extension() == ".cu") m_files.push_back(e.path());
        std::sort(m_files.begin(), m_files.end());
        if (m_files.empty())
            throw std::invalid_argument("--candidates " + folder.string() + ": no .cu files");
    }

    std::vector<candidate> propose(const search_state& s) override {
        if (m_next >= m_files.size()) return {};
        const fs::path file = m_files[m_next++];
        candidate c = s.initial;
        c.proposer = proposer_kind::files;
        c.label = file.filename().string();
        c.source = read_text_file(file);
        c.rationale = "from " + file.filename().string();
        c.parent_iteration = std::nullopt;
        const fs::path side = fs::path(file).replace_extension(".json");
        if (!fs::exists(side)) return {c};
        try {
            const rapidjson::Document d =
                parse_json(read_text_file(side), side.filename().string());
            c.rejected = apply_candidate_json(c, d, s.contract, embedded_schema("candidate-file"),
                                              side.filename().string());
        } catch (const std::exception& e) {
            c.rejected = e.what();
        }
        return {c};
    }

    // One file per iteration: the next one is the one after those already proposed.
    void restore(const search_state&, const std::vector<candidate>&) override {
        m_next = std::min(m_next + 1, m_files.size());
    }

  private:
    std::vector<fs::path> m_files;
    std::size_t m_next = 0;
};

}  // namespace

std::unique_ptr<proposer> make_files_proposer(const fs::path& folder) {
    return std::make_unique<files_proposer>(folder);
}

}  // namespace cuopt
