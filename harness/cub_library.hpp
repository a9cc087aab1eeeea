#pragma once
/// CUB, for segmented_sum vendor requests, through the bundled launcher libcuopt_cub.so (built
/// by nvcc from harness/vendor/cub_segmented_sum.cu beside cuda-harness): CUB is a header
/// library, so this small shared library is what holds its compiled kernels. Loaded at run time
/// like cuBLAS (never linked): the file beside the harness binary first, then the name alone
/// through the loader's search path; one table of its C entry points, and the message that
/// names every place tried when none loads (library_loader).

#include <string>
#include <vector>

#include "harness/library_loader.hpp"
#include "harness/vendor/cuopt_cub.h"

namespace cuopt {

struct cub_api {
    std::string file;     // the path (or name) that loaded, e.g. "/opt/cuopt/libcuopt_cub.so"
    std::string version;  // CUB's, "3.0.1", from cuopt_cub_version
    decltype(&::cuopt_cub_row_sum_f32) row_sum_f32 = nullptr;
    decltype(&::cuopt_cub_version) get_version = nullptr;
    decltype(&::cuopt_cub_error_name) error_name = nullptr;
    decltype(&::cuopt_cub_error_string) error_string = nullptr;
};

/// The launcher's file name, "libcuopt_cub.so".
inline constexpr const char* k_cub_library_name = "libcuopt_cub.so";

/// Where the launcher is looked for: the harness binary's folder, and nowhere else.
const std::vector<std::string>& cub_library_paths();

/// Loads the first of `paths` that opens and has every entry point. Throws
/// vendor_library_error("CUB launcher (libcuopt_cub.so) not found: tried /x/libcuopt_cub.so
/// (why), libcuopt_cub.so (why)").
cub_api load_cub(const std::vector<std::string>& paths = cub_library_paths());

/// "3.0.1" from CUB_VERSION's encoding (major * 100000 + minor * 100 + patch).
std::string cub_version_text(int version);

/// "cudaErrorInvalidValue (invalid argument)", or the number.
std::string describe_cub_status(const cub_api& api, int status);

}  // namespace cuopt
