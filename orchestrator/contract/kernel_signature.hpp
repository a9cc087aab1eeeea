#pragma once
/// A kernel's C signature as the user gives it (--signature "void matmul_f32(const
/// float* a, const float* b, float* c, int m, int n, int k)"), parsed into its entry
/// name and parameters, so a manifest that disagrees with it (count, pointer vs
/// scalar, element type) stops the run before anything is compiled.

#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"

namespace cuopt {

struct manifest;

struct signature_param {
    std::string name;
    std::string type_text;  // as written, qualifiers removed: "float", "unsigned int"
    bool is_pointer = false;
    bool const_pointee = false;  // const before the '*': the kernel may not write through it
    std::optional<dtype> type;   // nullopt for types outside the dtype table
};

struct kernel_signature {
    std::string entry;
    std::vector<signature_param> params;
};

/// Every __global__ function's name in a source, in order.
std::vector<std::string> kernel_names(const std::string& source);

/// The first __global__ function's name in a source ("" when there is none).
std::string first_kernel_name(const std::string& source);

/// Parses; throws std::invalid_argument with what it could not read.
kernel_signature parse_kernel_signature(const std::string& text);

/// "" when the manifest's args agree with the signature, else every disagreement, one per line.
std::string check_signature(const kernel_signature& signature, const manifest& m);

}  // namespace cuopt
