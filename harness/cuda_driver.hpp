#pragma once
/// The CUDA Driver API, loaded at run time with dlopen so cuda-harness starts on a
/// machine without a driver (compile-only, bad-request checks) and says plainly
/// "no CUDA driver" / "no CUDA device" there. One table of entry points, one check
/// wrapper that captures file:line, the statement, the error's name and string.

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace cuopt {

// Every driver entry point the harness uses; the names are cuda.h's, so its macros
// (cuMemAlloc -> cuMemAlloc_v2) pick the same ABI version we ask the driver for. Not
// cuCtxSynchronize: asked for at CUDA 13.0, the driver hands back cuCtxSynchronize_v2,
// which takes a context that cuda.h's cuCtxSynchronize(void) never passes (compute-sanitizer
// saw "context is destroyed" on the H200); synchronise a stream instead.
// clang-format off (an X-macro list: one entry per line)
#define CUOPT_DRIVER_FUNCTIONS(X)  \
    X(cuInit)                      \
    X(cuDriverGetVersion)          \
    X(cuGetErrorName)              \
    X(cuGetErrorString)            \
    X(cuDeviceGetCount)            \
    X(cuDeviceGet)                 \
    X(cuDeviceGetName)             \
    X(cuDeviceGetAttribute)        \
    X(cuDeviceTotalMem)            \
    X(cuDeviceGetUuid)             \
    X(cuDevicePrimaryCtxRetain)    \
    X(cuDevicePrimaryCtxRelease)   \
    X(cuCtxSetCurrent)             \
    X(cuCtxResetPersistingL2Cache) \
    X(cuModuleLoadData)            \
    X(cuModuleUnload)              \
    X(cuModuleGetFunction)         \
    X(cuFuncGetAttribute)          \
    X(cuFuncSetAttribute)          \
    X(cuFuncGetParamInfo)          \
    X(cuLaunchKernel)              \
    X(cuMemAlloc)                  \
    X(cuMemFree)                   \
    X(cuMemGetInfo)                \
    X(cuMemcpyHtoD)                \
    X(cuMemcpyDtoH)                \
    X(cuMemcpyDtoDAsync)           \
    X(cuMemcpyHtoDAsync)           \
    X(cuMemsetD8Async)             \
    X(cuMemsetD16Async)            \
    X(cuMemsetD32Async)            \
    X(cuMemHostAlloc)              \
    X(cuMemFreeHost)               \
    X(cuMemHostGetDevicePointer)   \
    X(cuStreamCreate)              \
    X(cuStreamDestroy)             \
    X(cuStreamSynchronize)         \
    X(cuEventCreate)               \
    X(cuEventDestroy)              \
    X(cuEventRecord)               \
    X(cuEventSynchronize)          \
    X(cuEventElapsedTime)
// clang-format on

struct driver_api {
#define CUOPT_DECLARE(name) decltype(&::name) name = nullptr;
    CUOPT_DRIVER_FUNCTIONS(CUOPT_DECLARE)
#undef CUOPT_DECLARE
};

/// libcuda missing, too old, or cuInit failing for want of a driver.
class no_driver_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// cuInit saw no device, or the requested index does not exist.
class no_device_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A failed driver call: what() reads "file:line: cuX(...) failed: NAME (string)".
class cuda_error : public std::runtime_error {
  public:
    cuda_error(CUresult code, const std::string& message)
        : std::runtime_error(message), m_code(code) {}
    CUresult code() const { return m_code; }
    /// True for errors that poison the context (illegal address, launch failure, ...).
    bool sticky() const;

  private:
    CUresult m_code;
};

/// Loads libcuda once and calls cuInit(0); throws no_driver_error / no_device_error.
const driver_api& driver();

/// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string describe_cu_result(CUresult result);

void check_cu(CUresult result, const char* statement, const char* file, int line);
/// For destructors: never throws, returns whether the call succeeded.
bool check_cu_nothrow(CUresult result) noexcept;

}  // namespace cuopt

#define CU_CALL(call) ::cuopt::check_cu(::cuopt::driver().call, #call, __FILE__, __LINE__)
#define CU_CALL_NOTHROW(call) ::cuopt::check_cu_nothrow(::cuopt::driver().call)
