#pragma once
/// The daemon under test, as its tests start it: a job's files (the pilot with a config.json
/// naming them), `cuda-optimizer serve` in the background with the fake harness and the fake
/// compute-sanitizer (SIGKILLed, or waited for with a limit), `submit` into a spool, and a wait
/// for what a daemon does in its own time.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace cuopt::test {

/// The fake harness, every test daemon's --harness.
extern const std::string k_fake_harness;
/// tests/fake-compute-sanitizer.sh, every test daemon's --sanitizer.
extern const std::string k_fake_sanitizer;

/// Who owns a job's files: whoever runs the test, or uid 65534 (who must read its own config).
enum class file_owner { tester, nobody };

/// The pilot (fake-harness markers) with a config.json naming its files: a harness timeout of
/// `timeout_s`, then `settings`.
struct job_files {
    optimizer_fixture pilot;
    std::filesystem::path config;
    explicit job_files(const std::string& settings = k_quick_job, int timeout_s = 60);
    /// Owned by `owner` (every file, the folder too).
    explicit job_files(file_owner owner, const std::string& settings = k_quick_job);
    /// Another config in the pilot's folder, as the constructor writes config.json.
    std::filesystem::path write_config(const std::string& name, const std::string& settings,
                                       int timeout_s) const;
};

/// What comes before a test's own flags on serve's command line, and when serve counts as
/// started.
struct serve_launch {
    std::vector<std::string> executor_flags;  // none: the local executor
    std::string poll_s = "0.05";
    /// Removes the submit.sock a SIGKILLed serve left, then waits (30 s) for serve's own.
    bool wait_for_socket = false;
};

/// `serve --spool SPOOL [executor flags] --harness fake --sanitizer fake --poll P EXTRA...` in
/// the background, stdout in `out` and stderr in `out`.err; SIGKILLed at the end if still there.
class serve_process {
  public:
    serve_process(const std::filesystem::path& spool, const std::filesystem::path& out_file,
                  const std::vector<std::string>& extra, const serve_launch& launch = {});
    ~serve_process();
    serve_process(const serve_process&) = delete;
    serve_process& operator=(const serve_process&) = delete;

    int pid() const;
    bool running() const;
    void kill9();
    /// Its exit code; a FAIL with its stdout (after a SIGKILL) when it runs past `limit`.
    int wait(std::chrono::seconds limit);

    std::filesystem::path out;

  private:
    struct impl;
    std::unique_ptr<impl> m_impl;
};

/// `submit --spool SPOOL --config CONFIG --harness fake EXTRA...`, which must succeed; the first
/// line it printed (the job id).
std::string submit_job(const std::filesystem::path& spool, const std::filesystem::path& config,
                       const std::vector<std::string>& extra = {});

/// Polls `ready` every `poll` until it holds; a FAIL naming `what` after `limit`.
void wait_until(const std::function<bool()>& ready, std::chrono::seconds limit,
                const std::string& what,
                std::chrono::milliseconds poll = std::chrono::milliseconds(50));

}  // namespace cuopt::test
