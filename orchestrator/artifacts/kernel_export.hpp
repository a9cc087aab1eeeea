#pragma once
/// A winner as C++ a user builds into their own program: one self-contained header with the
/// kernel (its defines baked in) and a host launcher that computes grid, block and dynamic
/// shared memory from the manifest's expressions with the same exact arithmetic the run used
/// (integer_expression_cpp), checks the scalar relations the manifest implies, and launches on
/// a stream; plus a CMake function that compiles it the way the run did.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

/// What the header is made of: best.json and best.cu of a run, and where they came from.
struct exported_kernel {
    std::string entry;   // the kernel's name (a C identifier)
    std::string source;  // the kernel source (best.cu: its #defines first)
    std::vector<std::string> compile_options;
    std::map<std::string, std::int64_t> tunables;  // the winner's values
    launch_expressions launch;                     // the winner's launch
    std::string arch;                              // "sm_90": the run's GPU
    std::vector<std::string> about;                // comment lines: run, verdict, speedup, date
};

/// The C++ type a buffer of `t` holds in a kernel (`__nv_bfloat16` for bf16).
std::string cuda_type_name(dtype t);

/// Every parameter the manifest's cases name.
std::set<std::string> case_params(const manifest& m);
/// The case parameter an integer scalar argument carries (its value is exactly that name), or "".
std::string carried_param(const manifest_arg& a, const std::set<std::string>& params);

/// The case parameters the launcher cannot read from a scalar argument (one whose value is
/// exactly the parameter's name): each becomes a `long long` parameter of its own, after the
/// kernel's arguments, in name order.
std::vector<std::string> extra_launch_params(const manifest& m);

/// ENTRY.cuh: the kernel, then in namespace cuopt_export_ENTRY the launch arithmetic, and
///   cudaError_t ENTRY_launch_shape(args..., [extra params,] dim3* grid, dim3* block,
///                                  size_t* shared_bytes);
///   cudaError_t launch_ENTRY(args..., [extra params,] cudaStream_t stream);
/// Both return cudaErrorInvalidValue when a scalar contradicts the manifest (k != the
/// expression it stands for) or a launch dimension is not a positive whole number.
std::string cuda_header(const exported_kernel& k, const manifest& m);

/// ENTRY.cmake: cuopt_export_ENTRY(TARGET) adds the header's folder, the run's architecture
/// (SASS and PTX) and its compile options to a CUDA target.
std::string cmake_snippet(const exported_kernel& k);

}  // namespace cuopt
