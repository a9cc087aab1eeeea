#include "harness/gpu_state.hpp"

#include <dlfcn.h>

#include <array>

namespace cuopt {

namespace {

// NVML's ABI, declared here because the toolkit ships no nvml.h: the entry points the
// harness reads, with the enum values of nvml.h (stable across driver releases).
using nvml_return = int;
using nvml_device = void*;
constexpr nvml_return k_nvml_success = 0;
constexpr int k_clock_sm = 1, k_clock_mem = 2, k_temperature_gpu = 0;

struct nvml_api {
    nvml_return (*init)() = nullptr;
    nvml_return (*by_uuid)(const char*, nvml_device*) = nullptr;
    nvml_return (*by_pci)(const char*, nvml_device*) = nullptr;
    nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
    nvml_return (*power)(nvml_device, unsigned*) = nullptr;
    nvml_return (*power_limit)(nvml_device, unsigned*) = nullptr;
    nvml_return (*reasons)(nvml_device, unsigned long long*) = nullptr;
    const char* (*error_string)(nvml_return) = nullptr;
};

nvml_api g_nvml;

// nvml.h's nvmlClocksEventReason* bits, lowest first.
constexpr std::array<const char*, 9> k_reason_names{"gpu_idle",
                                                    "applications_clocks_setting",
                                                    "sw_power_cap",
                                                    "hw_slowdown",
                                                    "sync_boost",
                                                    "sw_thermal_slowdown",
                                                    "hw_thermal_slowdown",
                                                    "hw_power_brake_slowdown",
                                                    "display_clock_setting"};
constexpr std::uint64_t k_slowing_mask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

template <typename F>
void bind(void* lib, F* slot, const char* name, const char* fallback = nullptr) {
    void* fn = dlsym(lib, name);
    if (!fn && fallback) fn = dlsym(lib, fallback);
    *slot = reinterpret_cast<F>(fn);
}

// Loads and initialises NVML once; "" on success, else why not.
std::string load_nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return "NVML not found (libnvidia-ml.so.1 comes with the driver): no GPU state";
    bind(lib, &g_nvml.init, "nvmlInit_v2");
    bind(lib, &g_nvml.by_uuid, "nvmlDeviceGetHandleByUUID");
    bind(lib, &g_nvml.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(lib, &g_nvml.clock, "nvmlDeviceGetClockInfo");
    bind(lib, &g_nvml.temperature, "nvmlDeviceGetTemperature");
    bind(lib, &g_nvml.power, "nvmlDeviceGetPowerUsage");
    bind(lib, &g_nvml.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(lib, &g_nvml.reasons, "nvmlDeviceGetCurrentClocksEventReasons",
         "nvmlDeviceGetCurrentClocksThrottleReasons");
    bind(lib, &g_nvml.error_string, "nvmlErrorString");
    if (!g_nvml.init || !g_nvml.by_uuid || !g_nvml.clock || !g_nvml.temperature || !g_nvml.power ||
        !g_nvml.power_limit || !g_nvml.reasons || !g_nvml.error_string)
        return "NVML too old: libnvidia-ml.so.1 lacks an entry point the harness reads";
    const nvml_return r = g_nvml.init();
    if (r != k_nvml_success)
        return std::string("NVML unusable: nvmlInit failed: ") + g_nvml.error_string(r);
    return "";
}

}  // namespace

const std::string& load_gpu_monitor() {
    static const std::string loaded = load_nvml();
    return loaded;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
    std::vector<std::string> out;
    for (std::size_t bit = 0; bit < 64; ++bit)
        if (mask & (std::uint64_t{1} << bit))
            out.push_back(bit < k_reason_names.size() ? k_reason_names[bit]
                                                      : "bit_" + std::to_string(bit));
    return out;
}

std::uint64_t slowing_reasons(std::uint64_t mask) {
    return mask & k_slowing_mask;
}

gpu_monitor::gpu_monitor(const std::string& uuid, const std::string& pci_bus_id) {
    const std::string& loaded = load_gpu_monitor();
    if (!loaded.empty()) {
        m_note = loaded;
        return;
    }
    nvml_device device = nullptr;
    if (g_nvml.by_uuid(uuid.c_str(), &device) != k_nvml_success &&
        (!g_nvml.by_pci || g_nvml.by_pci(pci_bus_id.c_str(), &device) != k_nvml_success)) {
        m_note = "NVML does not know the device " + uuid + " (" + pci_bus_id + "): no GPU state";
        return;
    }
    m_device = device;
}

std::optional<gpu_state> gpu_monitor::read() const {
    if (!m_device) return std::nullopt;
    gpu_state s;
    unsigned power_mw = 0, limit_mw = 0;
    unsigned long long reasons = 0;
    if (g_nvml.clock(m_device, k_clock_sm, &s.sm_clock_mhz) != k_nvml_success ||
        g_nvml.clock(m_device, k_clock_mem, &s.mem_clock_mhz) != k_nvml_success ||
        g_nvml.temperature(m_device, k_temperature_gpu, &s.temperature_c) != k_nvml_success ||
        g_nvml.power(m_device, &power_mw) != k_nvml_success ||
        g_nvml.power_limit(m_device, &limit_mw) != k_nvml_success ||
        g_nvml.reasons(m_device, &reasons) != k_nvml_success)
        return std::nullopt;
    s.power_w = power_mw / 1000.0;
    s.power_limit_w = limit_mw / 1000.0;
    s.throttle_mask = reasons;
    return s;
}

}  // namespace cuopt
