#pragma once
/// Compiles one kernel to a cubin with NVRTC for an exact sm_XY: toolkit headers on
/// the include path, ptxas's resource report parsed from the log (registers, stack,
/// spills, shared), the full log kept even on success, and the entry's lowered name
/// found through a name expression so C++ (and templated) kernels work too.

#include <optional>
#include <string>
#include <vector>

#include "common/request.hpp"

namespace cuopt {

/// What ptxas said about the entry function (-Xptxas -v).
struct ptxas_report {
    int registers = -1;
    long long stack_frame_bytes = -1;
    long long spill_store_bytes = -1;
    long long spill_load_bytes = -1;
    long long static_shared_bytes = -1;
    long long constant_bytes = -1;
};

struct compile_result {
    bool ok = false;
    bool entry_missing = false;  // the entry name is not defined in the source
    std::string
        problem;       // why there is no cubin when the source itself did not fail (a bad option)
    std::string log;   // NVRTC's program log, whole
    std::string arch;  // "sm_90"
    std::vector<std::string> options;  // exactly what NVRTC was given
    std::string lowered_name;          // the symbol to look up in the module
    std::vector<char> cubin;
    std::string cubin_sha256;
    ptxas_report ptxas;
    double wall_ms = 0.0;
    bool cache_hit = false;
    std::string cache_key;
    std::string nvrtc_version;  // of the NVRTC that compiled it, "13.0" (set by compile_cached)
};

/// Thrown for NVRTC failures that are not compile errors (out of memory, bad option list).
class nvrtc_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The NVRTC options for a kernel: arch, --std (unless given), include path, -Xptxas -v,
/// defines, then the user's own options.
std::vector<std::string> nvrtc_options(const kernel_spec& kernel, const std::string& arch);

/// Compiles; a compile error is a result with ok == false, not an exception.
compile_result compile_kernel(const kernel_spec& kernel, const std::string& arch);

/// Parses ptxas -v lines for one function from an NVRTC log.
ptxas_report parse_ptxas_report(const std::string& log, const std::string& lowered_name);

/// The error lines of an NVRTC log (`k.cu(12): error: ...`) in order, without those of the
/// entry's name expression (`__nv_name_map`), each cut to a readable length.
std::vector<std::string> compile_error_lines(const std::string& log);

/// A compile error in a few lines: which source failed for which arch, how many errors, where
/// the whole log is (`log_location`), then the first `max_lines` error lines, indented.
std::string describe_compile_failure(const std::string& source_name, const std::string& arch,
                                     const std::string& log, const std::string& log_location,
                                     std::size_t max_lines = 3);

/// "" when NVRTC can compile for `arch` (sm_XY, with NVRTC's `a` or `f` suffix or none), else
/// why not, naming the architectures this NVRTC knows (works without a driver).
std::string check_arch(const std::string& arch);

/// NVRTC's version as "major.minor" (works without a driver).
std::string nvrtc_version_string();

/// Loads NVRTC (libnvrtc.so.<the CUDA major version>) where it is not loaded yet, and gives the
/// path it loaded from. It is never linked: a process that compiles nothing never maps its
/// 100 MB, and one that will compile loads it before it confines itself. Every function here
/// that calls NVRTC loads it the same way; each throws nvrtc_error naming the library and
/// why when it cannot be loaded.
const std::string& nvrtc_library();

/// The toolkit include folder used for #include <cuda_fp16.h> and friends.
std::string toolkit_include_dir();

}  // namespace cuopt
