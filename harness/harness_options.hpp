#pragma once
/// cuda-harness's command line as a plain struct: each option once, with its
/// default and one sentence of help (the parser in main.cpp reads them from here).

#include <filesystem>
#include <string>

namespace cuopt {

struct harness_options {
    std::string request;   // REQUEST.json to run
    std::string response;  // where to write the response; default: response.json beside the request
    bool device_info = false;   // print the device fingerprint as JSON and exit
    int device = 0;             // device index for --device-info (a request names its own)
    bool measure = false;       // --device-info: also measure copy bandwidth, add peak rates
    bool remeasure = false;     // --measure: ignore a cached measurement (implies --measure)
    bool compile_only = false;  // NVRTC only: no driver or GPU needed
    std::string arch;  // target for --compile-only (default: the device's, or sm_90 without one)
    std::string cubin_out;  // --compile-only: also write the compiled cubin here (a disassembler's)
    bool no_cache = false;  // always run NVRTC, never read or write the cubin cache
    std::string cache_dir;  // cubin cache folder (default: $CUDA_HARNESS_CACHE_DIR or
                            // ~/.cache/cuda-harness)
    bool quiet = false;     // no summary line on stderr
    bool no_stream_hold = false;  // don't hold the stream while queueing timed launches (profilers)
    bool worker = false;          // serve request paths from stdin, one reply line each on stdout
    std::string root;  // the folder tree the harness may read and write once confined (default:
                       // the request's folder; a worker's: its current folder)
    bool unconfined = false;  // do not confine (Landlock) this process: trusted kernels only
};

/// Where the response goes: --response, else response.json beside the request.
inline std::filesystem::path response_path(const harness_options& o) {
    return o.response.empty() ? std::filesystem::absolute(o.request).parent_path() / "response.json"
                              : std::filesystem::path(o.response);
}

}  // namespace cuopt
