#pragma once
/// What cuda-harness --device-info says of one GPU, read once: the facts the optimizer acts on
/// (the arch kernels compile for, the name its lines print, whether the GPU is simulated, the
/// largest block, the measured bandwidth and peaks the speed-of-light floors use, the fingerprint
/// a resume holds against run.json), beside the block itself as the harness wrote it (run.json
/// and the model's prompt carry it verbatim). A field the block lacks, or gives with another
/// type, keeps its default: the reader never throws.

#include <rapidjson/document.h>

#include <map>
#include <string>

namespace cuopt {

struct device_facts {
    std::string json = "null";  // the harness's block, as it printed it; "null" when none
    long long index = -1;
    std::string name;                           // "NVIDIA H200"; "" when not said
    std::string uuid;                           // "GPU-…"; "" when not said
    std::string arch;                           // "sm_90"; "" when not said
    std::string compute_capability;             // "9.0"; "" when not said
    bool simulated = false;                     // fake-harness's fingerprint says "simulated": true
    int max_threads_per_block = 0;              // 0 when not said
    double l2_bytes = 0;                        // 0 when not said
    double copy_bandwidth_gbps = 0;             // "measured" (--measure); 0 when not measured
    std::map<std::string, double> peak_tflops;  // by dtype name, plus "tf32"; empty when none

    /// The name for a console line: "unknown" when the block names none.
    std::string shown_name() const { return name.empty() ? "unknown" : name; }
};

/// The facts of a --device-info answer (`text`: its JSON; anything else gives the defaults,
/// with `json` "null").
device_facts read_device_facts(const std::string& text);
/// The same from a parsed block (run.json's "device").
device_facts read_device_facts(const rapidjson::Value& block);

/// The architecture-specific target of `arch` ("sm_90" -> "sm_90a"): what a kernel whose
/// manifest says arch_specific is compiled for. From sm_90 on only (none exists before); an
/// arch that already names a target ("sm_90a", "sm_100f") is kept as given.
std::string arch_specific_target(const std::string& arch);

}  // namespace cuopt
