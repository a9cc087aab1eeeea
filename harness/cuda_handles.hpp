#pragma once
/// Move-only owners for the raw Driver API handles the harness holds: the primary
/// context, a stream, events, device and pinned host memory, a module. Each checks
/// on construction and releases without throwing.

#include <atomic>
#include <cstddef>
#include <utility>

#include "harness/cuda_driver.hpp"

namespace cuopt {

template <typename Handle, typename Traits>
class unique_handle {
  public:
    unique_handle() = default;
    explicit unique_handle(Handle h) : m_handle(h) {}
    unique_handle(unique_handle&& o) noexcept : m_handle(std::exchange(o.m_handle, Handle{})) {}
    unique_handle& operator=(unique_handle&& o) noexcept {
        if (this != &o) {
            reset();
            m_handle = std::exchange(o.m_handle, Handle{});
        }
        return *this;
    }
    unique_handle(const unique_handle&) = delete;
    unique_handle& operator=(const unique_handle&) = delete;
    ~unique_handle() { reset(); }
    Handle get() const { return m_handle; }
    void reset() noexcept {
        if (m_handle) Traits::release(m_handle);
        m_handle = Handle{};
    }

  private:
    Handle m_handle{};
};

struct stream_traits {
    static void release(CUstream s) noexcept { CU_CALL_NOTHROW(cuStreamDestroy(s)); }
};
struct event_traits {
    static void release(CUevent e) noexcept { CU_CALL_NOTHROW(cuEventDestroy(e)); }
};
struct module_traits {
    static void release(CUmodule m) noexcept { CU_CALL_NOTHROW(cuModuleUnload(m)); }
};
struct device_memory_traits {
    static void release(CUdeviceptr p) noexcept { CU_CALL_NOTHROW(cuMemFree(p)); }
};
struct host_memory_traits {
    static void release(void* p) noexcept { CU_CALL_NOTHROW(cuMemFreeHost(p)); }
};

using stream_handle = unique_handle<CUstream, stream_traits>;
using event_handle = unique_handle<CUevent, event_traits>;
using module_handle = unique_handle<CUmodule, module_traits>;

inline stream_handle make_stream() {
    CUstream s{};
    CU_CALL(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return stream_handle(s);
}

inline event_handle make_event() {
    CUevent e{};
    CU_CALL(cuEventCreate(&e, CU_EVENT_DEFAULT));
    return event_handle(e);
}

inline module_handle load_module(const void* image) {
    CUmodule m{};
    CU_CALL(cuModuleLoadData(&m, image));
    return module_handle(m);
}

/// Whether freed device memory is zeroed first: on in a worker (cuda-harness --worker), where
/// the next request's kernel shares this context and must never find an earlier request's
/// inputs or outputs in memory it was not given. A one-shot harness exits instead.
inline std::atomic<bool>& scrub_freed_memory() {
    static std::atomic<bool> on{false};
    return on;
}

/// Device memory of a known size; zeroed before it is freed where scrub_freed_memory() says so.
class device_buffer {
  public:
    device_buffer() = default;
    explicit device_buffer(std::size_t bytes) : m_bytes(bytes ? bytes : 1) {
        CUdeviceptr p{};
        CU_CALL(cuMemAlloc(&p, m_bytes));
        m_ptr = unique_handle<CUdeviceptr, device_memory_traits>(p);
    }
    device_buffer(device_buffer&& o) noexcept
        : m_ptr(std::move(o.m_ptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
    device_buffer& operator=(device_buffer&& o) noexcept {
        if (this != &o) {
            scrub();
            m_ptr = std::move(o.m_ptr);
            m_bytes = std::exchange(o.m_bytes, 0);
        }
        return *this;
    }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    ~device_buffer() { scrub(); }

    CUdeviceptr get() const { return m_ptr.get(); }
    std::size_t bytes() const { return m_bytes; }

  private:
    // Every stream that used the buffer has finished with it by now (a case synchronises its
    // stream before its buffers go); the zeros go through the legacy default stream, which
    // is waited for, so they land before cuMemFree hands the range out again.
    void scrub() noexcept {
        if (!m_ptr.get() || !scrub_freed_memory()) return;
        CU_CALL_NOTHROW(cuMemsetD8Async(m_ptr.get(), 0, m_bytes, nullptr));
        CU_CALL_NOTHROW(cuStreamSynchronize(nullptr));
    }

    unique_handle<CUdeviceptr, device_memory_traits> m_ptr;
    std::size_t m_bytes = 0;
};

/// Pinned host memory mapped into the device's address space (for the stream-hold flag).
class mapped_host_buffer {
  public:
    explicit mapped_host_buffer(std::size_t bytes) {
        void* p = nullptr;
        CU_CALL(cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
        m_ptr = unique_handle<void*, host_memory_traits>(p);
        CU_CALL(cuMemHostGetDevicePointer(&m_device_ptr, p, 0));
    }
    void* host() const { return m_ptr.get(); }
    CUdeviceptr device() const { return m_device_ptr; }

  private:
    unique_handle<void*, host_memory_traits> m_ptr;
    CUdeviceptr m_device_ptr{};
};

/// Retains the device's primary context and makes it current for this thread.
class primary_context {
  public:
    explicit primary_context(CUdevice device) : m_device(device) {
        CU_CALL(cuDevicePrimaryCtxRetain(&m_context, device));
        CU_CALL(cuCtxSetCurrent(m_context));
    }
    primary_context(const primary_context&) = delete;
    primary_context& operator=(const primary_context&) = delete;
    ~primary_context() { CU_CALL_NOTHROW(cuDevicePrimaryCtxRelease(m_device)); }
    CUcontext get() const { return m_context; }

  private:
    CUdevice m_device{};
    CUcontext m_context{};
};

}  // namespace cuopt
