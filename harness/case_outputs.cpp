#include "harness/case_outputs.hpp"

#include <algorithm>

#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "harness/case_runner.hpp"

namespace cuopt {

output_record save_buffer(const kernel_arg& a, CUdeviceptr from, const std::filesystem::path& file,
                          const char* role) {
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

void case_runner::save_outputs(const run_case& c, const std::vector<live_buffer>& buffers,
                               std::uint64_t launch_index, case_outcome& out) {
    for (const live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (a.output_file)
            out.outputs.push_back(save_buffer(a, b.working.get(), *a.output_file, "output"));
        if (a.input_dump_file) {
            device_buffer values(a.bytes());
            m_support.generate(m_stream.get(), values.get(), a.type, a.count, *a.generator,
                               regenerated(a) ? launch_index : held_values_launch(c));
            CU_CALL(cuStreamSynchronize(m_stream.get()));
            out.outputs.push_back(save_buffer(a, values.get(), *a.input_dump_file, "input_dump"));
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

}  // namespace cuopt
