#include "harness/device_info.hpp"

#include <cstdio>

#include "harness/cuda_driver.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

CUdevice get_device(int index) {
    int count = 0;
    CU_CALL(cuDeviceGetCount(&count));
    if (index < 0 || index >= count)
        throw no_device_error("no CUDA device " + std::to_string(index) + ": the driver sees " +
                              std::to_string(count) + " device(s)");
    CUdevice device{};
    CU_CALL(cuDeviceGet(&device, index));
    return device;
}

device_fingerprint query_device(int index) {
    const CUdevice dev = get_device(index);
    device_fingerprint f;
    f.index = index;
    char name[256] = {};
    CU_CALL(cuDeviceGetName(name, sizeof name, dev));
    f.name = name;
    auto attr = [dev](CUdevice_attribute a) {
        int v = 0;
        CU_CALL(cuDeviceGetAttribute(&v, a, dev));
        return v;
    };
    f.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    f.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    f.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    f.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    f.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    f.max_block_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    f.max_block_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    f.max_block_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    f.max_grid_dim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    f.max_grid_dim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    f.max_grid_dim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    f.max_shared_per_block_optin_bytes =
        attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    f.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    f.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    f.pageable_memory_access = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
    f.memory_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                  attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    f.pci_bus_id = pci;
    size_t total = 0;
    CU_CALL(cuDeviceTotalMem(&total, dev));
    f.total_memory_bytes = static_cast<long long>(total);
    CUuuid uuid{};
    CU_CALL(cuDeviceGetUuid(&uuid, dev));
    char text[64];
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::snprintf(text, sizeof text,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    f.uuid = text;
    CU_CALL(cuDriverGetVersion(&f.driver_version));
    f.nvrtc_version = nvrtc_version_string();
    return f;
}

}  // namespace cuopt
