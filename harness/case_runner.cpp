#include "harness/case_runner.hpp"

#include <algorithm>

namespace cuopt {

namespace {

std::string dims(const std::array<unsigned, 3>& d) {
    return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           "]";
}

// The old way to count parameters, for a cubin without a readable .nv.info section: asking
// the driver about indices until it says there is none (which sanitizers report as an error).
std::size_t probe_param_count(CUfunction kernel) {
    std::size_t count = 0, offset = 0, size = 0;
    while (driver().cuFuncGetParamInfo(kernel, count, &offset, &size) == CUDA_SUCCESS) ++count;
    return count;
}

}  // namespace

std::string check_launch(const run_case& c, const device_fingerprint& device, CUfunction kernel,
                         std::size_t static_shared_bytes) {
    const auto& l = c.launch;
    for (int i = 0; i < 3; ++i) {
        if (l.block[i] > static_cast<unsigned>(device.max_block_dim[i]))
            return "launch.block: " + dims(l.block) + " exceeds the device's maximum block " +
                   dims({unsigned(device.max_block_dim[0]), unsigned(device.max_block_dim[1]),
                         unsigned(device.max_block_dim[2])}) +
                   " on " + device.name;
        if (l.grid[i] > static_cast<unsigned>(device.max_grid_dim[i]))
            return "launch.grid: " + dims(l.grid) + " exceeds the device's maximum grid " +
                   dims({unsigned(device.max_grid_dim[0]), unsigned(device.max_grid_dim[1]),
                         unsigned(device.max_grid_dim[2])}) +
                   " on " + device.name;
    }
    const unsigned long long threads = 1ull * l.block[0] * l.block[1] * l.block[2];
    int kernel_max = 0;
    CU_CALL(cuFuncGetAttribute(&kernel_max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel));
    if (threads > static_cast<unsigned long long>(kernel_max))
        return "launch.block: " + dims(l.block) + " is " + std::to_string(threads) +
               " threads per block; this kernel can run at most " + std::to_string(kernel_max) +
               " on " + device.name;
    const unsigned long long shared = static_shared_bytes + l.dynamic_shared_bytes;
    if (shared > static_cast<unsigned long long>(device.max_shared_per_block_optin_bytes))
        return "launch.dynamic_shared_bytes: " + std::to_string(l.dynamic_shared_bytes) + " plus " +
               std::to_string(static_shared_bytes) + " static bytes exceeds the " +
               std::to_string(device.max_shared_per_block_optin_bytes) +
               " bytes of shared memory per block on " + device.name;
    return "";
}

std::string check_arguments(const run_case& c, CUfunction kernel,
                            std::optional<std::size_t> param_count) {
    const std::size_t n = c.args.size();
    const std::size_t count = param_count ? *param_count : probe_param_count(kernel);
    if (count != n)
        return "args: the kernel takes " + std::to_string(count) +
               " parameter(s) but the case gives " + std::to_string(n);
    for (std::size_t i = 0; i < n; ++i) {  // only indices below the count: no API error
        std::size_t offset = 0, size = 0;
        CU_CALL(cuFuncGetParamInfo(kernel, i, &offset, &size));
        const kernel_arg& a = c.args[i];
        const std::size_t expected = a.is_buffer ? sizeof(CUdeviceptr) : dtype_size(a.type);
        if (size != expected)
            return "args[" + std::to_string(i) + "] ('" + a.name + "'): kernel parameter " +
                   std::to_string(i) + " is " + std::to_string(size) + " bytes but " +
                   (a.is_buffer ? "a buffer pointer is "
                                : "a " + std::string(dtype_name(a.type)) + " scalar is ") +
                   std::to_string(expected) + " bytes";
    }
    return "";
}

std::function<void()> kernel_launcher::bind(const run_case& c,
                                            const std::vector<live_buffer>& buffers,
                                            CUstream stream) {
    std::vector<void*> params;
    std::size_t next_buffer = 0;
    for (const kernel_arg& a : c.args)
        params.push_back(
            a.is_buffer ? const_cast<CUdeviceptr*>(&buffers[next_buffer++].param)
                        : static_cast<void*>(const_cast<unsigned char*>(a.scalar_bytes.data())));
    const launch_config l = c.launch;
    if (l.dynamic_shared_bytes > 48 * 1024)
        CU_CALL(cuFuncSetAttribute(m_kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(l.dynamic_shared_bytes)));
    return [kernel = m_kernel, params, l, stream]() mutable {
        CU_CALL(cuLaunchKernel(kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                               l.block[2], l.dynamic_shared_bytes, stream, params.data(), nullptr));
    };
}

case_runner::case_runner(const device_fingerprint& device, device_session& session,
                         case_launcher& launcher, const timing_config& timing, const clocks& clocks)
    : m_launcher(launcher),
      m_timing(timing),
      m_buffers(device, session, timing),
      m_outputs(m_buffers, timing, device.pageable_memory_access),
      m_clocks(clocks),
      m_timer(session.support(), m_buffers.stream().get(), clocks.hold_stream,
              timing.timer == timer_choice::events ? nullptr : clocks.trace) {
    m_buffers.zero_l2_scratch();  // the stream's first command, once the timer is made
}

bool case_runner::record_samples(timed_samples t, case_outcome& out) const {
    out.stream_held = t.stream_held;
    out.stream_hold_timed_out = t.stream_hold_timed_out;
    if (!t.problem.empty()) {
        out.status = case_run_status::invalid_timing;
        out.error = "case '" + out.name + "': " + t.problem +
                    "; a timed sample must hold the case's kernel alone";
        return false;
    }
    const bool cupti = !t.cupti_ms.empty();
    out.timer = cupti ? "cupti" : "events";
    out.timer_note = cupti                                    ? ""
                     : !t.cupti_note.empty()                  ? t.cupti_note
                     : m_timing.timer == timer_choice::events ? "timing.timer is events"
                                                              : m_clocks.trace_note;
    out.samples_ms = t.primary();
    out.iterations = static_cast<int>(out.samples_ms.size());
    out.rule = t.rule;
    out.stats_ms = summarize(out.samples_ms);
    out.relative_standard_error = median_relative_standard_error(out.samples_ms);
    out.event_samples_ms = std::move(t.event_ms);
    out.cupti_samples_ms = std::move(t.cupti_ms);
    return true;
}

case_outcome case_runner::run(const run_case& c) {
    case_outcome out;
    out.name = c.name;
    out.measured = c.measure;
    const CUstream stream = m_buffers.stream().get();
    std::vector<live_buffer> buffers = m_buffers.make_buffers(c);
    out.entry = m_launcher.entry(c);
    const std::function<void()> launch = m_launcher.bind(c, buffers, stream);

    // Launch 0 produces the outputs of an unmeasured case; then warm-up launches 1..W. The
    // checked launch, whose outputs are kept, is a timed one: the last, or timing.checked_launch.
    std::uint64_t launch_index = c.launch_index_base;
    const std::uint64_t checked = c.launch_index_base + (c.measure ? m_timing.checked_offset() : 0);
    // A checked launch inside the loop: its outputs are copied aside before the next launch's
    // prepare (outside every timed span) and put back once the loop is over.
    const std::vector<device_buffer> kept = m_outputs.make_kept(c, buffers);
    bool kept_taken = false;
    m_buffers.prepare(buffers, launch_index, launch_index == checked);
    launch();
    CU_CALL(cuStreamSynchronize(stream));
    if (c.measure) {
        out.warmup = m_timing.warmup;
        out.iterations = m_timing.iterations;
        for (int i = 0; i < m_timing.warmup; ++i) {
            ++launch_index;
            m_buffers.prepare(buffers, launch_index, launch_index == checked);
            launch();
        }
        CU_CALL(cuStreamSynchronize(stream));
        if (m_clocks.monitor) out.state_before = m_clocks.monitor->read();
        const int keep_commands = static_cast<int>(std::count_if(
            kept.begin(), kept.end(), [](const device_buffer& k) { return k.get(); }));
        timed_samples t = m_timer.time(
            m_timing, m_buffers.commands_per_launch(buffers) + keep_commands,
            m_launcher.single_kernel(),
            [&] {
                if (!kept.empty() && launch_index == checked) {
                    m_outputs.copy_outputs(buffers, kept, true);
                    kept_taken = true;
                }
                ++launch_index;
                m_buffers.prepare(buffers, launch_index, launch_index == checked);
            },
            launch);
        if (m_clocks.monitor) out.state_after = m_clocks.monitor->read();
        if (!record_samples(std::move(t), out)) return out;
        if (kept_taken) m_outputs.copy_outputs(buffers, kept, false);
        if (launch_index < checked) {  // adaptive, stopped early: the checked launch, untimed
            launch_index = checked;
            m_buffers.prepare(buffers, launch_index, true);
            launch();
        }
        CU_CALL(cuStreamSynchronize(stream));
    }
    out.checked_launch_index = checked;
    // The checked launch's outputs, and the inputs that launch saw, go to disk.
    m_outputs.save_outputs(c, buffers, checked, out);
    out.status = case_run_status::ok;
    return out;
}

}  // namespace cuopt
