#pragma once
/// The scorer, pinned. Whatever decides a run's verdict (the harness binary that measures, the
/// manifest and holdout that say what is right, the oracle files outputs are held against, the
/// inputs key) is hashed once the oracle is ready and again before the verdict is written; a
/// file that changed in between (an agent with a shell, a colleague's rebuild) means the
/// verdict would rest on another scorer than the one the run started with, so the run ends in
/// harness_error naming the file instead of a verdict.

#include <filesystem>
#include <string>
#include <vector>

namespace cuopt {

class scorer_pin {
  public:
    /// Hashes `file` now, as `role` ("harness", "manifest", "oracle perf-256 c", ...). A file
    /// that cannot be read is pinned as missing: it must still be missing at the end.
    void add(const std::string& role, const std::filesystem::path& file);
    /// The same against a digest taken earlier (run.json's, when the run began): a file changed
    /// between then and now is caught too.
    void add(const std::string& role, const std::filesystem::path& file, std::string sha256);

    /// One line per file whose bytes differ from what add() saw (or that appeared, vanished or
    /// became unreadable), "harness_error: the harness binary /x/cuda-harness changed during
    /// the run (sha256 0123abcd… when pinned, 4567ef01… now)"; empty when none did.
    std::vector<std::string> changes() const;

    std::size_t size() const { return m_files.size(); }

  private:
    struct pinned {
        std::string role;
        std::filesystem::path file;
        std::string sha256;  // "" for a file that could not be read
    };
    std::vector<pinned> m_files;
};

}  // namespace cuopt
