#pragma once
/// Element types a kernel argument can have, with their sizes, names, poison
/// patterns and host-side scalar encodings. One table shared by both programs so
/// that "f16" means the same two bytes everywhere.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

enum class dtype { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, f8e4m3, f8e5m2 };
/// How many dtypes there are (the last one's index + 1), for tables indexed by dtype.
inline constexpr int k_dtype_count = static_cast<int>(dtype::f8e5m2) + 1;

std::size_t dtype_size(dtype t);
std::string_view dtype_name(dtype t);
std::optional<dtype> parse_dtype(std::string_view name);
/// Every accepted name, for error messages ("expected one of f16, bf16, ...").
std::string dtype_names_list();
bool is_float(dtype t);
bool is_signed_integer(dtype t);

/// The bit pattern written into every output element before a launch: a quiet NaN
/// with a recognisable payload for floats, 0xA5... for integers. An element that
/// still holds it afterwards was never written. f8e4m3 has one NaN per sign (0x7F/0xFF):
/// its poison is that NaN, so a NaN the kernel wrote counts as unwritten. f8e5m2's is 0x7F,
/// a NaN no conversion makes (they give 0x7E).
std::uint64_t poison_bits(dtype t);

/// Counts elements of a raw buffer that still hold the poison pattern.
std::size_t count_poisoned(dtype t, const void* data, std::size_t count);

/// Encodes a scalar kernel argument as the bytes the kernel expects.
/// Throws std::invalid_argument when the value does not fit the type.
std::vector<unsigned char> encode_scalar(dtype t, double value);
/// The largest finite value of a floating-point dtype (f16 65504, bf16 ~3.39e38, f8e4m3 448,
/// f8e5m2 57344); for an integer dtype its largest value.
double largest_finite(dtype t);
/// Why `value` cannot be given as a `t` and mean what it says ("" when it can): an integer dtype
/// takes an integer in its range; a float dtype a finite value of magnitude at most its largest
/// (beyond it the conversion gives infinity, f16 and bf16, or saturates, fp8).
std::string value_fit_problem(dtype t, double value);
/// The same for an integer literal, exact for every 64-bit value (2^64 - 1 included).
std::vector<unsigned char> encode_integer_scalar(dtype t, std::int64_t value);
std::vector<unsigned char> encode_integer_scalar(dtype t, std::uint64_t value);

/// IEEE binary16 / bfloat16 conversions (round to nearest even), host side.
std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);

/// The two 8-bit float formats of OCP FP8 (cuda_fp8.h's __NV_E4M3 and __NV_E5M2):
/// e4m3: bias 7, largest finite 448, no infinity, NaN 0x7F/0xFF;
/// e5m2: bias 15, largest finite 57344, infinity 0x7C, NaN 0x7D..0x7F.
enum class fp8_format { e4m3, e5m2 };
/// A double rounded to the nearest fp8 value (ties to even), saturating: a value beyond the
/// largest finite one, infinity included, becomes it (cuda_fp8.h's __NV_SATFINITE). NaN stays
/// NaN (e4m3 0x7F, e5m2 0x7E, the sign kept), as __nv_cvt_double_to_fp8 gives it.
std::uint8_t double_to_fp8_bits(double x, fp8_format f);
/// Exact: every fp8 value is a double.
double fp8_bits_to_double(std::uint8_t bits, fp8_format f);

/// Reads element i of a raw buffer as double (for checks and statistics).
double element_as_double(dtype t, const void* data, std::size_t i);

}  // namespace cuopt
