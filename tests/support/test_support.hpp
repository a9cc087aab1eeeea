#pragma once
/// Helpers shared by the tests: a scratch folder per test, file writers, running
/// the real cuda-harness binary, reading its response, and knowing whether a GPU
/// is here (tests that need one skip with a printed reason otherwise).

#include <rapidjson/document.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/child_process.hpp"

namespace cuopt::test {

/// A fresh folder under the system temp dir, removed when the test ends.
class scratch_folder {
  public:
    scratch_folder();
    ~scratch_folder();
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }
    /// Writes text into a file in the folder (creating parents) and returns its path.
    std::filesystem::path write(const std::string& name, const std::string& text) const;
    template <typename T>
    std::filesystem::path write_values(const std::string& name,
                                       const std::vector<T>& values) const {
        return write(name, std::string(reinterpret_cast<const char*>(values.data()),
                                       values.size() * sizeof(T)));
    }

  private:
    std::filesystem::path m_path;
};

struct process_result {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

/// Runs a program with arguments, stdout and stderr together; never throws for a non-zero exit.
process_result run_program(const std::string& binary, const std::vector<std::string>& args);
/// Runs the real cuda-harness ($CUOPT_HARNESS_BINARY overrides the built one).
process_result run_harness(const std::vector<std::string>& args);
/// "optimize" with the pilot's files in `dir` (reference.cu, initial.cu, input_cases.json),
/// the given harness binary and dir/results as the results folder.
std::vector<std::string> optimize_args(const std::filesystem::path& dir,
                                       const std::string& harness);
/// The arguments of a, then of b, then of c.
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b,
                                const std::vector<std::string>& c = {});
/// Runs the real cuda-optimizer.
process_result run_optimizer(const std::vector<std::string>& args);

/// Parses a JSON file and checks it against the named embedded schema (REQUIREs both).
rapidjson::Document read_checked_json(const std::filesystem::path& file, const char* schema);

std::string read_text(const std::filesystem::path& file);
/// `s` as a JSON string literal, quotes and escapes included.
std::string json_string(const std::string& s);

/// Parses a JSON file and checks it against an embedded schema (REQUIREs both).
rapidjson::Document read_response(const std::filesystem::path& file);

template <typename T>
std::vector<T> read_values(const std::filesystem::path& file) {
    const std::string bytes = read_text(file);
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

/// Empty when a CUDA device can be used here; otherwise why not (for SKIP messages).
std::string gpu_unavailable_reason();

/// The cubin cache folder the tests use (never the user's own).
std::string test_cache_dir();

/// y = 2x over n floats: the kernel of the harness binary tests' requests (entry "twice").
inline const std::string k_twice_kernel =
    "extern \"C\" __global__ void twice(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }\n";

/// The settings of a daemon job where the daemon, not the run, is under test: one iteration of
/// two attempts without the evidence stage, which is most of a run's time and has the
/// optimizer's own tests.
inline const std::string k_quick_job = R"("max_iterations": 1, "batch": 2, "no_evidence": true)";

/// A scratch copy of the pilot (reference, a "slow" initial kernel: 2 ms per 256^3 for the
/// fake harness, the manifest) and the optimize flags that run it on fake-harness, with
/// tests/fake-compute-sanitizer.sh as compute-sanitizer.
struct optimizer_fixture {
    scratch_folder dir;
    optimizer_fixture();
    /// The pilot's initial kernel with a fake-harness marker comment.
    std::string kernel(const std::string& marker) const;
    std::vector<std::string> args(std::vector<std::string> extra = {}) const;
    /// results/run-NNN.
    std::filesystem::path run(int n = 1) const;
    /// Writes each {file name, fake-harness marker} into cands/ as a kernel and runs the pilot
    /// with them (--proposer files, two significance rounds, then `extra`).
    process_result run_candidates(const std::vector<std::pair<std::string, std::string>>& kernels,
                                  std::vector<std::string> extra = {}) const;
};

/// Sets an environment variable for one scope (unsets it for a null value), restoring what was
/// there; the binaries a test starts inherit it.
struct scoped_env {
    std::string name;
    std::optional<std::string> old;
    scoped_env(std::string n, const char* value);
    ~scoped_env();
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

/// The verdict history.json gives the attempt with this label.
std::string verdict_of(const rapidjson::Document& history, const std::string& label);

/// A harness that outlived its killed optimizer, as the run's lock sees it: `/bin/sleep
/// SECONDS` holding FILE's flock (handed down to it, as a run hands RUN/.lock to its harnesses),
/// and in FILE a pid that names no process (as the killed optimizer left it).
std::unique_ptr<cuopt::child_process> straggler_holding(const std::filesystem::path& file,
                                                        const std::string& seconds);

}  // namespace cuopt::test

/// Skips the rest of a [gpu] test with the reason printed, when no GPU is usable.
#define REQUIRE_GPU_OR_SKIP()                                                   \
    do {                                                                        \
        const std::string why_no_gpu = ::cuopt::test::gpu_unavailable_reason(); \
        if (!why_no_gpu.empty()) {                                              \
            WARN("skipped: " << why_no_gpu);                                    \
            return;                                                             \
        }                                                                       \
    } while (0)
