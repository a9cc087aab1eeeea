#include "harness/case_buffers.hpp"

#include <algorithm>

#include "common/counter_rng.h"
#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "harness/case_runner.hpp"

namespace cuopt {

namespace {

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

std::uint64_t rotation_shift(std::uint64_t launch_index, std::uint64_t count,
                             const std::optional<std::array<std::uint32_t, 8>>& key) {
    if (!key || count < 2) return rotation_shift(launch_index, count);
    cuopt_rng::stream_key k{};
    std::copy(key->begin(), key->end(), k.words);
    return 1 + cuopt_rng::keyed_bits(k, launch_index, 0) % (count - 1);
}

case_buffers::case_buffers(const device_fingerprint& device, device_session& session,
                           const timing_config& timing)
    : m_support(session.support()),
      m_timing(timing),
      m_stream(make_stream()),
      m_l2_scratch(session.l2_scratch(
          timing.flush_l2
              ? static_cast<std::size_t>(std::max<long long>(device.l2_bytes, 1 << 20)) * 2
              : 16)),
      m_flush_sink(session.flush_sink()) {}

void case_buffers::zero_l2_scratch() {
    if (m_timing.flush_l2)
        CU_CALL(cuMemsetD32Async(m_l2_scratch.get(), 0, m_l2_scratch.bytes() / 4, m_stream.get()));
}

bool case_buffers::regenerated(const kernel_arg& a) const {
    return a.generator && m_timing.fresh_inputs && a.timing_inputs_mode != timing_inputs::as_given;
}

bool case_buffers::rotated(const kernel_arg& a) {
    return a.input_file && a.perturbed_for_timing();
}

std::uint64_t case_buffers::held_values_launch(const run_case& c) const {
    if (!m_timing.fresh_inputs) return c.launch_index_base;
    // The checked launch: a reference run matches it.
    return c.launch_index_base + (c.measure ? m_timing.checked_offset() : 0);
}

std::vector<live_buffer> case_buffers::make_buffers(const run_case& c) {
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

void case_buffers::prepare(std::vector<live_buffer>& buffers, std::uint64_t launch_index,
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
                        checked ? 0 : rotation_shift(launch_index, a.count, a.rotation_key),
                        dtype_size(a.type));
        else if (b.pristine.get())
            CU_CALL(cuMemcpyDtoDAsync(b.working.get(), b.pristine.get(), a.bytes(), stream));
        else if (!a.has_input())
            poison(stream, b.working, a.type, a.count);
    }
    if (m_timing.flush_l2)  // last, so nothing written above stays in L2, warm or dirty
        m_support.flush_l2(stream, m_l2_scratch.get(), m_l2_scratch.bytes(), m_flush_sink.get());
    if (checked) m_guard->arm();
}

int case_buffers::commands_per_launch(const std::vector<live_buffer>& buffers) const {
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

// ---- after the checked launch ----

output_record save_buffer(const kernel_arg& a, CUdeviceptr from, const std::filesystem::path& file,
                          const char* role) {
    std::vector<unsigned char> host(a.bytes());
    CU_CALL(cuMemcpyDtoH(host.data(), from, host.size()));
    try {
        write_file_atomic(file, host.data(), host.size());
    } catch (const file_write_error& e) {  // the one line the response's error will be
        throw file_write_error(write_failure_line(file, e), e.error_number());
    }
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

void case_buffers::check_inputs(const std::vector<live_buffer>& buffers, std::uint64_t launch_index,
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

const live_buffer& buffer_named(const std::vector<live_buffer>& buffers, const std::string& name) {
    const auto it = std::find_if(buffers.begin(), buffers.end(),
                                 [&](const live_buffer& b) { return b.arg->name == name; });
    if (it == buffers.end()) throw std::logic_error("vendor_call names no buffer '" + name + "'");
    return *it;
}

}  // namespace cuopt
