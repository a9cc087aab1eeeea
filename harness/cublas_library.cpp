#include "harness/cublas_library.hpp"

#include <dlfcn.h>

#include <type_traits>

namespace cuopt {

namespace {

// Resolves every entry point of `api` from `lib`; the first one missing, or "".
std::string resolve(void* lib, cublas_api& api) {
    std::string missing;
    auto get = [&](auto& fn, const char* symbol) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
        if (!fn && missing.empty()) missing = symbol;
    };
    get(api.create, "cublasCreate_v2");
    get(api.destroy, "cublasDestroy_v2");
    get(api.set_stream, "cublasSetStream_v2");
    get(api.set_math_mode, "cublasSetMathMode");
    get(api.sgemm, "cublasSgemm_v2");
    get(api.dgemm, "cublasDgemm_v2");
    get(api.gemm_ex, "cublasGemmEx");
    get(api.get_property, "cublasGetProperty");
    get(api.status_name, "cublasGetStatusName");
    get(api.status_string, "cublasGetStatusString");
    return missing;
}

std::string version_of(const cublas_api& api) {
    int major = 0, minor = 0, patch = 0;
    api.get_property(MAJOR_VERSION, &major);
    api.get_property(MINOR_VERSION, &minor);
    api.get_property(PATCH_LEVEL, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

const std::vector<std::string>& cublas_sonames() {
    static const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12",
                                                   "libcublas.so"};
    return names;
}

cublas_api load_cublas(const std::vector<std::string>& sonames) {
    std::string tried;
    for (const std::string& name : sonames) {
        if (!tried.empty()) tried += ", ";
        void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            tried += name + " (" + (why ? why : "cannot be opened") + ")";
            continue;
        }
        cublas_api api;
        const std::string missing = resolve(lib, api);
        if (!missing.empty()) {
            tried += name + " (it has no " + missing + ")";
            dlclose(lib);
            continue;
        }
        api.file = name;  // the library stays loaded for the life of the process
        api.version = version_of(api);
        return api;
    }
    throw vendor_library_error("cuBLAS not found: tried " + tried);
}

std::string describe_cublas_status(const cublas_api& api, cublasStatus_t status) {
    const char* name = api.status_name ? api.status_name(status) : nullptr;
    const char* text = api.status_string ? api.status_string(status) : nullptr;
    return (name ? std::string(name)
                 : "cuBLAS status " + std::to_string(static_cast<int>(status))) +
           " (" + (text ? text : "no description") + ")";
}

}  // namespace cuopt
