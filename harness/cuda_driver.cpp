#include "harness/cuda_driver.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace cuopt {

namespace {

using get_proc_v2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);

driver_api load_driver() {
    // Only the driver's own soname: the toolkit's link stub (stubs/libcuda.so) must never load.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        throw no_driver_error(std::string("no CUDA driver: cannot load libcuda.so.1 (") +
                              dlerror() + ")");
    // Real drivers (not the toolkit's link stub) export cuGetProcAddress_v2; asking it
    // for each symbol at CUDA_VERSION returns the ABI version cuda.h declares.
    auto get_proc = reinterpret_cast<get_proc_v2>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc)
        throw no_driver_error(
            "no CUDA driver: libcuda.so.1 lacks cuGetProcAddress_v2 (driver older than CUDA 12)");
    driver_api api;
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
#define CUOPT_LOAD(name)                                                                    \
    fn = nullptr;                                                                           \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=         \
            CUDA_SUCCESS ||                                                                 \
        !fn)                                                                                \
        throw no_driver_error(std::string("no CUDA driver: libcuda.so.1 has no ") + #name + \
                              " for CUDA " + std::to_string(CUDA_VERSION));                 \
    api.name = reinterpret_cast<decltype(api.name)>(fn);
    CUOPT_DRIVER_FUNCTIONS(CUOPT_LOAD)
#undef CUOPT_LOAD
    return api;
}

}  // namespace

const driver_api& driver() {
    static driver_api api;
    static std::once_flag once;
    static std::string failure;
    static bool failure_is_device = false;
    std::call_once(once, [] {
        try {
            api = load_driver();
            const CUresult r = api.cuInit(0);
            if (r == CUDA_ERROR_NO_DEVICE) {
                failure = "no CUDA device: cuInit reports no device";
                failure_is_device = true;
            } else if (r != CUDA_SUCCESS) {
                const char* name = nullptr;
                api.cuGetErrorName(r, &name);
                failure = std::string("no CUDA driver: cuInit(0) failed: ") + (name ? name : "?");
            }
        } catch (const no_driver_error& e) {
            failure = e.what();
        }
    });
    if (!failure.empty()) {
        if (failure_is_device) throw no_device_error(failure);
        throw no_driver_error(failure);
    }
    return api;
}

bool cuda_error::sticky() const {
    switch (m_code) {
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_LAUNCH_TIMEOUT:
        case CUDA_ERROR_ASSERT:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
            return true;
        default:
            return false;
    }
}

std::string describe_cu_result(CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    const driver_api& api = driver();
    api.cuGetErrorName(result, &name);
    api.cuGetErrorString(result, &text);
    return std::string(name ? name : "CUDA_ERROR_" + std::to_string(static_cast<int>(result))) +
           " (" + (text ? text : "no description") + ")";
}

void check_cu(CUresult result, const char* statement, const char* file, int line) {
    if (result == CUDA_SUCCESS) return;
    throw cuda_error(result, std::filesystem::path(file).filename().string() + ":" +
                                 std::to_string(line) + ": " + statement +
                                 " failed: " + describe_cu_result(result));
}

bool check_cu_nothrow(CUresult result) noexcept {
    return result == CUDA_SUCCESS;
}

}  // namespace cuopt
