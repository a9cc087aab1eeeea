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

enum class dtype { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64 };

std::size_t dtype_size(dtype t);
std::string_view dtype_name(dtype t);
std::optional<dtype> parse_dtype(std::string_view name);
/// Every accepted name, for error messages ("expected one of f16, bf16, ...").
std::string dtype_names_list();
bool is_float(dtype t);
bool is_signed_integer(dtype t);

/// The bit pattern written into every output element before a launch: a quiet NaN
/// with a recognisable payload for floats, 0xA5... for integers. An element that
/// still holds it afterwards was never written.
std::uint64_t poison_bits(dtype t);

/// Counts elements of a raw buffer that still hold the poison pattern.
std::size_t count_poisoned(dtype t, const void* data, std::size_t count);

/// Encodes a scalar kernel argument as the bytes the kernel expects.
/// Throws std::invalid_argument when the value does not fit the type.
std::vector<unsigned char> encode_scalar(dtype t, double value);
/// The same for an integer literal, exact for every 64-bit value (2^64 - 1 included).
std::vector<unsigned char> encode_integer_scalar(dtype t, std::int64_t value);
std::vector<unsigned char> encode_integer_scalar(dtype t, std::uint64_t value);

/// IEEE binary16 / bfloat16 conversions (round to nearest even), host side.
std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);

/// Reads element i of a raw buffer as double (for checks and statistics).
double element_as_double(dtype t, const void* data, std::size_t i);

}  // namespace cuopt
