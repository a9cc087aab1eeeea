#pragma once
/// The harness's own GPU helpers (built from support_kernels.cu by nvcc, embedded as
/// a fatbin): a stream-hold kernel that keeps the GPU from starting the timed loop
/// until the host has enqueued all of it, the on-GPU input generators, and a hash of a
/// buffer's bytes (to see whether a kernel wrote into an input).

#include <cstdint>

#include "common/element_check.h"
#include "common/request.hpp"
#include "harness/cuda_handles.hpp"

namespace cuopt {

class support_kernels {
  public:
    /// Loads the embedded fatbin into the current context; sm_count sizes generator grids.
    explicit support_kernels(int sm_count);

    /// Enqueues a kernel that spins until *release becomes non-zero (or timeout_ns passes,
    /// setting *timed_out). Both pointers are device views of mapped host memory.
    void hold_stream(CUstream stream, CUdeviceptr release, CUdeviceptr timed_out,
                     std::uint64_t timeout_ns) const;

    /// Evicts L2 by reading `bytes` of zeroed scratch at evict_last priority, then demotes the
    /// scratch's lines to evict_normal: two launches (bytes: a multiple of 16; sink: 4 bytes).
    void flush_l2(CUstream stream, CUdeviceptr scratch, std::size_t bytes, CUdeviceptr sink) const;

    /// Fills `count` elements at `buffer` with the values of launch `launch_index`.
    void generate(CUstream stream, CUdeviceptr buffer, dtype type, std::uint64_t count,
                  const generator_spec& spec, std::uint64_t launch_index) const;

    /// Adds a 64-bit, position-sensitive hash of `bytes` bytes at `buffer` (a driver
    /// allocation) into the 8 bytes at `sum`, which the caller zeroed on the same stream.
    void hash_bytes(CUstream stream, CUdeviceptr buffer, std::size_t bytes, CUdeviceptr sum) const;

    /// Checks `count` elements at `actual` against `expected` (both on the device) under `rule`
    /// (common/element_check.h) and returns the merged tally; waits for `stream`.
    cuopt_check::tally compare(CUstream stream, CUdeviceptr actual, CUdeviceptr expected,
                               std::uint64_t count, const cuopt_check::rule& rule) const;

  private:
    module_handle m_module;
    CUfunction m_hold{};
    CUfunction m_flush{};
    CUfunction m_demote{};
    CUfunction m_hash{};
    CUfunction m_compare{};
    CUfunction m_generate[k_dtype_count]{};
    int m_sm_count = 1;
};

}  // namespace cuopt
