// The evidence stage's arithmetic on synthetic data: significance verdicts, the
// sanitizer's summary lines, determinism classes, the speed-of-light floor, the order in
// which candidates are checked, the memoisation and precision rules, and the manifest's
// evidence fields.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "common/json_document.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evidence/determinism.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"
#include "orchestrator/evidence/significance.hpp"
#include "orchestrator/evidence/sol_floor.hpp"
#include "orchestrator/evidence/winner_evidence.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// `runs` runs of `n` samples around `center` with relative noise `noise` and a per-run drift.
run_samples noisy(double center, double noise, double drift, int runs, int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> within(0, noise), between(0, drift);
    run_samples out;
    for (int r = 0; r < runs; ++r) {
        const double run_center = center * (1 + between(rng));
        auto& v = out.emplace_back();
        for (int i = 0; i < n; ++i) v.push_back(run_center * (1 + within(rng)));
    }
    return out;
}

const std::string k_pilot = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json";

}  // namespace

TEST_CASE("significance: equal kernels, a clearly faster one, a slower one, and noise") {
    const run_samples base = noisy(1.0, 0.01, 0.002, 5, 100, 1);
    SECTION("the same distribution is no significant difference (the A/A control)") {
        const ratio_estimate e = compare_runs(base, noisy(1.0, 0.01, 0.002, 5, 100, 2));
        CHECK(e.verdict == significance::no_significant_difference);
        CHECK(e.low < 1.0);
        CHECK(e.high > 1.0);
    }
    SECTION("20% less time is faster, with the ratio inside its interval") {
        const ratio_estimate e = compare_runs(base, noisy(0.8, 0.01, 0.002, 5, 100, 3));
        CHECK(e.verdict == significance::faster);
        CHECK(e.ratio == Approx(1.25).epsilon(0.02));
        CHECK(e.low <= e.ratio);
        CHECK(e.high >= e.ratio);
    }
    SECTION("more time is slower") {
        CHECK(compare_runs(base, noisy(1.1, 0.01, 0.002, 5, 100, 4)).verdict ==
              significance::slower);
    }
    SECTION("a 1% gain drowned in 5% run-to-run drift is not significant") {
        const run_samples drifting = noisy(1.0, 0.01, 0.05, 5, 100, 5);
        CHECK(compare_runs(drifting, noisy(0.99, 0.01, 0.05, 5, 100, 6)).verdict ==
              significance::no_significant_difference);
    }
    SECTION("the geometric mean over cases has its own interval") {
        const multi_case_estimate m = compare_cases(
            {base, base}, {noisy(0.5, 0.01, 0.002, 5, 100, 7), noisy(2.0, 0.01, 0.002, 5, 100, 8)});
        CHECK(m.cases[0].verdict == significance::faster);
        CHECK(m.cases[1].verdict == significance::slower);
        CHECK(m.geomean.ratio == Approx(1.0).epsilon(0.03));
    }
    CHECK_THROWS_AS(compare_runs({}, base), std::invalid_argument);
    CHECK_THROWS_AS(compare_runs(base, {{}}), std::invalid_argument);
}

TEST_CASE("the A/A's practical margin: from the spread between processes, 0.5% at least") {
    SECTION("the spread is the runs' medians around their side's, pooled over the sides") {
        // Medians 1.00 and 1.02 on one side, 2.00 and 2.04 on the other: log deviations
        // ±0.0099 each, four values, two sides.
        const run_samples a{{1.0, 1.0, 1.0}, {1.02, 1.02, 1.02}};
        const run_samples b{{2.0}, {2.04}};
        const auto spread = process_spread({&a, &b});
        REQUIRE(spread);
        const double d = std::log(1.02) / 2;
        CHECK(*spread == Approx(std::sqrt(4 * d * d / 2)));
        CHECK(practical_margin(spread) == Approx(3 * *spread));
    }
    SECTION("one run per side gives no spread, and the floor") {
        const run_samples one{{1.0, 1.1}};
        CHECK_FALSE(process_spread({&one, &one}));
        CHECK(practical_margin(std::nullopt) == 0.005);
        CHECK(practical_margin(0.0001) == 0.005);
    }
    SECTION("a winner is faster only beyond the margin") {
        CHECK(classify_interval(1.001, 1.008) == significance::faster);
        CHECK(classify_interval(1.001, 1.008, 0.005) == significance::no_significant_difference);
        CHECK(classify_interval(1.006, 1.02, 0.005) == significance::faster);
        CHECK(classify_interval(0.97, 0.994, 0.005) == significance::slower);
    }
    SECTION("the issue's A/A: 1.0043 [1.0010, 1.0084] on a quiet GPU") {
        const ratio_estimate aa{1.0043, 1.0010, 1.0084, significance::faster};
        CHECK(classify_aa(aa, 0.005) == aa_class::noisy);  // reaches past 1.005
        CHECK(classify_aa(aa, 0.009) == aa_class::equivalent);
        CHECK(classify_aa(aa, 0.0009) == aa_class::biased);  // wholly above 1.0009
        CHECK(classify_aa({0.99, 0.985, 0.994}, 0.005) == aa_class::biased);
        // Inside the band, but the margin itself is beyond the practical cap of 3%.
        CHECK(classify_aa({1.0, 0.99, 1.01}, 0.04) == aa_class::noisy);
        CHECK(classify_aa({1.0, 0.99, 1.01}, 0.03) == aa_class::equivalent);
        CHECK(describe_aa(aa, 0.009) == "equivalent: 1.0043 [1.0010, 1.0084] within ±0.90%");
        CHECK(describe_aa(aa, 0.005) == "noisy: 1.0043 [1.0010, 1.0084] reaching beyond ±0.50%");
        CHECK_THAT(describe_aa({1.0, 0.99, 1.01}, 0.04),
                   Catch::StartsWith("noisy: 1.0000 [0.9900, 1.0100]; the spread between "
                                     "processes makes the margin ±4.00%, beyond the practical "
                                     "±3.00%"));
    }
    SECTION(
        "on noise like the H200's (0.5% between processes) the A/A of 5 rounds is "
        "equivalent in at least 95 of 100 draws") {
        int equivalent = 0;
        for (unsigned seed = 0; seed < 100; ++seed) {
            const run_samples w = noisy(0.02, 0.01, 0.005, 5, 200, 1000 + seed);
            const run_samples again = noisy(0.02, 0.01, 0.005, 5, 200, 5000 + seed);
            const run_samples base = noisy(0.03, 0.01, 0.005, 5, 200, 9000 + seed);
            const double delta = practical_margin(process_spread({&base, &w, &again}));
            const ratio_estimate aa = compare_runs(w, again, {400, seed});
            equivalent += classify_aa(aa, delta) == aa_class::equivalent;
        }
        CHECK(equivalent >= 95);
    }
}

TEST_CASE("sanitizer summaries: clean, memcheck errors, racecheck hazards, no summary") {
    const sanitizer_result clean = parse_sanitizer_output(
        "memcheck",
        "========= COMPUTE-SANITIZER\ncuda-harness: ok\n========= ERROR SUMMARY: 0 errors\n");
    CHECK(clean.completed);
    CHECK(clean.clean());
    CHECK(clean.first_lines.empty());

    const sanitizer_result oob =
        parse_sanitizer_output("memcheck",
                               "========= COMPUTE-SANITIZER\n"
                               "========= Invalid __global__ read of size 4 bytes\n"
                               "=========     at matmul_f32+0x2a0 in kernel.cu:9\n"
                               "=========     by thread (3,0,0) in block (1,0,0)\n"
                               "=========\n"
                               "========= ERROR SUMMARY: 1160 errors\n");
    CHECK(oob.completed);
    CHECK(oob.errors == 1160);
    CHECK_FALSE(oob.clean());
    REQUIRE(oob.first_lines.size() == 3);
    CHECK(oob.first_lines[0] == "Invalid __global__ read of size 4 bytes");

    const sanitizer_result race = parse_sanitizer_output(
        "racecheck",
        "========= Error: Race reported between Write access at matmul_f32+0x1f0\n"
        "========= RACECHECK SUMMARY: 7 hazards displayed (3 errors, 4 warnings)\n"
        "========= ERROR SUMMARY: 3 errors\n");
    CHECK(race.errors == 3);
    CHECK(race.warnings == 4);
    CHECK_FALSE(race.clean());

    // racecheck on CUDA 13.0 prints its own summary and no ERROR SUMMARY.
    const sanitizer_result race_only = parse_sanitizer_output(
        "racecheck", "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\n");
    CHECK(race_only.completed);
    CHECK(race_only.errors == 1);
    CHECK(race_only.warnings == 1);
    const sanitizer_result race_clean = parse_sanitizer_output(
        "racecheck", "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
    CHECK(race_clean.clean());

    // ... or nothing at all when it found nothing: clean if the harness finished normally.
    CHECK(parse_sanitizer_output("racecheck", "========= COMPUTE-SANITIZER\n", true).clean());
    CHECK_FALSE(
        parse_sanitizer_output("racecheck", "========= COMPUTE-SANITIZER\n", false).completed);

    const sanitizer_result warn_only = parse_sanitizer_output(
        "racecheck",
        "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n"
        "========= ERROR SUMMARY: 0 errors\n");
    CHECK(warn_only.warnings == 1);
    CHECK_FALSE(warn_only.clean());

    const sanitizer_result died = parse_sanitizer_output("initcheck", "Segmentation fault\n");
    CHECK_FALSE(died.completed);
    CHECK_FALSE(died.clean());
    CHECK_THAT(died.problem, Catch::Contains("no ERROR SUMMARY"));
}

TEST_CASE("determinism: bitwise, within tolerance, beyond tolerance") {
    auto bytes = [](std::vector<float> v) {
        std::vector<unsigned char> b(v.size() * 4);
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    const tolerance tol{1e-4, 1e-4};
    const auto a = bytes({1.0f, 2.0f, 3.0f});
    CHECK(classify_runs(dtype::f32, tol, {a, a, a}, "c").kind == determinism_class::bitwise);
    const determinism_result small =
        classify_runs(dtype::f32, tol, {a, bytes({1.0f, 2.0000002f, 3.0f}), a}, "case c");
    CHECK(small.kind == determinism_class::within_tolerance);
    CHECK_THAT(small.detail, Catch::Contains("run 2 vs run 1"));
    const determinism_result big =
        classify_runs(dtype::f32, tol, {a, a, bytes({1.0f, 2.5f, 3.0f})}, "case c");
    CHECK(big.kind == determinism_class::beyond_tolerance);
    CHECK_THAT(big.detail, Catch::Contains("run 3"));
    CHECK(worse(small, big).kind == determinism_class::beyond_tolerance);
    CHECK(worse(big, small).kind == determinism_class::beyond_tolerance);
}

TEST_CASE("the speed-of-light floor: bytes over bandwidth, flops over the dtype's peak") {
    const manifest m = read_manifest(k_pilot);
    device_peaks d;
    CHECK(floors_for(m, d).empty());  // nothing measured: no floor, nothing rejected
    d = peaks_of(read_device_facts(
        R"({"name": "x", "measured": {"copy_bandwidth_gbps": 4000},
            "peak_tflops": {"f32": 60, "tf32": 400, "f16": 800}})"));
    CHECK(d.copy_bandwidth_gbps == 4000);
    CHECK(d.peak_tflops.at("tf32") == 400);
    const auto floors = floors_for(m, d);
    REQUIRE(floors.count("perf-256"));
    CHECK_FALSE(floors.count("correctness-31x37x29"));
    // a, b read once and c written once: 3 x 256 x 256 x 4 bytes at 4 TB/s.
    const sol_floor& f = floors.at("perf-256");
    CHECK(f.bytes == 3.0 * 256 * 256 * 4);
    CHECK(f.floor_ms == Approx(3.0 * 256 * 256 * 4 / 4e12 * 1e3));
    CHECK(f.traffic_bytes == 3.0 * 256 * 256 * 4);
    CHECK(f.traffic_ms == Approx(f.memory_ms));
    // 2 x 256^3 flops at TF32's 400 TFLOPS take 0.08 us: below the 0.2 us of memory traffic.
    CHECK(f.bound == "memory");
    REQUIRE(f.flops);
    CHECK(*f.flops == 2.0 * 256 * 256 * 256);

    manifest with_flops = m;
    with_flops.cases[1].flops = "2*m*n*k";
    const sol_floor g = *floor_for_case(with_flops, with_flops.cases[1], d);
    REQUIRE(g.flops);
    CHECK(*g.flops == 2.0 * 256 * 256 * 256);
    // fp32 may come from TF32 tensor cores: the higher peak keeps the floor honest.
    CHECK(*g.compute_ms == Approx(2.0 * 256 * 256 * 256 / 400e12 * 1e3));
    CHECK(g.floor_ms == std::max(g.memory_ms, *g.compute_ms));

    // Writes that fit in the write-back L2 need not reach DRAM before the kernel ends.
    device_peaks with_l2 = d;
    with_l2.l2_bytes = 60.0 * 1024 * 1024;
    CHECK(floor_for_case(m, m.cases[1], with_l2)->bytes == 2.0 * 256 * 256 * 4);
    // The memory SOL counts every byte moved: the L2 credits nothing there.
    CHECK(floor_for_case(m, m.cases[1], with_l2)->traffic_bytes == 3.0 * 256 * 256 * 4);
    with_l2.l2_bytes = 100000;
    CHECK(floor_for_case(m, m.cases[1], with_l2)->bytes ==
          2.0 * 256 * 256 * 4 + 256 * 256 * 4 - 100000);

    CHECK(sol_fraction(0.5, 1.0) == 0.5);
    CHECK(*sol_score(2.0, 2.0, 1.0) == Approx(0.5));  // the baseline itself
    CHECK(*sol_score(1.0, 2.0, 1.0) == Approx(1.0));  // at the speed of light
    CHECK(*sol_score(1.5, 2.0, 1.0) == Approx(2.0 / 3));
    CHECK_FALSE(sol_score(1.0, 0.9, 1.0));  // baseline below the floor
}

TEST_CASE("candidates are checked best first, then the next fastest, then the initial kernel") {
    search_outcome o;
    auto add = [&o](double ms, verdict v) {
        attempt_result r;
        r.iteration = o.history.empty() ? 0 : 1;
        r.attempt = static_cast<int>(o.history.size());
        r.verdict = v;
        if (v == verdict::valid) r.geomean_ms = ms;
        o.history.push_back(r);
    };
    add(1.0, verdict::valid);         // 0 initial
    add(0.6, verdict::valid);         // 1
    add(0.5, verdict::valid);         // 2 fastest, not the best (min_gain hysteresis)
    add(0.1, verdict::wrong_output);  // 3 never
    add(0.995, verdict::valid);       // 4 not faster than the initial by min_gain
    add(0.7, verdict::valid);         // 5
    o.initial = 0;
    o.best = 1;
    CHECK(ranking_order(o, 0.01, 5) == std::vector<std::size_t>{1, 2, 5, 0});
    CHECK(ranking_order(o, 0.01, 2) == std::vector<std::size_t>{1, 2, 0});
    o.best = 0;
    CHECK(ranking_order(o, 0.01, 1) == std::vector<std::size_t>{2, 0});
}

TEST_CASE("memoisation: faster with repeated inputs beyond the threshold and the noise") {
    double ratio = 0;
    CHECK_FALSE(memoises_inputs({1.0, 1.01}, {0.99, 1.0}, 0.10, &ratio));
    CHECK(ratio == Approx(1.01).epsilon(0.01));
    CHECK(memoises_inputs({1.0, 1.0}, {0.25, 0.26}, 0.10, &ratio));
    CHECK(ratio > 3.5);
    // Noisy runs (20% apart) raise the bar: 1.3x is within three times the noise.
    CHECK_FALSE(memoises_inputs({1.0, 1.2}, {0.8, 0.85}, 0.10, &ratio));
}

TEST_CASE("a precision warning when a candidate's error is far above the initial kernel's") {
    const manifest m = read_manifest(k_pilot);
    auto attempt = [](double rel_l2) {
        attempt_result r;
        case_evaluation& ce = r.cases.emplace_back();
        ce.name = "perf-256";
        output_check& oc = ce.outputs.emplace_back();
        oc.arg = "c";
        validation_result v;
        v.passed = true;
        v.relative_l2_error = rel_l2;
        oc.validation = v;
        return r;
    };
    CHECK(precision_warning(attempt(2e-7), attempt(0), m).empty());  // a reordered sum
    const std::string w = precision_warning(attempt(3e-4), attempt(1e-7), m);
    CHECK_THAT(w, Catch::Contains("precision") && Catch::Contains("perf-256"));
}

TEST_CASE("the manifest's evidence fields: timing_inputs, flops, vendor_baseline, holdout") {
    test::scratch_folder dir;
    std::string text = test::read_text(k_pilot);
    auto put = [&text](const std::string& from, const std::string& to) {
        const auto pos = text.find(from);
        REQUIRE(pos != std::string::npos);
        text.replace(pos, from.size(), to);
    };
    put(R"("kind": "input", "count": "m*k",)",
        R"("kind": "input", "count": "m*k", "timing_inputs": "as_given",)");
    put(R"("layout": "row_major", )", "");  // row_major is the default
    dir.write("input_cases.json", text);
    const manifest m = read_manifest(dir / "input_cases.json");
    CHECK(m.args[0].timing == timing_inputs::as_given);
    CHECK_FALSE(m.args[1].timing);
    CHECK(m.cases[1].flops == "2*m*n*k");
    REQUIRE(m.cases[1].vendor);
    CHECK(m.cases[1].vendor->a == "a");
    CHECK(m.cases[1].vendor->b == "b");
    CHECK(m.cases[1].vendor->c == "c");
    CHECK(m.cases[1].vendor->layout == "row_major");

    std::string bad = text;
    bad.replace(bad.find(R"("op": "sgemm")"), 13, R"("op": "dgemm")");
    CHECK(read_manifest(k_pilot).cases[2].flops == "2*m*n*k");
    dir.write("bad.json", bad);
    CHECK_THROWS_WITH(read_manifest(dir / "bad.json"),
                      Catch::Contains("vendor_baseline.a") && Catch::Contains("f64"));

    dir.write("holdout.json", R"({"schema_version": 1, "cases": [
        {"name": "hold-200x130x70", "kind": "correctness", "params": {"m": 200, "n": 130, "k": 70}}]})");
    const manifest h = read_holdout_manifest(dir / "holdout.json", m);
    REQUIRE(h.cases.size() == 1);
    CHECK(h.args.size() == m.args.size());
    CHECK(h.launch.grid == m.launch.grid);

    dir.write("holdout-args.json", R"({"schema_version": 1,
        "args": [{"name": "x", "dtype": "f32", "kind": "output", "count": "m"}],
        "launch": {"grid": [1], "block": [1]},
        "cases": [{"name": "h", "kind": "correctness", "params": {"m": 2}}]})");
    CHECK_THROWS_WITH(read_holdout_manifest(dir / "holdout-args.json", m),
                      Catch::Contains("holdout-args.json") && Catch::Contains("args[0]"));
}

TEST_CASE("an fp8 GEMM's floor counts one byte an element and takes the fp8 peak") {
    const manifest m =
        read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/input_cases.json");
    const device_peaks d = peaks_of(read_device_facts(
        R"({"name": "x", "l2_bytes": 1000, "measured": {"copy_bandwidth_gbps": 4000},
            "peak_tflops": {"f32": 60, "tf32": 400, "bf16": 800, "fp8": 1600}})"));
    const auto floors = floors_for(m, d);
    REQUIRE(floors.count("perf-2048"));
    const sol_floor& f = floors.at("perf-2048");
    const double n = 2048;
    // A and B: n^2 bytes each; C: 2 n^2 bytes of bf16, less what the 1000-byte L2 holds.
    CHECK(f.bytes == n * n + n * n + (2 * n * n - 1000));
    REQUIRE(f.compute_ms);
    CHECK(*f.compute_ms == Approx(2 * n * n * n / 1600e12 * 1e3));  // fp8's, not bf16's
    CHECK(f.bound == "compute");
}
