#include "harness/case_runner.hpp"

#include <algorithm>
#include <memory>

#include "common/file_io.hpp"
#include "common/sha256.hpp"

namespace cuopt {

namespace {

std::string dims(const std::array<unsigned, 3>& d) {
    return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           "]";
}

void poison(CUstream stream, const device_buffer& b, dtype type, std::uint64_t count) {
    const std::uint64_t bits = poison_bits(type);
    switch (dtype_size(type)) {
        case 1:
            CU_CALL(cuMemsetD8Async(b.get(), static_cast<unsigned char>(bits), count, stream));
            break;
        case 2:
            CU_CALL(cuMemsetD16Async(b.get(), static_cast<unsigned short>(bits), count, stream));
            break;
        case 4:
            CU_CALL(cuMemsetD32Async(b.get(), static_cast<unsigned>(bits), count, stream));
            break;
        default:  // 8-byte patterns repeat their 32-bit half
            CU_CALL(cuMemsetD32Async(b.get(), static_cast<unsigned>(bits), count * 2, stream));
    }
}

// Rotates `count` elements of `from` left by `shift` into `to`: two copies, values kept.
void rotate_copy(CUstream stream, CUdeviceptr to, CUdeviceptr from, std::uint64_t count,
                 std::uint64_t shift, std::size_t element_bytes) {
    const std::size_t head = shift * element_bytes, bytes = count * element_bytes;
    if (shift == 0) {
        CU_CALL(cuMemcpyDtoDAsync(to, from, bytes, stream));
        return;
    }
    CU_CALL(cuMemcpyDtoDAsync(to, from + head, bytes - head, stream));
    CU_CALL(cuMemcpyDtoDAsync(to + (bytes - head), from, head, stream));
}

// A large odd step (the golden ratio in 64 bits) spreads successive shifts over the buffer.
constexpr std::uint64_t k_rotation_step = 0x9E3779B97F4A7C15ull;

}  // namespace

std::uint64_t rotation_shift(std::uint64_t launch_index, std::uint64_t count) {
    if (count < 2) return 0;
    const std::uint64_t period = count - 1;
    const std::uint64_t step = k_rotation_step % period ? k_rotation_step % period : 1;
    // Successive launches differ by `step` (mod period), which is never 0: no two neighbours
    // share a shift, and no shift is 0 (the checked launch's, which sees the file exactly).
    return 1 + static_cast<std::uint64_t>(static_cast<unsigned __int128>(launch_index % period) *
                                          step % period);
}

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

namespace {

// The old way to count parameters, for a cubin without a readable .nv.info section: asking
// the driver about indices until it says there is none (which sanitizers report as an error).
std::size_t probe_param_count(CUfunction kernel) {
    std::size_t count = 0, offset = 0, size = 0;
    while (driver().cuFuncGetParamInfo(kernel, count, &offset, &size) == CUDA_SUCCESS) ++count;
    return count;
}

}  // namespace

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
    : m_support(session.support()),
      m_launcher(launcher),
      m_timing(timing),
      m_stream(make_stream()),
      m_l2_scratch(session.l2_scratch(
          timing.flush_l2
              ? static_cast<std::size_t>(std::max<long long>(device.l2_bytes, 1 << 20)) * 2
              : 16)),
      m_flush_sink(session.flush_sink()),
      m_clocks(clocks),
      m_timer(m_support, m_stream.get(), clocks.hold_stream,
              timing.timer == timer_choice::events ? nullptr : clocks.trace) {
    if (timing.flush_l2)
        CU_CALL(cuMemsetD32Async(m_l2_scratch.get(), 0, m_l2_scratch.bytes() / 4, m_stream.get()));
}

bool case_runner::regenerated(const kernel_arg& a) const {
    return a.generator && m_timing.fresh_inputs && a.timing_inputs_mode != timing_inputs::as_given;
}

bool case_runner::rotated(const kernel_arg& a) {
    return a.input_file && a.perturbed_for_timing();
}

std::uint64_t case_runner::held_values_launch(const run_case& c) const {
    if (!m_timing.fresh_inputs) return c.launch_index_base;
    // The checked launch: a reference run matches it.
    return c.launch_index_base + (c.measure ? m_timing.checked_offset() : 0);
}

std::vector<live_buffer> case_runner::make_buffers(const run_case& c) {
    std::vector<live_buffer> buffers;
    buffers.reserve(c.args.size());
    for (const kernel_arg& a : c.args) {
        if (!a.is_buffer) continue;
        live_buffer& b = buffers.emplace_back();
        b.arg = &a;
        b.working = device_buffer(a.bytes());
        b.param = b.working.get();
        const bool in_place = a.has_input() && a.is_output();
        if ((in_place && !regenerated(a)) || rotated(a)) b.pristine = device_buffer(a.bytes());
        const device_buffer& first = b.pristine.get() ? b.pristine : b.working;
        if (a.input_file) {
            // On the case's stream, and waited for: a synchronous copy from pageable memory may
            // return before the data lands, and the stream does not wait for the legacy one.
            const auto bytes = read_binary_file(*a.input_file);
            CU_CALL(cuMemcpyHtoDAsync(first.get(), bytes.data(), bytes.size(), m_stream.get()));
            CU_CALL(cuStreamSynchronize(m_stream.get()));
        } else if (a.generator && !regenerated(a)) {
            m_support.generate(m_stream.get(), first.get(), a.type, a.count, *a.generator,
                               held_values_launch(c));
        }
    }
    std::vector<input_guard::guarded> inputs;
    for (const live_buffer& b : buffers)
        if (input_guard::guards(*b.arg))
            inputs.push_back({b.arg->name, b.working.get(), b.arg->bytes()});
    m_guard.emplace(m_support, m_stream.get(), std::move(inputs));
    // A regenerated input's expected values are made again once the checked launch is known.
    for (const live_buffer& b : buffers)
        if (input_guard::guards(*b.arg) && !regenerated(*b.arg))
            m_guard->expect(b.arg->name, b.pristine.get() ? b.pristine.get() : b.working.get());
    return buffers;
}

void case_runner::prepare(std::vector<live_buffer>& buffers, std::uint64_t launch_index,
                          bool checked) {
    const CUstream stream = m_stream.get();
    m_guard->hash_after();  // after a checked launch: before any input is rewritten
    for (live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (regenerated(a))
            m_support.generate(stream, b.working.get(), a.type, a.count, *a.generator,
                               launch_index);
        else if (rotated(a))  // the checked launch sees the file exactly
            rotate_copy(stream, b.working.get(), b.pristine.get(), a.count,
                        checked ? 0 : rotation_shift(launch_index, a.count), dtype_size(a.type));
        else if (b.pristine.get())
            CU_CALL(cuMemcpyDtoDAsync(b.working.get(), b.pristine.get(), a.bytes(), stream));
        else if (!a.has_input())
            poison(stream, b.working, a.type, a.count);
    }
    if (m_timing.flush_l2)  // last, so nothing written above stays in L2, warm or dirty
        m_support.flush_l2(stream, m_l2_scratch.get(), m_l2_scratch.bytes(), m_flush_sink.get());
    if (checked) m_guard->arm();
}

int case_runner::commands_per_launch(const std::vector<live_buffer>& buffers) const {
    int commands = 3 + (m_timing.flush_l2 ? 2 : 0);  // the flush is two launches
    for (const live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (rotated(a))
            commands += a.count >= 2 ? 2 : 1;
        else
            commands += regenerated(a) || b.pristine.get() || !a.has_input();
    }
    return commands;
}

output_record case_runner::save(const kernel_arg& a, CUdeviceptr from,
                                const std::filesystem::path& file, const char* role) const {
    std::vector<unsigned char> host(a.bytes());
    CU_CALL(cuMemcpyDtoH(host.data(), from, host.size()));
    write_file_atomic(file, host.data(), host.size());
    output_record r;
    r.arg = a.name;
    r.role = role;
    r.file = file;
    r.type = a.type;
    r.count = a.count;
    r.sha256 = sha256_hex(host.data(), host.size());
    r.unwritten = count_poisoned(a.type, host.data(), a.count);
    return r;
}

void case_runner::save_outputs(const run_case& c, const std::vector<live_buffer>& buffers,
                               std::uint64_t launch_index, case_outcome& out) {
    for (const live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (a.output_file)
            out.outputs.push_back(save(a, b.working.get(), *a.output_file, "output"));
        if (a.input_dump_file) {
            device_buffer values(a.bytes());
            m_support.generate(m_stream.get(), values.get(), a.type, a.count, *a.generator,
                               regenerated(a) ? launch_index : held_values_launch(c));
            CU_CALL(cuStreamSynchronize(m_stream.get()));
            out.outputs.push_back(save(a, values.get(), *a.input_dump_file, "input_dump"));
        }
    }
    check_inputs(buffers, launch_index, out);
}

void case_runner::check_inputs(const std::vector<live_buffer>& buffers, std::uint64_t launch_index,
                               case_outcome& out) {
    m_guard->hash_after();  // a checked launch that was the last: nothing has run since
    // Regenerated inputs, as the checked launch saw them, one after another in one scratch
    // buffer (the stream orders each hash before the next fill).
    std::size_t scratch_bytes = 0;
    for (const live_buffer& b : buffers)
        if (input_guard::guards(*b.arg) && regenerated(*b.arg))
            scratch_bytes = std::max(scratch_bytes, b.arg->bytes());
    const device_buffer values = scratch_bytes ? device_buffer(scratch_bytes) : device_buffer();
    for (const live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (!input_guard::guards(a) || !regenerated(a)) continue;
        m_support.generate(m_stream.get(), values.get(), a.type, a.count, *a.generator,
                           launch_index);
        m_guard->expect(a.name, values.get());
    }
    out.inputs_changed = m_guard->changed();  // waits for the stream before `values` goes
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

bool case_runner::keeps_mid_loop(const run_case& c) const {
    const auto& position = m_timing.checked_launch;
    return c.measure && position &&
           (m_timing.mode == timing_mode::adaptive || *position + 1 < m_timing.iterations);
}

std::vector<device_buffer> case_runner::make_kept(const run_case& c,
                                                  const std::vector<live_buffer>& buffers) const {
    std::vector<device_buffer> kept;
    if (!keeps_mid_loop(c)) return kept;
    for (const live_buffer& b : buffers)
        kept.push_back(b.arg->is_output() ? device_buffer(b.arg->bytes()) : device_buffer());
    return kept;
}

void case_runner::copy_outputs(const std::vector<live_buffer>& buffers,
                               const std::vector<device_buffer>& kept, bool to_kept) const {
    for (std::size_t i = 0; i < kept.size(); ++i)
        if (kept[i].get())
            CU_CALL(cuMemcpyDtoDAsync(to_kept ? kept[i].get() : buffers[i].working.get(),
                                      to_kept ? buffers[i].working.get() : kept[i].get(),
                                      buffers[i].arg->bytes(), m_stream.get()));
}

case_outcome case_runner::run(const run_case& c) {
    case_outcome out;
    out.name = c.name;
    out.measured = c.measure;
    const CUstream stream = m_stream.get();
    std::vector<live_buffer> buffers = make_buffers(c);
    out.entry = m_launcher.entry(c);
    const std::function<void()> launch = m_launcher.bind(c, buffers, stream);

    // Launch 0 produces the outputs of an unmeasured case; then warm-up launches 1..W. The
    // checked launch, whose outputs are kept, is a timed one: the last, or timing.checked_launch.
    std::uint64_t launch_index = c.launch_index_base;
    const std::uint64_t checked = c.launch_index_base + (c.measure ? m_timing.checked_offset() : 0);
    // A checked launch inside the loop: its outputs are copied aside before the next launch's
    // prepare (outside every timed span) and put back once the loop is over.
    const std::vector<device_buffer> kept = make_kept(c, buffers);
    bool kept_taken = false;
    prepare(buffers, launch_index, launch_index == checked);
    launch();
    CU_CALL(cuStreamSynchronize(stream));
    if (c.measure) {
        out.warmup = m_timing.warmup;
        out.iterations = m_timing.iterations;
        for (int i = 0; i < m_timing.warmup; ++i) {
            ++launch_index;
            prepare(buffers, launch_index, launch_index == checked);
            launch();
        }
        CU_CALL(cuStreamSynchronize(stream));
        if (m_clocks.monitor) out.state_before = m_clocks.monitor->read();
        const int keep_commands = static_cast<int>(std::count_if(
            kept.begin(), kept.end(), [](const device_buffer& k) { return k.get(); }));
        timed_samples t = m_timer.time(
            m_timing, commands_per_launch(buffers) + keep_commands, m_launcher.single_kernel(),
            [&] {
                if (!kept.empty() && launch_index == checked) {
                    copy_outputs(buffers, kept, true);
                    kept_taken = true;
                }
                ++launch_index;
                prepare(buffers, launch_index, launch_index == checked);
            },
            launch);
        if (m_clocks.monitor) out.state_after = m_clocks.monitor->read();
        if (!record_samples(std::move(t), out)) return out;
        if (kept_taken) copy_outputs(buffers, kept, false);
        if (launch_index < checked) {  // adaptive, stopped early: the checked launch, untimed
            launch_index = checked;
            prepare(buffers, launch_index, true);
            launch();
        }
        CU_CALL(cuStreamSynchronize(stream));
    }
    out.checked_launch_index = checked;
    // The checked launch's outputs, and the inputs that launch saw, go to disk.
    save_outputs(c, buffers, checked, out);
    out.status = case_run_status::ok;
    return out;
}

}  // namespace cuopt
