#include "harness/event_timer.hpp"

#include <algorithm>
#include <atomic>

namespace cuopt {

namespace {

constexpr std::uint64_t k_hold_timeout_ns = 10'000'000'000ull;  // 10 s
constexpr int k_max_batch = 32;  // timed launches enqueued behind one hold
// Stream commands the GPU has already fetched when a hold is released. On the H200 the
// first ~40 commands after a release run without fetch stalls; later ones add ~0.7 us to
// an empty kernel's sample (tools/bench/event_floor.cpp measures this). Batches are sized
// to stay well inside that window.
constexpr int k_prefetched_commands = 16;

}  // namespace

event_timer::event_timer(const support_kernels& support, CUstream stream, bool hold)
    : m_support(support), m_stream(stream), m_hold(hold), m_hold_flags(2 * sizeof(int)) {}

timed_samples event_timer::time(int iterations, int commands_per_launch,
                                const std::function<void()>& prepare,
                                const std::function<void()>& launch) {
    timed_samples out;
    out.stream_held = m_hold;
    const int batch = m_hold ? std::clamp(k_prefetched_commands / commands_per_launch, 1,
                                          std::min(k_max_batch, iterations))
                             : std::min(k_max_batch, iterations);
    std::vector<event_handle> starts, stops;
    for (int i = 0; i < batch; ++i) {
        starts.push_back(make_event());
        stops.push_back(make_event());
    }
    auto* flags = static_cast<volatile int*>(m_hold_flags.host());
    const CUdeviceptr release = m_hold_flags.device(),
                      timed_out = m_hold_flags.device() + sizeof(int);
    for (int done = 0; done < iterations;) {
        const int n = std::min(batch, iterations - done);
        flags[0] = 0;
        flags[1] = 0;
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (m_hold) m_support.hold_stream(m_stream, release, timed_out, k_hold_timeout_ns);
        for (int i = 0; i < n; ++i) {
            prepare();
            CU_CALL(cuEventRecord(starts[i].get(), m_stream));
            launch();
            CU_CALL(cuEventRecord(stops[i].get(), m_stream));
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
        flags[0] = 1;  // the whole batch is queued: let the GPU go
        CU_CALL(cuStreamSynchronize(m_stream));
        out.stream_hold_timed_out |= flags[1] != 0;
        for (int i = 0; i < n; ++i) {
            float ms = 0;
            CU_CALL(cuEventElapsedTime(&ms, starts[i].get(), stops[i].get()));
            out.samples_ms.push_back(ms);
        }
        done += n;
    }
    return out;
}

}  // namespace cuopt
