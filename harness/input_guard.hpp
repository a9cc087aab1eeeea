#pragma once
/// Whether a kernel wrote into its inputs. Every declared input of a case (an argument that
/// has values in and no output: an in-place `inout` argument is exempt) is hashed on the GPU
/// as the checked launch must see it and again right after that launch; an input whose hash
/// changed was written by the kernel. The hashes are support kernels on the case's stream,
/// enqueued outside any timed region, so no buffer is ever copied to the host for this.

#include <string>
#include <vector>

#include "common/request.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

class input_guard {
  public:
    /// One guarded input: its name, the buffer the kernel sees and its bytes.
    struct guarded {
        std::string name;
        CUdeviceptr working{};
        std::size_t bytes = 0;
    };
    /// Guards `inputs` on `stream` (the case's).
    input_guard(const support_kernels& support, CUstream stream, std::vector<guarded> inputs);

    /// Whether an argument is guarded: a buffer with values in and no output.
    static bool guards(const kernel_arg& a) {
        return a.is_buffer && a.has_input() && !a.is_output();
    }

    /// Hashes `values` (as many bytes as the input has) as what the checked launch must see
    /// of the input `name`; a second call replaces the first. Unknown names are ignored.
    void expect(const std::string& name, CUdeviceptr values);
    /// The checked launch is enqueued next: the following hash_after() hashes the inputs.
    void arm() { m_armed = true; }
    /// Right after the checked launch, before anything rewrites an input: hashes every
    /// guarded buffer as the kernel left it. Does nothing unless armed; disarms.
    void hash_after();
    /// The inputs hashed both ways whose hashes differ, in argument order (waits for the
    /// stream; an input never hashed both ways is not named).
    std::vector<std::string> changed() const;

  private:
    /// Zeroes the slot and adds the hash of `bytes` at `from` into it.
    void hash_into(std::size_t slot, CUdeviceptr from, std::size_t bytes) const;

    const support_kernels& m_support;
    CUstream m_stream;
    std::vector<guarded> m_inputs;
    std::vector<bool> m_expected, m_after;  // per input: which of its two slots hold a hash
    device_buffer m_sums;                   // 8 bytes each: [2i] expected, [2i + 1] after
    bool m_armed = false;
};

}  // namespace cuopt
