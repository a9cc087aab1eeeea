#pragma once
/// Counts a kernel's parameters from its compiled cubin (an ELF image), without asking
/// the driver: probing cuFuncGetParamInfo past the last parameter is an API error that
/// compute-sanitizer reports for every kernel. The count comes from the kernel's
/// `.nv.info.<lowered name>` section, which holds one EIATTR_KPARAM_INFO record per
/// parameter, used or not.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

/// The number of parameters of `lowered_name`, or nullopt when `cubin` is not a
/// little-endian ELF64 image, has no `.nv.info.<lowered_name>` section, or the section
/// does not read as expected (unknown record formats, parameter ordinals that are not
/// 0..n-1): the caller then falls back to asking the driver.
std::optional<std::size_t> count_kernel_params(const std::vector<char>& cubin,
                                               const std::string& lowered_name);

}  // namespace cuopt
