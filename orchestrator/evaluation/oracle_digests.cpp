#include "orchestrator/evaluation/oracle_digests.hpp"

#include "common/element_check.h"
#include "common/file_io.hpp"
#include "common/sha256.hpp"

namespace cuopt {

oracle_digest oracle_digests::of(const std::filesystem::path& file, dtype type) {
    std::lock_guard lock(m_mutex);
    const auto key = std::make_pair(file, type);
    if (const auto it = m_digests.find(key); it != m_digests.end()) return it->second;
    const std::vector<unsigned char> bytes = read_binary_file(file);
    oracle_digest d;
    d.sha256 = sha256_hex(bytes.data(), bytes.size());
    d.count = bytes.size() / dtype_size(type);
    if (is_float(type))
        d.finite_rms = cuopt_check::finite_rms(static_cast<int>(type), bytes.data(), d.count);
    return m_digests.emplace(key, d).first->second;
}

}  // namespace cuopt
