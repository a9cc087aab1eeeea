// The harness request of a candidate built from the manifest and an evaluator's settings:
// its defines and timing, every case's launch and args, and the outputs the GPU checks.
#include "orchestrator/evaluation/request_builder.hpp"

#include <algorithm>
#include <cstdlib>

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string output_name(const std::string& case_name, const std::string& arg) {
    return case_name + "." + arg + ".bin";
}

}  // namespace

run_case request_builder::make_case(const candidate& c, const manifest_case& mc,
                                    const request_paths& paths, bool reference) const {
    std::map<std::string, std::int64_t> tunables = m_manifest.default_tunables();
    for (const auto& [k, v] : c.tunables) tunables[k] = v;
    const expression_variables vars = m_manifest.variables(mc, tunables);
    run_case rc;
    rc.name = mc.name;
    const bool measured = mc.kind == case_kind::performance && !m_settings.correctness_only;
    rc.measure = measured && !reference;
    // A candidate's checked launch of a measured case is timing.checked_offset() after its base
    // (the last timed one unless timing.checked_launch says which): the reference's single
    // launch takes that index, so it sees the same generated inputs.
    rc.launch_index_base = m_settings.launch_offset;
    if (reference && measured && m_settings.timing.fresh_inputs && !m_settings.repeat_inputs)
        rc.launch_index_base += m_settings.timing.checked_offset();
    rc.launch = evaluate_launch(launch_for(c, m_manifest, mc), vars);
    for (const manifest_arg& ma : m_manifest.args) {
        kernel_arg& arg = rc.args.emplace_back();
        arg.name = ma.name;
        arg.type = ma.type;
        arg.is_buffer = ma.is_buffer();
        if (!arg.is_buffer) {
            arg.scalar = ma.value_is_number
                             ? scalar_number(std::strtod(ma.value.c_str(), nullptr))
                             : scalar_number(evaluate_integer_expression(ma.value, vars));
            continue;
        }
        arg.count = static_cast<std::uint64_t>(evaluate_integer_expression(ma.count, mc.params));
        const std::string file_name = output_name(mc.name, ma.name);
        if (ma.has_input()) {
            const input_init& init = m_manifest.init_for(mc, ma);
            if (init.file)
                arg.input_file = paths.inputs_prefix + m_manifest.input_link(*init.file);
            else
                arg.generator = init.generator;
            if (!init.file && reference) arg.input_dump_file = paths.inputs_prefix + file_name;
            arg.timing_inputs_mode =
                m_settings.repeat_inputs ? std::optional(timing_inputs::as_given) : ma.timing;
        }
        if (ma.has_output()) arg.output_file = paths.outputs_prefix + file_name;
    }
    return rc;
}

request request_builder::make_request(const candidate& c, const request_paths& paths,
                                      bool reference) const {
    request req;
    req.kernel.source_name = paths.source_file;
    req.kernel.entry = c.entry;
    req.kernel.compile_options = c.compile_options;
    req.kernel.arch_specific = m_manifest.arch_specific;
    for (const auto& [k, v] : c.defines) req.kernel.defines.emplace_back(k, v);
    for (const auto& [k, v] : c.tunables)
        if (!c.defines.count(k)) req.kernel.defines.emplace_back(k, std::to_string(v));
    std::sort(req.kernel.defines.begin(), req.kernel.defines.end());
    req.device = m_settings.device;
    req.inputs_key = m_settings.inputs_key;
    req.timing = m_settings.timing;
    if (m_settings.repeat_inputs) req.timing.fresh_inputs = false;
    for (const manifest_case& mc : m_manifest.cases)
        if (!paths.only_case || *paths.only_case == mc.name)
            req.cases.push_back(make_case(c, mc, paths, reference));
    return req;
}

bool request_builder::checks_on_gpu() const {
    return m_settings.gpu_checks && !m_settings.own_process && m_settings.wrapper.empty() &&
           !m_settings.correctness_only;
}

void request_builder::add_gpu_checks(request& req, const fs::path& folder,
                                     const oracle_files& oracle) const {
    for (run_case& rc : req.cases)
        for (kernel_arg& a : rc.args) {
            const auto it = oracle.find({rc.name, a.name});
            const manifest_arg* ma = m_manifest.find_arg(a.name);
            if (!a.output_file || it == oracle.end() || !ma) continue;
            // Named where it lies in the run folder (the workers' root), never linked into the
            // attempt's folder: a candidate's compile reads that folder (#include).
            const fs::path expected =
                fs::absolute(it->second)
                    .lexically_normal()
                    .lexically_relative(fs::absolute(folder).lexically_normal());
            const tolerance tol = tolerance_in_case(m_manifest, *ma, rc.name);
            a.check = output_check_spec{expected, m_settings.digests->of(it->second, a.type).sha256,
                                        tol.atol, tol.rtol, tol.rms_atol};
        }
}

}  // namespace cuopt
