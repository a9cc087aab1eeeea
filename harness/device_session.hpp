#pragma once
/// What a harness process keeps on a device from one request to the next: the retained
/// primary context, the support kernels' module and the L2-flush scratch. A one-shot harness
/// uses it once; a worker (cuda-harness --worker) serves many requests from it, which is
/// where the ~0.2 s of driver and context start-up per candidate goes. Candidate modules are
/// not kept: each request loads its own, so `__device__` state never outlives a request.
/// Never released: the process ends (or the worker exits after a sticky error) and the
/// driver reclaims it all.

#include <cstddef>

#include "harness/cuda_handles.hpp"
#include "harness/device_info.hpp"
#include "harness/support_kernels.hpp"

namespace cuopt {

class device_session {
  public:
    /// The session of device `index`, made on first use, its context current on this thread.
    static device_session& on(int index, const device_fingerprint& device);

    const support_kernels& support() const { return m_support; }
    /// At least `bytes` of scratch that the L2 flush reads, grown when asked for more; the
    /// caller zeroes what it uses before each case, so no request reads another's values.
    const device_buffer& l2_scratch(std::size_t bytes);
    /// Where the flush kernel writes the sum it must not let the compiler drop.
    const device_buffer& flush_sink() const { return m_flush_sink; }

  private:
    device_session(int index, const device_fingerprint& device);

    primary_context m_context;
    support_kernels m_support;
    device_buffer m_l2_scratch;
    device_buffer m_flush_sink;
};

}  // namespace cuopt
