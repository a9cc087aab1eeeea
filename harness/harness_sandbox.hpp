#pragma once
/// What cuda-harness may touch once it confines itself (Landlock), in one place: the folder
/// its requests come from (read and write), its cache, the CUDA toolkit, the folders shared
/// libraries load from (and the CUB launcher beside the binary), and what the NVIDIA driver, CUPTI
/// and NVML read (their /dev nodes, /proc/driver/nvidia, the GPU's /sys entries and a few of the
/// process's own /proc files, found on an H200 with driver 580, not guessed). Compiles get less:
/// see compile_rules. Under ncu (an injected profiler) the process stays unconfined on purpose; its
/// compiles do not.

#include <filesystem>
#include <optional>
#include <vector>

#include "common/landlock.hpp"
#include "common/sandbox_rules.hpp"
#include "harness/harness_options.hpp"

namespace cuopt {

/// The CUDA toolkit's root and include folders (read only).
std::vector<landlock_rule> toolkit_rules();

/// A whole harness process: `root` and every folder of `writable` read-write, the toolkit
/// and library folders read-only, and the driver's files unless `compile_only`.
std::vector<landlock_rule> harness_rules(const std::filesystem::path& root,
                                         const std::vector<std::filesystem::path>& writable,
                                         bool compile_only);

/// One compile: the request's folder, the toolkit's headers, NVRTC's builtins library and the
/// loader's cache, all read-only. Nothing else: not libcuda either, so NVRTC compiles without
/// the driver, as on a machine without a GPU.
std::vector<landlock_rule> compile_rules(const std::filesystem::path& request_folder);

/// This program's own file (/proc/self/exe resolved): confined compiles run it again.
const std::filesystem::path& harness_executable();

/// The folder tree a harness run may read and write: --root, else the request's folder (one
/// request) or the current folder (--worker); canonical.
std::filesystem::path harness_root(const harness_options& o);

/// Confines this process for `o` before any request is read (its cache folder made first), and
/// remembers how for every response. --unconfined, or a kernel without Landlock, gives mode
/// "none" with the reason, for the caller to say in one line.
const confinement& confine_harness(const harness_options& o);

/// confine_harness, saying on stderr in one line where the process stays unconfined; false
/// (after saying why) when the kernel refused the confinement itself.
bool confine_harness_or_say(const harness_options& o);

/// Whether compiles run in a confined child: where this process is confined, and also under
/// a profiler that injects itself (ncu), which leaves the process itself unconfined on purpose.
bool compiles_confined();

/// How this process is confined (mode "none", reason "not confined" before confine_harness).
const confinement& process_confinement();

/// "" when `path` lies inside the confined root (or the process is not confined), else one
/// line saying it is outside (a worker's request or response elsewhere).
std::string outside_root_problem(const std::filesystem::path& path, const char* what);

}  // namespace cuopt
