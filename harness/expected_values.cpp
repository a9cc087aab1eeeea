#include "harness/expected_values.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include "common/element_check.h"
#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"

namespace cuopt {

namespace {

constexpr std::uint64_t k_cache_limit_bytes = 2ull << 30;

// What tells a file apart from the one cached for its inode (rewritten, or a new file that
// reuses the inode).
struct file_identity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const file_identity& o) const {
        return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
    }
};

struct cached_file {
    file_identity identity;
    dtype type = dtype::f32;
    expected_values values;
};

// By file, not by name: every attempt folder hard-links the same oracle file under its own name.
using file_key = std::pair<dev_t, ino_t>;

std::map<file_key, cached_file>& cache() {
    static std::map<file_key, cached_file> files;
    return files;
}

file_identity identify(const std::filesystem::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0)
        throw std::runtime_error("cannot read expected file " + quote_value(file.string()) + ": " +
                                 std::strerror(errno));
    return {st.st_dev, st.st_ino, st.st_size,
            static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
}

cached_file load(const kernel_arg& arg, const file_identity& identity) {
    const std::filesystem::path& file = arg.check->expected_file;
    cached_file c;
    c.identity = identity;
    c.type = arg.type;
    c.values.bytes = read_binary_file(file);
    if (c.values.bytes.size() != arg.bytes())
        throw std::runtime_error("expected file " + quote_value(file.string()) + " holds " +
                                 std::to_string(c.values.bytes.size()) + " bytes; '" + arg.name +
                                 "' needs " + std::to_string(arg.bytes()));
    c.values.sha256 = sha256_hex(c.values.bytes.data(), c.values.bytes.size());
    if (is_float(arg.type))
        c.values.finite_rms =
            cuopt_check::finite_rms(static_cast<int>(arg.type), c.values.bytes.data(), arg.count);
    return c;
}

void make_room(std::uint64_t bytes) {
    auto& files = cache();
    std::uint64_t held = 0;
    for (const auto& [path, c] : files) held += c.values.bytes.size();
    if (held + bytes > k_cache_limit_bytes) files.clear();
}

}  // namespace

const expected_values& expected_values_for(const kernel_arg& arg) {
    const std::filesystem::path& file = arg.check->expected_file;
    const file_identity identity = identify(file);
    auto& files = cache();
    const file_key key{identity.device, identity.inode};
    auto it = files.find(key);
    if (it == files.end() || !(it->second.identity == identity) || it->second.type != arg.type) {
        if (it != files.end()) files.erase(it);
        make_room(arg.bytes());
        it = files.emplace(key, load(arg, identity)).first;
    }
    const expected_values& v = it->second.values;
    if (v.bytes.size() != arg.bytes())
        throw std::runtime_error("expected file " + quote_value(file.string()) + " holds " +
                                 std::to_string(v.bytes.size()) + " bytes; '" + arg.name +
                                 "' needs " + std::to_string(arg.bytes()));
    if (v.sha256 != arg.check->expected_sha256) {
        const std::string cached = v.sha256;
        files.erase(it);  // read again next time: a same-size rewrite may keep its mtime
        throw std::runtime_error("expected file " + quote_value(file.string()) + " has SHA-256 " +
                                 cached + "; the request's expected_sha256 is " +
                                 arg.check->expected_sha256);
    }
    return v;
}

void forget_expected_values() {
    cache().clear();
}

std::pair<std::size_t, std::uint64_t> expected_cache_size() {
    std::uint64_t held = 0;
    for (const auto& [path, c] : cache()) held += c.values.bytes.size();
    return {cache().size(), held};
}

}  // namespace cuopt
