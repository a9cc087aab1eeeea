// The --device-info block read once into typed facts: every field the optimizer acts on, the
// defaults for what a block lacks or gives with another type, and the block kept verbatim.
#include "common/device_facts.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE("a --device-info block gives its facts, and the block itself verbatim") {
    const std::string block =
        R"({ "index": 1, "name": "NVIDIA H200", "uuid": "GPU-abc", "arch": "sm_90",
             "compute_capability": "9.0", "sm_count": 132, "max_threads_per_block": 1024,
             "l2_bytes": 52428800, "measured": { "copy_bandwidth_gbps": 4100.5 },
             "peak_tflops": { "f32": 67, "tf32": 495, "fp8": 1979, "note": "x" } })"
        "\n";
    const device_facts f = read_device_facts(block);
    CHECK(f.json == block);
    CHECK(f.index == 1);
    CHECK(f.name == "NVIDIA H200");
    CHECK(f.shown_name() == "NVIDIA H200");
    CHECK(f.uuid == "GPU-abc");
    CHECK(f.arch == "sm_90");
    CHECK(f.compute_capability == "9.0");
    CHECK_FALSE(f.simulated);
    CHECK(f.max_threads_per_block == 1024);
    CHECK(f.l2_bytes == 52428800);
    CHECK(f.copy_bandwidth_gbps == 4100.5);
    CHECK(f.peak_tflops ==
          std::map<std::string, double>{{"f32", 67}, {"tf32", 495}, {"fp8", 1979}});
    CHECK(read_device_facts(R"({"simulated": true})").simulated);
}

TEST_CASE("a block that lacks a fact, or gives it with another type, leaves its default") {
    for (const char* text : {"null", "", "not json", "[1, 2]", "{", "42"}) {
        const device_facts f = read_device_facts(text);
        CHECK(f.json == "null");
        CHECK(f.index == -1);
        CHECK(f.shown_name() == "unknown");
        CHECK(f.arch.empty());
    }
    const device_facts odd = read_device_facts(
        R"({"name": ["x"], "arch": ["sm_90"], "simulated": "yes", "max_threads_per_block": 1e12,
            "measured": 5, "peak_tflops": {"f32": "fast"}, "index": "0"})");
    CHECK(odd.json != "null");  // an object: kept, whatever it holds
    CHECK(odd.name.empty());
    CHECK(odd.arch.empty());
    CHECK_FALSE(odd.simulated);
    CHECK(odd.max_threads_per_block == 0);
    CHECK(odd.copy_bandwidth_gbps == 0);
    CHECK(odd.peak_tflops.empty());
    CHECK(odd.index == -1);
    CHECK(read_device_facts(R"({"max_threads_per_block": -5})").max_threads_per_block == 0);
}

TEST_CASE("an arch's architecture-specific target: 'a' from sm_90 on, a suffixed arch as given") {
    CHECK(arch_specific_target("sm_90") == "sm_90a");
    CHECK(arch_specific_target("sm_100") == "sm_100a");
    CHECK(arch_specific_target("sm_120") == "sm_120a");
    CHECK(arch_specific_target("sm_89") == "sm_89");  // none before Hopper
    CHECK(arch_specific_target("sm_80") == "sm_80");
    CHECK(arch_specific_target("sm_90a") == "sm_90a");
    CHECK(arch_specific_target("sm_100f") == "sm_100f");
    CHECK(arch_specific_target("") == "");
    CHECK(arch_specific_target("compute_90") == "compute_90");
}
