// cuda-harness --device-info --measure: the peak-rate table, the bandwidth cache and the
// JSON on the CPU; the measurement itself on a GPU ([gpu]).
#include "harness/device_measurement.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "harness/harness_report.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

device_fingerprint h200() {
    device_fingerprint d;
    d.name = "NVIDIA H200";
    d.uuid = "GPU-0123abcd-0000-1111-2222-333344445555";
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.sm_clock_khz = 1980000;
    d.driver_version = 13000;
    return d;
}

}  // namespace

TEST_CASE("peak rates are the table's per-SM-per-clock rates times SMs times the SM clock") {
    const auto p = peak_tflops_for(h200());
    REQUIRE(p);
    const double sm_ghz = 132 * 1.98e9 / 1e12;
    CHECK(p->f64 == Approx(256 * sm_ghz));
    CHECK(p->f32 == Approx(66.9).epsilon(0.01));  // H100/H200 SXM: 67 TFLOPS FP32
    CHECK(p->tf32 == Approx(2048 * sm_ghz));
    CHECK(p->f16 == Approx(4096 * sm_ghz));
    CHECK(p->bf16 == Approx(4096 * sm_ghz));
    CHECK(p->fp8 == Approx(8192 * sm_ghz));  // 1979 TF on an H100 SXM's 132 SMs at 1.83 GHz
    CHECK(p->i8 == Approx(8192 * sm_ghz));
    CHECK_THAT(peak_note(h200()), Catch::Contains("sm_90") && Catch::Contains("132 SMs") &&
                                      Catch::Contains("1980 MHz"));
}

TEST_CASE("every arch in the table has peaks no lower than f32 for the tensor-core types") {
    for (int cc : {70, 75, 80, 86, 89, 90, 100, 120}) {
        device_fingerprint d = h200();
        d.cc_major = cc / 10;
        d.cc_minor = cc % 10;
        const auto p = peak_tflops_for(d);
        INFO("sm_" << cc);
        REQUIRE(p);
        CHECK(p->f64 > 0);
        CHECK(p->tf32 >= p->f32);
        CHECK(p->f16 >= p->f32);
        CHECK(p->bf16 >= p->f32);
        CHECK(p->fp8 >= p->f16);
        if (cc >= 75) CHECK(p->i8 >= p->f16);  // V100 has no int8 tensor cores (dp4a: 512)
    }
}

TEST_CASE("an arch the table does not know gets no peaks and a note that says so") {
    device_fingerprint d = h200();
    d.cc_major = 8;
    d.cc_minor = 7;
    CHECK_FALSE(peak_tflops_for(d));
    CHECK(peak_note(d) == "no rate table for sm_87: peak_tflops omitted");
}

TEST_CASE("the copy size is 512 MiB or a quarter of the free memory in whole MiB") {
    const std::uint64_t mib = 1 << 20;
    CHECK(copy_bytes_for(141ull << 30) == 512 * mib);
    CHECK(copy_bytes_for(1ull << 30) == 256 * mib);
    CHECK(copy_bytes_for(10 * mib + 5) == 2 * mib);
    CHECK(copy_bytes_for(0) == mib);
}

TEST_CASE("a cached bandwidth is reused only for the same device and driver") {
    test::scratch_folder dir;
    const device_fingerprint d = h200();
    const auto file = bandwidth_cache_file(dir.path(), d);
    CHECK_FALSE(read_cached_bandwidth(file, d));
    write_cached_bandwidth(file, d, {4321.5, 512ull << 20, 20, false});
    const auto back = read_cached_bandwidth(file, d);
    REQUIRE(back);
    CHECK(back->gbps == 4321.5);
    CHECK(back->bytes == 512ull << 20);
    CHECK(back->repetitions == 20);
    CHECK(back->cached);
    device_fingerprint other = d;
    other.driver_version = 13010;
    CHECK(bandwidth_cache_file(dir.path(), other) != file);
    CHECK_FALSE(read_cached_bandwidth(file, other));  // even when pointed at the old file
    other = d;
    other.uuid = "GPU-ffff";
    CHECK_FALSE(read_cached_bandwidth(file, other));
    dir.write(file.filename().string(), "{ \"uuid\": ");
    CHECK_FALSE(read_cached_bandwidth(file, d));  // torn: measured again
}

TEST_CASE("the device JSON gains measured, peak_tflops and peak_note only when measured") {
    const device_fingerprint d = h200();
    const auto plain = parse_json(write_device_json(d), "plain");
    CHECK_FALSE(plain.HasMember("measured"));
    CHECK_FALSE(plain.HasMember("peak_tflops"));
    device_measurement m;
    m.bandwidth = {4100.25, 512ull << 20, 20, true};
    m.peaks = peak_tflops_for(d);
    m.peak_note = peak_note(d);
    const auto doc = parse_json(write_device_json(d, &m), "measured");
    CHECK(std::string(doc["arch"].GetString()) == "sm_90");
    const auto& b = doc["measured"];
    CHECK(b["copy_bandwidth_gbps"].GetDouble() == 4100.25);
    CHECK(b["bytes"].GetUint64() == 536870912);
    CHECK(b["repetitions"].GetInt() == 20);
    CHECK(b["cached"].GetBool());
    CHECK(std::string(b["method"].GetString()) ==
          "cuMemcpyDtoDAsync of 536870912 bytes, median of 20, counted as read+write (2N bytes)");
    for (const char* k : {"f64", "f32", "tf32", "f16", "bf16", "fp8", "i8"})
        CHECK(doc["peak_tflops"][k].GetDouble() > 0);
    m.peaks.reset();
    CHECK_FALSE(parse_json(write_device_json(d, &m), "no peaks").HasMember("peak_tflops"));
}

TEST_CASE("cuda-harness --device-info --measure without a driver says so like --device-info does",
          "[integration]") {
    if (test::gpu_unavailable_reason().empty()) return;  // only meaningful without a GPU
    for (const char* flag : {"--measure", "--remeasure"}) {
        const auto r = test::run_harness({"--device-info", flag});
        CHECK(r.exit_code == 14);
        CHECK_THAT(r.output,
                   Catch::Contains("no CUDA driver") || Catch::Contains("no CUDA device"));
    }
}

TEST_CASE("cuda-harness --device-info --measure measures once, then answers from the cache",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder cache;
    auto info = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"--device-info", "--cache-dir", cache.path().string()};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = test::run_harness(args);
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return parse_json(r.output, "device-info");
    };
    CHECK_FALSE(info({}).HasMember("measured"));
    const auto first = info({"--measure"});
    REQUIRE(first.HasMember("measured"));
    CHECK_FALSE(first["measured"]["cached"].GetBool());
    const double gbps = first["measured"]["copy_bandwidth_gbps"].GetDouble();
    CHECK(gbps > 50);     // any datacenter or desktop GPU of the table's families
    CHECK(gbps < 20000);  // and no more than any memory system today
    CHECK(first["measured"]["repetitions"].GetInt() == 20);
    if (first.HasMember("peak_tflops"))
        CHECK(first["peak_tflops"]["f32"].GetDouble() > 1);
    else
        CHECK_THAT(first["peak_note"].GetString(), Catch::Contains("no rate table"));
    const auto second = info({"--measure"});
    CHECK(second["measured"]["cached"].GetBool());
    CHECK(second["measured"]["copy_bandwidth_gbps"].GetDouble() == gbps);
    CHECK_FALSE(info({"--remeasure"})["measured"]["cached"].GetBool());
}
