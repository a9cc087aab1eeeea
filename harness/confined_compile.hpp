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

/// Compiles `kernel` in a fresh `cuda-harness --compile-child` restricted to `request_folder`
/// (also its working folder, so `#include "header.h"` beside the kernel resolves there). A
/// child that dies is a result with `problem` set; one that cannot confine itself compiles
/// nothing.
compile_result compile_confined(const kernel_spec& kernel, const std::string& arch,
                                const std::filesystem::path& request_folder);

/// The child's side (`cuda-harness --compile-child`, started by compile_confined alone): reads
/// the job on stdin, confines itself to the job's folder, compiles, writes the result on stdout.
int serve_compile_child();

/// The log with every `cannot open source file "X"` line saying the same thing, whether X is
/// missing or Landlock refused it (outside the folder and the toolkit): never which.
std::string explain_refused_includes(const std::string& log);

}  // namespace cuopt
