#pragma once
/// The device fingerprint written into every response (and by --device-info): what
/// a reader needs to know which GPU, driver and compiler produced a timing.

#include <cuda.h>

#include <string>

namespace cuopt {

struct device_fingerprint {
    int index = 0;
    std::string name;
    std::string uuid;
    std::string pci_bus_id;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    long long l2_bytes = 0;
    long long total_memory_bytes = 0;
    int max_threads_per_block = 0;
    int max_block_dim[3] = {0, 0, 0};
    int max_grid_dim[3] = {0, 0, 0};
    int max_shared_per_block_optin_bytes = 0;
    int sm_clock_khz = 0;      // maximum SM clock the driver reports
    int memory_clock_khz = 0;  // peak memory clock
    // Kernels can read ordinary (pageable) host memory (HMM, ATS): nothing secret may stay in
    // this process's memory while a candidate runs.
    bool pageable_memory_access = false;
    int memory_bus_width_bits = 0;
    int driver_version = 0;     // e.g. 13000
    std::string nvrtc_version;  // e.g. "13.0"
    bool simulated = false;     // a stand-in harness (fake-harness): no real GPU behind it

    std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

/// Queries device `index` through the driver (throws no_device_error if absent).
device_fingerprint query_device(int index);
CUdevice get_device(int index);

}  // namespace cuopt
