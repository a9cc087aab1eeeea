#pragma once
/// The GPU's state around each case's timed loop, read through NVML (libnvidia-ml.so.1,
/// loaded at run time like the driver): clocks, temperature, power and the reasons the
/// driver is holding the clocks down. Read only: the harness never changes clocks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

struct gpu_state {
    unsigned sm_clock_mhz = 0, mem_clock_mhz = 0, temperature_c = 0;
    double power_w = 0, power_limit_w = 0;
    std::uint64_t throttle_mask = 0;  // NVML's clocks-event (throttle) reason bits
};

/// NVML's names for the reason bits set in `mask`, lowest bit first ("sw_power_cap", ...).
std::vector<std::string> throttle_reason_names(std::uint64_t mask);
/// The reasons that slow a measurement down (power cap, thermal, hardware slowdown,
/// power brake), as opposed to idle or a clock the user set.
std::uint64_t slowing_reasons(std::uint64_t mask);

/// Loads and initialises NVML once per process ("" when it is usable, else why not). Safe to
/// start early on another thread: nvmlInit can take tens of milliseconds.
const std::string& load_gpu_monitor();

class gpu_monitor {
  public:
    /// Loads NVML and finds the device by UUID ("GPU-..."), else by PCI bus id. Never throws:
    /// where NVML is missing or the device unknown, available() is false and note() says why.
    gpu_monitor(const std::string& uuid, const std::string& pci_bus_id);

    bool available() const { return m_device != nullptr; }
    const std::string& note() const { return m_note; }
    /// The state now; none where NVML is unavailable or a query fails.
    std::optional<gpu_state> read() const;

  private:
    void* m_device = nullptr;  // nvmlDevice_t
    std::string m_note;
};

}  // namespace cuopt
