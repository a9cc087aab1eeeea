#include "dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "element_check.h"

namespace cuopt {

namespace {

struct dtype_row {
    dtype type;
    const char* name;
    std::size_t size;
    std::uint64_t poison;
};

// The poison patterns are NaNs whose payload reads "DEAD"/"EA" in a hex dump.
constexpr dtype_row k_rows[] = {
    {dtype::f16, "f16", 2, 0x7FEAull},
    {dtype::bf16, "bf16", 2, 0x7FEAull},
    {dtype::f32, "f32", 4, 0x7FF8DEADull},
    {dtype::f64, "f64", 8, 0x7FF8DEAD7FF8DEADull},
    {dtype::i8, "i8", 1, 0xA5ull},
    {dtype::u8, "u8", 1, 0xA5ull},
    {dtype::i16, "i16", 2, 0xA5A5ull},
    {dtype::u16, "u16", 2, 0xA5A5ull},
    {dtype::i32, "i32", 4, 0xA5A5A5A5ull},
    {dtype::u32, "u32", 4, 0xA5A5A5A5ull},
    {dtype::i64, "i64", 8, 0xA5A5A5A5A5A5A5A5ull},
    {dtype::u64, "u64", 8, 0xA5A5A5A5A5A5A5A5ull},
    {dtype::f8e4m3, "f8e4m3", 1, 0x7Full},
    {dtype::f8e5m2, "f8e5m2", 1, 0x7Full},
};
static_assert(sizeof(k_rows) / sizeof(k_rows[0]) == k_dtype_count, "a row for every dtype");
// element_check.h (host and GPU comparison) numbers the dtypes the same way.
static_assert(static_cast<int>(dtype::f16) == cuopt_check::f16 &&
                  static_cast<int>(dtype::f32) == cuopt_check::f32 &&
                  static_cast<int>(dtype::i64) == cuopt_check::i64 &&
                  static_cast<int>(dtype::u64) == cuopt_check::u64 &&
                  static_cast<int>(dtype::f8e4m3) == cuopt_check::f8e4m3 &&
                  static_cast<int>(dtype::f8e5m2) == cuopt_check::f8e5m2 &&
                  k_dtype_count == cuopt_check::f8e5m2 + 1,
              "element_check.h's kinds follow dtype's order");

const dtype_row& row(dtype t) {
    return k_rows[static_cast<int>(t)];
}

template <typename T>
std::vector<unsigned char> bytes_of(T v) {
    std::vector<unsigned char> out(sizeof(T));
    std::memcpy(out.data(), &v, sizeof(T));
    return out;
}

// long double carries every 64-bit integer exactly (x86-64: 64-bit mantissa), so the
// range check is exact at both ends, 2^64 - 1 included.
template <typename T, typename Text>
std::vector<unsigned char> encode_integer(dtype t, long double value, const Text& text) {
    if (!std::isfinite(value) || std::floor(value) != value ||
        value < static_cast<long double>(std::numeric_limits<T>::lowest()) ||
        value > static_cast<long double>(std::numeric_limits<T>::max())) {
        // The line says what was expected: the dtype's range.
        const std::string low =
            std::numeric_limits<T>::is_signed
                ? std::to_string(static_cast<long long>(std::numeric_limits<T>::lowest()))
                : "0";
        const std::string high =
            std::to_string(static_cast<unsigned long long>(std::numeric_limits<T>::max()));
        throw std::invalid_argument("value " + text() + " is not a " + std::string(dtype_name(t)) +
                                    " integer; expected a whole number from " + low + " to " +
                                    high);
    }
    return bytes_of(static_cast<T>(value));
}

// One encoder for every dtype; `text()` is how the value reads in a message (made only for one:
// the fake harness encodes every element of its buffers through here).
template <typename Text>
std::vector<unsigned char> encode(dtype t, long double value, const Text& text) {
    if (is_float(t) && t != dtype::f64 && std::isfinite(value) &&
        std::fabs(value) > static_cast<long double>(std::numeric_limits<float>::max()))
        throw std::invalid_argument("value " + text() + " does not fit " +
                                    std::string(dtype_name(t)));
    switch (t) {
        case dtype::f16:
            return bytes_of(float_to_half_bits(static_cast<float>(value)));
        case dtype::bf16:
            return bytes_of(float_to_bf16_bits(static_cast<float>(value)));
        case dtype::f32:
            return bytes_of(static_cast<float>(value));
        case dtype::f64:
            return bytes_of(static_cast<double>(value));
        case dtype::i8:
            return encode_integer<std::int8_t>(t, value, text);
        case dtype::u8:
            return encode_integer<std::uint8_t>(t, value, text);
        case dtype::i16:
            return encode_integer<std::int16_t>(t, value, text);
        case dtype::u16:
            return encode_integer<std::uint16_t>(t, value, text);
        case dtype::i32:
            return encode_integer<std::int32_t>(t, value, text);
        case dtype::u32:
            return encode_integer<std::uint32_t>(t, value, text);
        case dtype::i64:
            return encode_integer<std::int64_t>(t, value, text);
        case dtype::u64:
            return encode_integer<std::uint64_t>(t, value, text);
        case dtype::f8e4m3:  // saturating, as the GPU's generators convert
            return bytes_of(double_to_fp8_bits(static_cast<double>(value), fp8_format::e4m3));
        case dtype::f8e5m2:
            return bytes_of(double_to_fp8_bits(static_cast<double>(value), fp8_format::e5m2));
    }
    throw std::logic_error("unhandled dtype");
}

}  // namespace

std::size_t dtype_size(dtype t) {
    return row(t).size;
}
std::string_view dtype_name(dtype t) {
    return row(t).name;
}
std::uint64_t poison_bits(dtype t) {
    return row(t).poison;
}

std::optional<dtype> parse_dtype(std::string_view name) {
    for (const auto& r : k_rows)
        if (name == r.name) return r.type;
    return std::nullopt;
}

std::string dtype_names_list() {
    std::string out;
    for (const auto& r : k_rows) {
        if (!out.empty()) out += ", ";
        out += r.name;
    }
    return out;
}

bool is_float(dtype t) {
    return t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64 ||
           t == dtype::f8e4m3 || t == dtype::f8e5m2;
}

bool is_signed_integer(dtype t) {
    return t == dtype::i8 || t == dtype::i16 || t == dtype::i32 || t == dtype::i64;
}

std::size_t count_poisoned(dtype t, const void* data, std::size_t count) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    const std::size_t size = dtype_size(t);
    const std::uint64_t poison = poison_bits(t);
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, bytes + i * size, size);  // little-endian host
        n += (v == poison);
    }
    return n;
}

std::uint16_t float_to_half_bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t abs = x & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);   // NaN
    if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow/inf
    if (abs < 0x38800000u) {  // subnormal or zero in half
        if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);
        const std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
        std::uint32_t h = mant >> shift;
        const std::uint32_t rem = mant & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) ++h;
        return static_cast<std::uint16_t>(sign | h);
    }
    std::uint32_t h = ((abs - 0x38000000u) >> 13);
    const std::uint32_t rem = abs & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float half_bits_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1Fu;
    const std::uint32_t mant = h & 0x3FFu;
    float out;
    if (exp == 0) {
        out = std::ldexp(static_cast<float>(mant), -24);
        if (sign) out = -out;
        return out;
    }
    std::uint32_t x =
        sign | (exp == 31 ? (0xFFu << 23) | (mant << 13) : ((exp + 112u) << 23) | (mant << 13));
    std::memcpy(&out, &x, 4);
    return out;
}

std::uint16_t float_to_bf16_bits(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
    const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t b) {
    const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
    float out;
    std::memcpy(&out, &x, 4);
    return out;
}

namespace {

struct fp8_layout {
    int mantissa_bits;
    int bias;
    double largest;     // finite
    std::uint8_t nan;   // what a NaN converts to (sign apart)
    bool has_infinity;  // e5m2: exponent all ones with a zero mantissa
};

fp8_layout layout_of(fp8_format f) {
    return f == fp8_format::e4m3 ? fp8_layout{3, 7, 448.0, 0x7F, false}
                                 : fp8_layout{2, 15, 57344.0, 0x7E, true};
}

// The code of a value the format holds exactly, 0 <= v <= largest.
std::uint8_t exact_fp8_code(double v, const fp8_layout& l) {
    if (v == 0) return 0;
    const int min_exp = 1 - l.bias;  // the smallest normal exponent
    int e = 0;
    std::frexp(v, &e);
    const int exp = e - 1;  // v in [2^exp, 2^(exp+1))
    if (exp < min_exp)      // subnormal: exponent field 0, v = mantissa * 2^(min_exp - m)
        return static_cast<std::uint8_t>(std::ldexp(v, l.mantissa_bits - min_exp));
    const double mantissa = std::ldexp(v, l.mantissa_bits - exp) - std::ldexp(1.0, l.mantissa_bits);
    return static_cast<std::uint8_t>(((exp + l.bias) << l.mantissa_bits) |
                                     static_cast<int>(mantissa));
}

}  // namespace

std::uint8_t double_to_fp8_bits(double x, fp8_format f) {
    const fp8_layout l = layout_of(f);
    const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
    if (std::isnan(x)) return sign | l.nan;
    const double a = std::fabs(x);
    const std::uint8_t largest = exact_fp8_code(l.largest, l);
    if (a >= l.largest) return sign | largest;  // infinity included
    // The spacing of the format's values at `a` (that of the subnormals below the normals):
    // scaling by a power of two is exact, so the one rounding is nearbyint's, ties to even.
    int e = 0;
    std::frexp(a, &e);
    const int spacing_exp = std::max(e - 1, 1 - l.bias) - l.mantissa_bits;
    const double rounded = std::ldexp(std::nearbyint(std::ldexp(a, -spacing_exp)), spacing_exp);
    return sign | (rounded > l.largest ? largest : exact_fp8_code(rounded, l));
}

double fp8_bits_to_double(std::uint8_t bits, fp8_format f) {
    const fp8_layout l = layout_of(f);
    const int exp_bits = 7 - l.mantissa_bits;
    const int exp_field = (bits >> l.mantissa_bits) & ((1 << exp_bits) - 1);
    const int mantissa = bits & ((1 << l.mantissa_bits) - 1);
    const bool negative = (bits & 0x80) != 0;
    double v = 0;
    if (exp_field == (1 << exp_bits) - 1 &&
        (l.has_infinity || mantissa == (1 << l.mantissa_bits) - 1))
        v = l.has_infinity && mantissa == 0 ? std::numeric_limits<double>::infinity()
                                            : std::numeric_limits<double>::quiet_NaN();
    else if (exp_field == 0)
        v = std::ldexp(mantissa, 1 - l.bias - l.mantissa_bits);
    else
        v = std::ldexp(mantissa + (1 << l.mantissa_bits), exp_field - l.bias - l.mantissa_bits);
    return negative ? -v : v;
}

std::vector<unsigned char> encode_scalar(dtype t, double value) {
    return encode(t, value, [value] {
        char text[32];
        std::snprintf(text, sizeof text, "%.17g", value);
        return std::string(text);
    });
}

double largest_finite(dtype t) {
    switch (t) {
        case dtype::f16:
            return 65504.0;
        case dtype::bf16:
            return static_cast<double>(bf16_bits_to_float(0x7F7F));
        case dtype::f32:
            return std::numeric_limits<float>::max();
        case dtype::f64:
            return std::numeric_limits<double>::max();
        case dtype::f8e4m3:
            return 448.0;
        case dtype::f8e5m2:
            return 57344.0;
        default:
            return static_cast<double>(std::ldexp(1.0L, static_cast<int>(8 * dtype_size(t)) -
                                                            (is_signed_integer(t) ? 1 : 0)) -
                                       1);
    }
}

std::string value_fit_problem(dtype t, double value) {
    if (!is_float(t)) {
        try {
            encode_scalar(t, value);
            return "";
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
    }
    if (std::isfinite(value) && std::fabs(value) <= largest_finite(t)) return "";
    // The value as written: the fewest digits that read back as it (1e39, not 9.99...e+38).
    char shown[32] = "";
    for (int digits = 6; digits <= 17; ++digits) {
        std::snprintf(shown, sizeof shown, "%.*g", digits, value);
        if (std::strtod(shown, nullptr) == value) break;
    }
    char text[160];
    std::snprintf(text, sizeof text, "value %s does not fit %s: expected a magnitude of at most %g",
                  shown, std::string(dtype_name(t)).c_str(), largest_finite(t));
    return std::string(text) + (t == dtype::f8e4m3 || t == dtype::f8e5m2
                                    ? " (beyond it the conversion saturates)"
                                    : " (beyond it the value is not kept: it rounds to infinity, "
                                      "or just past the largest value, down to it)");
}

std::vector<unsigned char> encode_integer_scalar(dtype t, std::int64_t value) {
    return encode(t, static_cast<long double>(value), [value] { return std::to_string(value); });
}

std::vector<unsigned char> encode_integer_scalar(dtype t, std::uint64_t value) {
    return encode(t, static_cast<long double>(value), [value] { return std::to_string(value); });
}

double element_as_double(dtype t, const void* data, std::size_t i) {
    const auto* p = static_cast<const unsigned char*>(data) + i * dtype_size(t);
    auto load = [p](auto v) {
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    switch (t) {
        case dtype::f16:
            return half_bits_to_float(load(std::uint16_t{}));
        case dtype::bf16:
            return bf16_bits_to_float(load(std::uint16_t{}));
        case dtype::f32:
            return load(float{});
        case dtype::f64:
            return load(double{});
        case dtype::i8:
            return load(std::int8_t{});
        case dtype::u8:
            return load(std::uint8_t{});
        case dtype::i16:
            return load(std::int16_t{});
        case dtype::u16:
            return load(std::uint16_t{});
        case dtype::i32:
            return load(std::int32_t{});
        case dtype::u32:
            return load(std::uint32_t{});
        case dtype::i64:
            return static_cast<double>(load(std::int64_t{}));
        case dtype::u64:
            return static_cast<double>(load(std::uint64_t{}));
        case dtype::f8e4m3:
            return fp8_bits_to_double(load(std::uint8_t{}), fp8_format::e4m3);
        case dtype::f8e5m2:
            return fp8_bits_to_double(load(std::uint8_t{}), fp8_format::e5m2);
    }
    return 0.0;
}

}  // namespace cuopt
