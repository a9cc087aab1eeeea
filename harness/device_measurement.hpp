#pragma once
/// `cuda-harness --device-info --measure`: what the device can do, for the optimizer's
/// speed-of-light floor. Its copy bandwidth is measured (device-to-device copies timed
/// with CUDA events, the median, read + write counted) and cached per device UUID and
/// driver version in the cubin cache folder; its peak arithmetic rates come from
/// peak_rates' table.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "harness/device_info.hpp"
#include "harness/peak_rates.hpp"

namespace cuopt {

struct copy_bandwidth {
    double gbps = 0;          // 2 x bytes / the median copy time (each copy reads and writes)
    std::uint64_t bytes = 0;  // one copy's size
    int repetitions = 0;      // timed copies, of which the median
    bool cached = false;      // read from the cache, not measured by this process
};

struct device_measurement {
    copy_bandwidth bandwidth;
    std::optional<peak_tflops> peaks;  // nullopt for an arch the table does not know
    std::string peak_note;
};

/// The size of one timed copy: 512 MiB, or a quarter of the free memory if that is less
/// (two buffers of it), in whole MiB, at least 1 MiB.
std::uint64_t copy_bytes_for(std::uint64_t free_bytes);

/// Times `repetitions` copies (after warm-ups) in the device's primary context.
copy_bandwidth measure_copy_bandwidth(int device_index, int repetitions);

/// Where a device's measurement is cached inside `folder` (one file per UUID and driver).
std::filesystem::path bandwidth_cache_file(const std::filesystem::path& folder,
                                           const device_fingerprint& device);
/// The cached measurement, if the file exists, reads cleanly and names this device and driver.
std::optional<copy_bandwidth> read_cached_bandwidth(const std::filesystem::path& file,
                                                    const device_fingerprint& device);
/// Stores a measurement; a failure to write is ignored (the cache is an optimisation).
void write_cached_bandwidth(const std::filesystem::path& file, const device_fingerprint& device,
                            const copy_bandwidth& measured) noexcept;

/// The cached bandwidth unless `remeasure` or there is no cache folder, else a fresh
/// measurement (stored when there is a folder); plus the peaks.
device_measurement measure_device(const device_fingerprint& device,
                                  const std::optional<std::filesystem::path>& cache_folder,
                                  bool remeasure);

/// How the bandwidth was measured, in one sentence (the JSON's "method").
std::string copy_method(const copy_bandwidth& measured);

}  // namespace cuopt
