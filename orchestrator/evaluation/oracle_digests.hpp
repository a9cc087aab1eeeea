#pragma once
/// What the optimizer must know of an oracle file to let the harness check outputs against it
/// on the GPU: its SHA-256 (the request names it, the harness refuses another file, the
/// response echoes it) and the root mean square of its finite elements (so the optimizer works
/// out the same rule as the harness, to the bit, and refuses a response whose rule differs).
/// Each file is read once per run; thread-safe, shared by every copy of the evaluator's
/// settings.

#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "common/dtype.hpp"

namespace cuopt {

struct oracle_digest {
    std::string sha256;
    std::uint64_t count = 0;  // elements of the file's dtype
    double finite_rms = 0;    // floats only
};

class oracle_digests {
  public:
    /// The digest of `file` read as `type`; throws std::runtime_error when it cannot be read.
    oracle_digest of(const std::filesystem::path& file, dtype type);

  private:
    std::mutex m_mutex;
    std::map<std::pair<std::filesystem::path, dtype>, oracle_digest> m_digests;
};

}  // namespace cuopt
