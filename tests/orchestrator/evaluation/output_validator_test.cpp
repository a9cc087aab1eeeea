#include "orchestrator/evaluation/output_validator.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

using namespace cuopt;

namespace {

float poison_f32() {
    const std::uint32_t bits = static_cast<std::uint32_t>(poison_bits(dtype::f32));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

}  // namespace

TEST_CASE("floats within atol + rtol * |reference| pass and report their error") {
    const std::vector<float> ref = {1.0f, -2.0f, 100.0f, 0.0f};
    const std::vector<float> got = {1.0f + 1e-6f, -2.0f, 100.0f + 5e-4f, 5e-6f};
    const auto r = validate_output(dtype::f32, got.data(), ref.data(), ref.size(), {1e-5, 1e-5});
    CHECK(r.passed);
    CHECK(r.max_abs_error == Approx(5e-4).epsilon(0.01));
    CHECK(r.relative_l2_error > 0);
    CHECK_THAT(r.summary(), Catch::StartsWith("all 4 elements within tolerance"));
}

TEST_CASE("the worst mismatch is reported with its index and both values") {
    const std::vector<float> ref = {1, 2, 3, 4};
    const std::vector<float> got = {1, 2.5f, 3, 4.001f};
    const auto r = validate_output(dtype::f32, got.data(), ref.data(), ref.size(), {1e-3, 0});
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches == 1);
    CHECK(r.worst_index == 1);
    CHECK(r.worst_actual == 2.5);
    CHECK(r.worst_expected == 2);
    CHECK_THAT(r.summary(),
               Catch::StartsWith("1 of 4 elements differ; worst [1]: got 2.5, expected 2"));
}

TEST_CASE("NaN, infinity and never-written elements always fail, whatever the tolerance") {
    const std::vector<float> ref = {1, 2, 3};
    const std::vector<float> got = {NAN, INFINITY, poison_f32()};
    const auto r = validate_output(dtype::f32, got.data(), ref.data(), ref.size(), {1e30, 1e30});
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches == 3);
    CHECK(r.non_finite == 2);
    CHECK(r.unwritten == 1);
    CHECK_THAT(r.summary(), Catch::Contains("(1 never written)") && Catch::Contains("(2 NaN/Inf)"));
}

TEST_CASE("integers must match exactly") {
    const std::vector<int> ref = {5, -7, 1 << 30};
    std::vector<int> got = ref;
    CHECK(validate_output(dtype::i32, got.data(), ref.data(), ref.size(), {100, 100}).passed);
    got[2] += 1;
    const auto r = validate_output(dtype::i32, got.data(), ref.data(), ref.size(), {100, 100});
    CHECK_FALSE(r.passed);
    CHECK(r.worst_index == 2);
}

TEST_CASE("half-precision outputs are compared in their own bits") {
    const std::vector<std::uint16_t> ref = {float_to_half_bits(1.5f), float_to_half_bits(-0.25f)};
    std::vector<std::uint16_t> got = ref;
    CHECK(validate_output(dtype::f16, got.data(), ref.data(), ref.size(), {1e-3, 1e-3}).passed);
    got[0] = float_to_half_bits(1.75f);
    CHECK_FALSE(
        validate_output(dtype::f16, got.data(), ref.data(), ref.size(), {1e-3, 1e-3}).passed);
}

TEST_CASE("unit roundoffs and the fp8 defaults follow the formats' significands") {
    CHECK(unit_roundoff(dtype::f64) == std::ldexp(1.0, -53));
    CHECK(unit_roundoff(dtype::f32) == std::ldexp(1.0, -24));
    CHECK(unit_roundoff(dtype::f16) == std::ldexp(1.0, -11));
    CHECK(unit_roundoff(dtype::bf16) == std::ldexp(1.0, -8));
    CHECK(unit_roundoff(dtype::f8e4m3) == 0.0625);
    CHECK(unit_roundoff(dtype::f8e5m2) == 0.125);
    CHECK(unit_roundoff(dtype::i32) == 0);
    CHECK(default_tolerance(dtype::f8e4m3).rtol == 0.125);  // one ulp at 1: 1 -> 1.125
    CHECK(default_tolerance(dtype::f8e5m2).atol == 0.25);
    CHECK(default_tolerance(dtype::f32).rtol == 1e-5);  // the existing table is unchanged
    const tolerance t = reduction_tolerance(dtype::bf16, 4096);
    CHECK(t.atol == 0);
    CHECK(t.rtol == Approx(std::ldexp(1.0, -7) + 8 * 64 * std::ldexp(1.0, -24)));
    CHECK(t.rms_atol == t.rtol);
    CHECK(reduction_tolerance(dtype::f64, 1).rtol == Approx(10 * std::ldexp(1.0, -53)));
    CHECK(reduction_tolerance(dtype::f32, 0).rtol == reduction_tolerance(dtype::f32, 1).rtol);
}

TEST_CASE("the RMS term lets an element that cancelled to near zero carry the sum's error") {
    const std::vector<float> ref = {100.0f, -100.0f, 1e-3f, 100.0f};
    const std::vector<float> got = {100.0f, -100.0f, 2e-3f, 100.0f};  // off by 1e-3 near zero
    const tolerance plain{0, 1e-5, 0};
    CHECK_FALSE(validate_output(dtype::f32, got.data(), ref.data(), 4, plain).passed);
    const tolerance normwise{0, 1e-5, 1e-5};  // 1e-5 x rms (about 86.6): 8.7e-4 absolute
    const auto r = validate_output(dtype::f32, got.data(), ref.data(), 4, normwise);
    CHECK_FALSE(r.passed);
    CHECK(r.allowed_atol == Approx(1e-5 * std::sqrt(30000.0 / 4)).epsilon(1e-6));
    CHECK_THAT(r.summary(), Catch::EndsWith("; allowed absolute slack 0.000866025404 (from the "
                                            "oracle's RMS)"));
    const tolerance wider{0, 2e-5, 2e-5};
    CHECK(validate_output(dtype::f32, got.data(), ref.data(), 4, wider).passed);
}

namespace {

// K products summed in float in a scrambled order (or with `dropped` terms left out), against the
// exact sum rounded once to `out`: the errors the reduction rule must pass or catch. The inputs
// are e4m3-rounded normal values (mean `mean`), whose products are exact; with `tf32` they are
// f32 normal values that the candidate rounds to TF32's 11 significand bits before multiplying,
// as TF32 tensor cores do. Everything here is deterministic: mt19937_64's bits, Box-Muller and
// a fixed permutation, not the standard library's implementation-defined distributions.
struct sums {
    std::vector<double> got, ref;
};

double round_to_bits(double x, int bits) {
    if (x == 0) return 0;
    int e = 0;
    std::frexp(x, &e);
    const double q = std::ldexp(1.0, e - bits);
    return std::nearbyint(x / q) * q;
}

struct simulation {
    dtype out = dtype::f32;
    std::uint64_t k = 4096;
    int elements = 300;
    double mean = 0;
    std::uint64_t dropped = 0;  // terms 7, 8, ... left out of the candidate's sum
    bool tf32 = false;
};

sums simulate(const simulation& sim) {
    std::mt19937_64 rng(sim.k * 31 + static_cast<std::uint64_t>(sim.elements));
    auto normal = [&] {
        const double u1 = (static_cast<double>(rng() >> 11) + 1) * 0x1p-53;
        const double u2 = static_cast<double>(rng() >> 11) * 0x1p-53;
        return sim.mean + std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    };
    auto input = [&] {
        return sim.tf32 ? static_cast<double>(static_cast<float>(normal()))
                        : fp8_bits_to_double(double_to_fp8_bits(normal(), fp8_format::e4m3),
                                             fp8_format::e4m3);
    };
    auto stored = [&](double x) {
        const auto b = encode_scalar(sim.out, x);
        return element_as_double(sim.out, b.data(), 0);
    };
    sums s;
    std::vector<double> exact_terms(sim.k), candidate_terms(sim.k);
    for (int e = 0; e < sim.elements; ++e) {
        double exact = 0;
        for (std::uint64_t p = 0; p < sim.k; ++p) {
            const double x = input(), y = input();
            exact_terms[p] = x * y;  // exact in double for e4m3 and f32 inputs alike
            exact += exact_terms[p];
            candidate_terms[p] =
                sim.tf32 ? round_to_bits(x, 11) * round_to_bits(y, 11) : exact_terms[p];
        }
        float acc = 0;
        for (std::uint64_t i = 0; i < sim.k; ++i) {
            const std::uint64_t p = (i * 2654435761u + 12345u) % sim.k;  // k: a power of two
            if (p >= 7 && p < 7 + sim.dropped) continue;
            acc += static_cast<float>(candidate_terms[p]);
        }
        s.got.push_back(stored(acc));
        s.ref.push_back(stored(exact));
    }
    return s;
}

validation_result judge(const simulation& sim) {
    const sums s = simulate(sim);
    std::vector<unsigned char> got, ref;
    for (std::size_t i = 0; i < s.got.size(); ++i) {
        const auto g = encode_scalar(sim.out, s.got[i]), r = encode_scalar(sim.out, s.ref[i]);
        got.insert(got.end(), g.begin(), g.end());
        ref.insert(ref.end(), r.begin(), r.end());
    }
    return validate_output(sim.out, got.data(), ref.data(), s.got.size(),
                           reduction_tolerance(sim.out, sim.k));
}

}  // namespace

TEST_CASE("the reduction rule passes fp32 sums in any order and catches lost terms and TF32") {
    for (const dtype out : {dtype::f32, dtype::bf16, dtype::f16})
        for (const double mean : {0.0, 0.25}) {
            CAPTURE(dtype_name(out), mean);
            const validation_result fp32 = judge({out, 4096, 300, mean, 0, false});
            INFO(fp32.summary());
            CHECK(fp32.passed);
            // A lost 32-wide tile (about sqrt(32/4096) = 9% of the RMS) is caught in every dtype.
            CHECK_FALSE(judge({out, 4096, 300, mean, 32, false}).passed);
        }
    // One lost product is 1/64 of the RMS at k = 4096: f32 and f16 see it, bf16's one-ulp
    // allowance (0.78% of |r| + rms) cannot reliably (docs/tolerances.md says so).
    CHECK_FALSE(judge({dtype::f32, 4096, 300, 0, 1, false}).passed);
    CHECK_FALSE(judge({dtype::f16, 4096, 300, 0, 1, false}).passed);
    // TF32's input rounding costs about 0.8 x 2^-11 of the RMS at any k: an f32 output says so.
    CHECK_FALSE(judge({dtype::f32, 4096, 300, 0, 0, true}).passed);
    CHECK(judge({dtype::f32, 4096, 300, 0, 0, false}).passed);
    // Short sums too: k = 16.
    CHECK(judge({dtype::bf16, 16, 2000, 0, 0, false}).passed);
}
