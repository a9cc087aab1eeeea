#include "harness/case_outputs.hpp"

#include "harness/case_runner.hpp"
#include "harness/expected_values.hpp"

namespace cuopt {

case_outputs::case_outputs(case_buffers& buffers, const timing_config& timing, bool pageable_access)
    : m_buffers(buffers),
      m_support(buffers.support()),
      m_stream(buffers.stream()),
      m_timing(timing),
      m_pageable_access(pageable_access) {}

bool case_outputs::keeps_mid_loop(const run_case& c) const {
    const auto& position = m_timing.checked_launch;
    return c.measure && position &&
           (m_timing.mode == timing_mode::adaptive || *position + 1 < m_timing.iterations);
}

std::vector<device_buffer> case_outputs::make_kept(const run_case& c,
                                                   const std::vector<live_buffer>& buffers) const {
    std::vector<device_buffer> kept;
    if (!keeps_mid_loop(c)) return kept;
    for (const live_buffer& b : buffers)
        kept.push_back(b.arg->is_output() ? device_buffer(b.arg->bytes()) : device_buffer());
    return kept;
}

void case_outputs::copy_outputs(const std::vector<live_buffer>& buffers,
                                const std::vector<device_buffer>& kept, bool to_kept) const {
    for (std::size_t i = 0; i < kept.size(); ++i)
        if (kept[i].get())
            CU_CALL(cuMemcpyDtoDAsync(to_kept ? kept[i].get() : buffers[i].working.get(),
                                      to_kept ? buffers[i].working.get() : kept[i].get(),
                                      buffers[i].arg->bytes(), m_stream.get()));
}

output_record case_outputs::check_output(const kernel_arg& a, CUdeviceptr actual) const {
    const expected_values& values = expected_values_for(a);
    const output_check_spec& spec = *a.check;
    output_check_result check;
    check.rule = cuopt_check::make_rule(static_cast<int>(a.type), poison_bits(a.type), spec.atol,
                                        spec.rtol, spec.rms_atol, values.finite_rms);
    check.rms_scaled = is_float(a.type) && spec.rms_atol > 0;
    check.expected_file = spec.expected_file;
    check.expected_sha256 = values.sha256;
    {  // the candidate's launches are over: only now do the expected values reach the GPU
        const device_buffer expected(a.bytes());
        CU_CALL(cuMemcpyHtoDAsync(expected.get(), values.bytes.data(), a.bytes(), m_stream.get()));
        check.tally =
            m_support.compare(m_stream.get(), actual, expected.get(), a.count, check.rule);
        CU_CALL(cuMemsetD8Async(expected.get(), 0, a.bytes(), m_stream.get()));
        CU_CALL(cuStreamSynchronize(m_stream.get()));
    }
    if (m_pageable_access) forget_expected_values();
    output_record r;
    if (check.tally.mismatches) {
        r = save_buffer(a, actual, *a.output_file, "output");  // a failure stays inspectable
    } else {
        r.arg = a.name;
        r.role = "output";
        r.type = a.type;
        r.count = a.count;
    }
    r.unwritten = check.tally.unwritten;
    r.check = std::move(check);
    return r;
}

void case_outputs::save_outputs(const run_case& c, const std::vector<live_buffer>& buffers,
                                std::uint64_t launch_index, case_outcome& out) {
    for (const live_buffer& b : buffers) {
        const kernel_arg& a = *b.arg;
        if (a.output_file && a.check)
            out.outputs.push_back(check_output(a, b.working.get()));
        else if (a.output_file)
            out.outputs.push_back(save_buffer(a, b.working.get(), *a.output_file, "output"));
        if (a.input_dump_file) {
            device_buffer values(a.bytes());
            m_support.generate(
                m_stream.get(), values.get(), a.type, a.count, *a.generator,
                m_buffers.regenerated(a) ? launch_index : m_buffers.held_values_launch(c));
            CU_CALL(cuStreamSynchronize(m_stream.get()));
            out.outputs.push_back(save_buffer(a, values.get(), *a.input_dump_file, "input_dump"));
        }
    }
    m_buffers.check_inputs(buffers, launch_index, out);
}

}  // namespace cuopt
