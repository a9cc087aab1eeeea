#include "orchestrator/evaluation/output_validator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

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
