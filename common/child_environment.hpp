#pragma once
/// The environment of every child that runs untrusted kernels (the harness, its workers,
/// compute-sanitizer and ncu in front of it): an allow-list of what a CUDA program and
/// NVIDIA's tools read, so the optimizer's model keys and cloud credentials never reach a
/// kernel (which can read its own /proc/self/environ). Built before fork, handed to execve.

#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

/// Whether the variable `name` is passed to such a child: PATH, HOME, LANG, LC_*, TMPDIR,
/// XDG_CACHE_HOME, LD_LIBRARY_PATH, CUDA_* and the toolkit's roots, CUOPT_* (the project's own
/// and its test doubles'), NV_COMPUTE_PROFILER_* and NV_COMPUTE_SANITIZER_* (ncu's and
/// compute-sanitizer's settings); never a name that says KEY, TOKEN, SECRET, PASSW, AUTH or
/// CREDENTIAL, whatever its prefix (a user's CUOPT_API_KEY stays home too).
bool passed_to_child(std::string_view name);

/// The "NAME=value" entries of `environment` (null-terminated, as ::environ) that
/// passed_to_child admits, in their order.
std::vector<std::string> scrubbed_entries(const char* const* environment);

/// A scrubbed copy of this process's environment as execve takes it; it owns the strings
/// envp() points into, so it must outlive the fork and exec that use it.
class scrubbed_environment {
  public:
    scrubbed_environment();
    scrubbed_environment(const scrubbed_environment&) = delete;
    scrubbed_environment& operator=(const scrubbed_environment&) = delete;
    char** envp() { return m_pointers.data(); }

  private:
    std::vector<std::string> m_entries;
    std::vector<char*> m_pointers;  // into m_entries, then nullptr
};

}  // namespace cuopt
