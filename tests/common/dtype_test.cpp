#include "common/dtype.hpp"

#include <cuda_fp8.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace cuopt;

TEST_CASE("every dtype name parses back to itself and has its C size") {
    for (const char* name : {"f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32",
                             "i64", "u64", "f8e4m3", "f8e5m2"}) {
        const auto t = parse_dtype(name);
        REQUIRE(t);
        CHECK(dtype_name(*t) == name);
    }
    CHECK(dtype_size(dtype::bf16) == 2);
    CHECK(dtype_size(dtype::f64) == 8);
    CHECK(dtype_size(dtype::u8) == 1);
    CHECK(dtype_size(dtype::f8e4m3) == 1);
    CHECK(dtype_size(dtype::f8e5m2) == 1);
    CHECK(is_float(dtype::f8e4m3));
    CHECK(is_float(dtype::f8e5m2));
    CHECK_FALSE(parse_dtype("float"));
    CHECK_FALSE(parse_dtype("F32"));
}

TEST_CASE("float poison patterns are NaNs and are counted as unwritten") {
    float f;
    const std::uint32_t bits = static_cast<std::uint32_t>(poison_bits(dtype::f32));
    std::memcpy(&f, &bits, 4);
    CHECK(std::isnan(f));
    double d;
    const std::uint64_t dbits = poison_bits(dtype::f64);
    std::memcpy(&d, &dbits, 8);
    CHECK(std::isnan(d));
    CHECK(std::isnan(half_bits_to_float(static_cast<std::uint16_t>(poison_bits(dtype::f16)))));
    CHECK(std::isnan(bf16_bits_to_float(static_cast<std::uint16_t>(poison_bits(dtype::bf16)))));

    std::vector<float> values = {1.0f, f, 2.0f, f, std::nanf("")};
    CHECK(count_poisoned(dtype::f32, values.data(), values.size()) ==
          2);  // a plain NaN is not poison
}

TEST_CASE("half and bfloat16 conversions round to nearest even") {
    CHECK(float_to_half_bits(1.0f) == 0x3C00);
    CHECK(float_to_half_bits(-2.0f) == 0xC000);
    CHECK(float_to_half_bits(65504.0f) == 0x7BFF);
    CHECK(float_to_half_bits(1e6f) == 0x7C00);                // overflow to infinity
    CHECK(float_to_half_bits(5.9604645e-8f) == 0x0001);       // smallest subnormal
    CHECK(float_to_half_bits(1.0f + 1.0f / 2048) == 0x3C00);  // tie rounds to even
    CHECK(half_bits_to_float(0x3555) == Approx(0.33325195f));
    CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
    CHECK(bf16_bits_to_float(float_to_bf16_bits(3.140625f)) == 3.140625f);
    for (float v : {0.1f, -7.25f, 1000.5f, 3e-5f})
        CHECK(half_bits_to_float(float_to_half_bits(v)) == Approx(v).epsilon(1e-3));
}

TEST_CASE("a scalar that does not fit its integer dtype is refused with the value and type") {
    CHECK(encode_scalar(dtype::i32, 7).size() == 4);
    CHECK(encode_scalar(dtype::u8, 255).size() == 1);
    CHECK_THROWS_WITH(encode_scalar(dtype::u8, 256), Catch::Contains("u8"));
    CHECK_THROWS_WITH(encode_scalar(dtype::i32, 1.5), Catch::Contains("not a i32 integer"));
    CHECK_THROWS(encode_scalar(dtype::u32, -1));
    const auto bytes = encode_scalar(dtype::f64, 0.25);
    double back;
    std::memcpy(&back, bytes.data(), 8);
    CHECK(back == 0.25);
}

TEST_CASE("an integer that does not fit its dtype is refused with the range it must lie in") {
    CHECK_THROWS_WITH(encode_scalar(dtype::u8, 300),
                      "value 300 is not a u8 integer; expected a whole number from 0 to 255");
    CHECK_THROWS_WITH(encode_scalar(dtype::i8, -129),
                      Catch::EndsWith("expected a whole number from -128 to 127"));
    CHECK_THROWS_WITH(encode_scalar(dtype::i16, 40000),
                      Catch::EndsWith("expected a whole number from -32768 to 32767"));
    CHECK_THROWS_WITH(encode_scalar(dtype::u16, 2.5),
                      Catch::EndsWith("expected a whole number from 0 to 65535"));
    CHECK_THROWS_WITH(encode_integer_scalar(dtype::u32, std::int64_t{-1}),
                      Catch::EndsWith("expected a whole number from 0 to 4294967295"));
    CHECK_THROWS_WITH(encode_integer_scalar(dtype::i64, std::uint64_t{9223372036854775808ull}),
                      Catch::EndsWith("from -9223372036854775808 to 9223372036854775807"));
    CHECK_THROWS_WITH(encode_integer_scalar(dtype::u64, std::int64_t{-1}),
                      Catch::EndsWith("from 0 to 18446744073709551615"));
}

TEST_CASE("64-bit integer scalars are encoded exactly at both ends of their range") {
    auto u64 = [](const std::vector<unsigned char>& b) {
        std::uint64_t v = 0;
        std::memcpy(&v, b.data(), 8);
        return v;
    };
    CHECK(u64(encode_integer_scalar(dtype::u64, std::uint64_t{18446744073709551615ull})) ==
          18446744073709551615ull);
    CHECK(u64(encode_integer_scalar(dtype::u64, std::uint64_t{10000000000000000001ull})) ==
          10000000000000000001ull);
    CHECK(u64(encode_integer_scalar(dtype::i64, std::int64_t{INT64_MIN})) ==
          static_cast<std::uint64_t>(INT64_MIN));
    CHECK_THROWS_WITH(encode_integer_scalar(dtype::i64, std::uint64_t{9223372036854775808ull}),
                      Catch::Contains("value 9223372036854775808 is not a i64 integer"));
    CHECK_THROWS_WITH(encode_integer_scalar(dtype::u32, std::int64_t{-1}), Catch::Contains("u32"));
    // 2^64 as a double used to wrap to 0.
    CHECK_THROWS_WITH(encode_scalar(dtype::u64, 18446744073709551616.0),
                      Catch::Contains("not a u64"));
    CHECK_THROWS_WITH(encode_scalar(dtype::f32, 1e300), Catch::Contains("does not fit f32"));
}

namespace {

// cuda_fp8.h's own host conversions: the independent reference for ours.
__nv_fp8_interpretation_t nv_format(fp8_format f) {
    return f == fp8_format::e4m3 ? __NV_E4M3 : __NV_E5M2;
}

std::uint8_t nv_from_double(double x, fp8_format f) {
    return __nv_cvt_double_to_fp8(x, __NV_SATFINITE, nv_format(f));
}

double nv_to_double(std::uint8_t b, fp8_format f) {
    return half_bits_to_float(__nv_cvt_fp8_to_halfraw(b, nv_format(f)).x);  // exact in half
}

bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

}  // namespace

TEST_CASE("every fp8 code reads as cuda_fp8.h reads it, and every number among them round-trips") {
    for (const fp8_format f : {fp8_format::e4m3, fp8_format::e5m2}) {
        int nans = 0;
        for (int code = 0; code < 256; ++code) {
            const auto b = static_cast<std::uint8_t>(code);
            const double v = fp8_bits_to_double(b, f);
            INFO("format " << int(f) << " code " << code << " value " << v);
            CHECK(same(v, nv_to_double(b, f)));
            if (std::isnan(v))
                ++nans;
            else if (!std::isinf(v))
                CHECK(double_to_fp8_bits(v, f) == b);
        }
        CHECK(nans == (f == fp8_format::e4m3 ? 2 : 6));
    }
    CHECK(fp8_bits_to_double(0x7E, fp8_format::e4m3) == 448.0);
    CHECK(fp8_bits_to_double(0x7B, fp8_format::e5m2) == 57344.0);
    CHECK(fp8_bits_to_double(0x01, fp8_format::e4m3) == std::ldexp(1.0, -9));
    CHECK(std::isinf(fp8_bits_to_double(0xFC, fp8_format::e5m2)));
}

TEST_CASE("doubles round to fp8 as cuda_fp8.h rounds them: ties to even, saturating, NaN kept") {
    std::vector<double> xs = {0.0,
                              -0.0,
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::nan(""),
                              -std::nan(""),
                              std::numeric_limits<double>::denorm_min(),
                              std::numeric_limits<double>::max(),
                              1e300,
                              464.0,  // halfway past e4m3's largest
                              61440.0};
    for (const fp8_format f : {fp8_format::e4m3, fp8_format::e5m2})
        for (int code = 0; code < 0x7F; ++code) {  // each gap's midpoint and its neighbours
            const double lo = fp8_bits_to_double(static_cast<std::uint8_t>(code), f),
                         hi = fp8_bits_to_double(static_cast<std::uint8_t>(code + 1), f);
            if (!std::isfinite(hi) || !std::isfinite(lo)) continue;
            const double mid = (lo + hi) / 2;
            for (const double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), lo,
                                   -mid, -std::nextafter(mid, 1e9)})
                xs.push_back(x);
        }
    std::mt19937_64 rng(28);
    std::uniform_real_distribution<double> mantissa(0.5, 1.0);
    std::uniform_int_distribution<int> exponent(-24, 20);
    for (int i = 0; i < 200000; ++i)
        xs.push_back((rng() & 1 ? -1 : 1) * std::ldexp(mantissa(rng), exponent(rng)));
    int differ = 0;
    for (const fp8_format f : {fp8_format::e4m3, fp8_format::e5m2})
        for (const double x : xs)
            if (double_to_fp8_bits(x, f) != nv_from_double(x, f) && ++differ <= 5)
                FAIL_CHECK("format " << int(f) << ": " << x << " -> "
                                     << int(double_to_fp8_bits(x, f)) << ", cuda_fp8.h "
                                     << int(nv_from_double(x, f)));
    CHECK(differ == 0);
}

TEST_CASE("fp8 buffers: poison is a NaN, scalars and elements go through the fp8 conversions") {
    for (const auto& [t, f] :
         {std::pair{dtype::f8e4m3, fp8_format::e4m3}, std::pair{dtype::f8e5m2, fp8_format::e5m2}}) {
        const auto poison = static_cast<std::uint8_t>(poison_bits(t));
        CHECK(std::isnan(fp8_bits_to_double(poison, f)));
        CHECK(encode_scalar(t, 1.0) == std::vector<unsigned char>{double_to_fp8_bits(1.0, f)});
        CHECK(encode_scalar(t, 1e6) == encode_scalar(t, 448.0 * 1e3));  // saturating
        CHECK(fp8_bits_to_double(encode_scalar(t, 1e6)[0], f) ==
              (t == dtype::f8e4m3 ? 448 : 57344));
        const std::vector<std::uint8_t> buffer = {double_to_fp8_bits(-2.5, f), poison,
                                                  double_to_fp8_bits(std::nan(""), f)};
        CHECK(element_as_double(t, buffer.data(), 0) == -2.5);
        // e4m3's one NaN is its poison: a NaN written there reads as never written.
        CHECK(count_poisoned(t, buffer.data(), buffer.size()) == (t == dtype::f8e4m3 ? 2u : 1u));
    }
}
