#include "harness/cub_library.hpp"

#include "harness/harness_sandbox.hpp"

namespace cuopt {

namespace {

void resolve(symbol_resolver& lib, cub_api& api) {
    lib.get(api.row_sum_f32, "cuopt_cub_row_sum_f32");
    lib.get(api.get_version, "cuopt_cub_version");
    lib.get(api.error_name, "cuopt_cub_error_name");
    lib.get(api.error_string, "cuopt_cub_error_string");
}

}  // namespace

const std::vector<std::string>& cub_library_paths() {
    // Beside the binary only: no system ships this name, so a search of the loader's path could
    // only find a planted or stale copy, which would run in the harness with the GPU.
    static const std::vector<std::string> paths = {
        (harness_executable().parent_path() / k_cub_library_name).string()};
    return paths;
}

cub_api load_cub(const std::vector<std::string>& paths) {
    cub_api api;
    api.file = load_first_library("CUB launcher (" + std::string(k_cub_library_name) + ")", paths,
                                  [&api](symbol_resolver& lib) { resolve(lib, api); });
    api.version = cub_version_text(api.get_version());
    return api;
}

std::string cub_version_text(int version) {
    return std::to_string(version / 100000) + "." + std::to_string(version / 100 % 1000) + "." +
           std::to_string(version % 100);
}

std::string describe_cub_status(const cub_api& api, int status) {
    return describe_library_status(api.error_name ? api.error_name(status) : nullptr,
                                   api.error_string ? api.error_string(status) : nullptr,
                                   "the CUDA runtime", status);
}

}  // namespace cuopt
