#include "harness/launch_timer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace cuopt {

namespace {

constexpr std::uint64_t k_hold_timeout_ns = 10'000'000'000ull;  // 10 s
constexpr int k_max_batch = 32;  // timed launches enqueued behind one hold
// Stream commands the GPU has already fetched when a hold is released. On the H200 the
// first ~40 commands after a release run without fetch stalls; later ones add ~0.7 us to
// an empty kernel's sample (tools/bench/event_floor.cpp measures this). Batches are sized
// to stay well inside that window.
constexpr int k_prefetched_commands = 16;
// CUPTI delivers a finished kernel's record on a flush; a record still missing after the
// stream synchronised gets this many more flushes, a millisecond apart.
constexpr int k_flush_retries = 3;

}  // namespace

launch_timer::launch_timer(const support_kernels& support, CUstream stream, bool hold,
                           kernel_trace* trace)
    : m_support(support),
      m_stream(stream),
      m_hold(hold),
      m_trace(trace),
      m_hold_flags(2 * sizeof(int)) {}

void launch_timer::collect_cupti(std::size_t launches, bool single_kernel,
                                 timed_samples& out) const {
    std::vector<kernel_record> records;
    std::vector<launch_call> calls;
    attributed_samples a;
    for (int attempt = 0; attempt <= k_flush_retries; ++attempt) {
        if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        m_trace->collect(&records, &calls);
        a = attribute_samples(records, calls, launches, single_kernel);
        if (a.missing == 0 || !a.problem.empty()) break;
    }
    out.problem = a.problem;
    out.cupti_ms.clear();
    out.cupti_note.clear();
    if (a.missing == 0)
        out.cupti_ms = std::move(a.samples_ms);
    else
        out.cupti_note = "CUPTI reported no kernel for " + std::to_string(a.missing) + " of " +
                         std::to_string(launches) + " timed launches" +
                         (m_trace->dropped() ? " (it dropped records)" : "") +
                         "; CUDA events time this case";
}

timed_samples launch_timer::time(const timing_config& timing, int commands_per_launch,
                                 bool single_kernel, const std::function<void()>& prepare,
                                 const std::function<void()>& launch) {
    timed_samples out;
    out.stream_held = m_hold;
    const int cap = timing.iterations;
    const int batch = m_hold ? std::clamp(k_prefetched_commands / commands_per_launch, 1,
                                          std::min(k_max_batch, cap))
                             : std::min(k_max_batch, cap);
    std::vector<event_handle> starts, stops;
    for (int i = 0; i < batch; ++i) {
        starts.push_back(make_event());
        stops.push_back(make_event());
    }
    if (m_trace) m_trace->reset();
    auto* flags = static_cast<volatile int*>(m_hold_flags.host());
    const CUdeviceptr release = m_hold_flags.device(),
                      timed_out = m_hold_flags.device() + sizeof(int);
    for (int done = 0;;) {
        const int n = std::min(batch, cap - done);
        // The GPU is idle here: no line the candidate could have made persist survives into
        // the batch (the harness sets no access-policy window; this is belt and braces).
        CU_CALL(cuCtxResetPersistingL2Cache());
        flags[0] = 0;
        flags[1] = 0;
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (m_hold) m_support.hold_stream(m_stream, release, timed_out, k_hold_timeout_ns);
        for (int i = 0; i < n; ++i) {
            prepare();
            CU_CALL(cuEventRecord(starts[i].get(), m_stream));
            if (m_trace) m_trace->begin_launch(static_cast<std::size_t>(done + i));
            launch();
            if (m_trace) m_trace->end_launch();
            CU_CALL(cuEventRecord(stops[i].get(), m_stream));
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
        flags[0] = 1;  // the whole batch is queued: let the GPU go
        CU_CALL(cuStreamSynchronize(m_stream));
        out.stream_hold_timed_out |= flags[1] != 0;
        for (int i = 0; i < n; ++i) {
            float ms = 0;
            CU_CALL(cuEventElapsedTime(&ms, starts[i].get(), stops[i].get()));
            out.event_ms.push_back(ms);
        }
        done += n;
        // Fixed loops read CUPTI once at the end; adaptive ones after every batch.
        if (m_trace && (timing.mode == timing_mode::adaptive || done == cap))
            collect_cupti(static_cast<std::size_t>(done), single_kernel, out);
        if (!out.problem.empty()) return out;
        if (const auto rule = stop_now(timing, out.primary())) {
            out.rule = *rule;
            return out;
        }
    }
}

}  // namespace cuopt
