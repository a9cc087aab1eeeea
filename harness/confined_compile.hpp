#pragma once
/// NVRTC in a child process confined (Landlock) to one request's folder, the CUDA toolkit and
/// the libraries NVRTC loads: an `#include` is the one way a kernel's source reads files, so a
/// kernel that includes a secret, /proc/self/environ or another attempt's folder gets a compile
/// error saying the include lies outside its folder, never the file's lines. NVRTC crashing on
/// a hostile source ends only the child. The parent is confined already; this narrows further.

#include <filesystem>
#include <string>

#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

/// Compiles `kernel` in a forked child restricted to `request_folder` (also its working
/// folder, so `#include "header.h"` beside the kernel resolves there). A child that dies is a
/// result with `problem` set; a child that cannot confine itself compiles nothing.
compile_result compile_confined(const kernel_spec& kernel, const std::string& arch,
                                const std::filesystem::path& request_folder);

/// The child's side (`cuda-harness --compile-child`, started by compile_confined alone): reads
/// the job on stdin, confines itself to the job's folder, compiles, writes the result on stdout.
int serve_compile_child();

/// The log with a note under each `cannot open source file "X"` whose X lies outside
/// `request_folder` and the toolkit: the include was refused by the confinement, not missing.
std::string explain_refused_includes(const std::string& log,
                                     const std::filesystem::path& request_folder);

}  // namespace cuopt
