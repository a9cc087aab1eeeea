#pragma once
/// What the harness reads from a compiled cubin (an ELF image) without asking the driver.
/// A kernel's parameter count: probing cuFuncGetParamInfo past the last parameter is an API
/// error that compute-sanitizer reports for every kernel; the count comes from the kernel's
/// `.nv.info.<lowered name>` section, one EIATTR_KPARAM_INFO record per parameter, used or
/// not. And the module's footprint in the context beyond its buffers (the device heap's
/// system calls it imports, its writable globals), which decides whether a worker may serve
/// another request after it.

#include <cstddef>
#include <cstdint>
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

/// What a module can leave behind in its CUDA context once it is unloaded.
struct module_footprint {
    /// Device-heap system calls the cubin imports (undefined symbols: malloc, free,
    /// __cuda_syscall_aligned_malloc); in-kernel new and delete lower to malloc and free.
    std::vector<std::string> heap_calls;
    /// Sizes of its `.nv.global` and `.nv.global.init` sections (__device__ variables).
    std::uint64_t writable_global_bytes = 0;
};

/// The footprint, or nullopt when `cubin` is not an ELF64 image with a readable symbol table.
std::optional<module_footprint> read_module_footprint(const std::vector<char>& cubin);

/// Why a worker must exit after running this cubin's kernel, or "" when it may go on: the
/// kernel can malloc (heap blocks never freed stay, at deterministic addresses, until the
/// context ends, and CU_LIMIT_MALLOC_HEAP_SIZE can no longer be changed), or its module has
/// writable globals (their memory goes back to the allocator unzeroed when it unloads), or the
/// image does not read (unknown counts as both).
std::string worker_retire_reason(const std::vector<char>& cubin);

}  // namespace cuopt
