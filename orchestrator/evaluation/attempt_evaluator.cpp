#include "orchestrator/evaluation/attempt_evaluator.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/evaluation/compile_log.hpp"
#include "orchestrator/evaluation/ranker.hpp"
#include "orchestrator/evaluation/torch_baseline.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string output_name(const std::string& case_name, const std::string& arg) {
    return case_name + "." + arg + ".bin";
}

std::string tail(const std::string& s, std::size_t n) {
    return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// Every file input the manifest names, hard-linked (else copied) into folder/inputs/.
void link_input_files(const manifest& m, const fs::path& folder) {
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& ma : m.args)
            if (ma.has_input())
                if (const auto& init = m.init_for(mc, ma); init.file)
                    link_or_copy(*init.file, folder / "inputs" / m.input_link(*init.file));
}

// What NVRTC's messages call a candidate's source, which its attempt folder holds byte for byte
// as kernel.cu (so line numbers stay true): the user's own file for the initial kernel, the
// reference and a --candidates file (their label is that file's name); "" (kernel.cu) for a
// source a proposer made.
std::string source_name_for(const candidate& c, const evaluator_settings& s) {
    const bool from_file = c.proposer == proposer_kind::initial ||
                           c.proposer == proposer_kind::reference ||
                           c.proposer == proposer_kind::files;
    if (from_file) return c.label;
    // The autotuner changes defines only: its source is the initial kernel's file, line for line.
    return c.proposer == proposer_kind::autotune ? s.initial_file_name : "";
}

// Writes kernel.cu, the inputs and request.json into a fresh attempt folder; "" or why the
// request could not be made.
std::string prepare_folder(const attempt_evaluator& e, const manifest& m, const candidate& c,
                           const fs::path& folder, bool reference, request* made = nullptr,
                           const oracle_files* oracle = nullptr) {
    fs::create_directories(folder);
    write_file_atomic(folder / "kernel.cu", c.source);
    link_input_files(m, folder);
    try {
        request req = e.make_request(c, attempt_evaluator::request_paths{}, reference);
        req.folder = folder;  // the inputs key is named relative to it
        req.kernel.display_name = source_name_for(c, e.settings());
        if (oracle && !reference && e.checks_on_gpu()) e.add_gpu_checks(req, folder, *oracle);
        write_file_atomic(folder / "request.json", write_request_json(req));
        if (made) *made = req;
    } catch (const expression_error& ex) {
        return std::string("the launch does not evaluate: ") + ex.what();
    }
    return "";
}

// A response that says ok must answer the whole request: every case, every output and
// input dump it asked for, each file on disk. "" when it does, else what is missing.
std::string missing_from(const request& req, const harness_response& resp) {
    for (const run_case& rc : req.cases) {
        const auto c = std::find_if(resp.cases.begin(), resp.cases.end(),
                                    [&](const response_case& x) { return x.name == rc.name; });
        if (c == resp.cases.end()) return "the response has no case " + quote_value(rc.name);
        for (const kernel_arg& a : rc.args)
            for (const bool dump : {false, true}) {
                if (!(dump ? a.input_dump_file : a.output_file)) continue;
                const auto o = std::find_if(c->outputs.begin(), c->outputs.end(),
                                            [&](const response_output& x) {
                                                return x.arg == a.name && x.is_input_dump == dump;
                                            });
                const std::string what =
                    std::string(dump ? "input dump" : "output") + " " + quote_value(a.name);
                if (o == c->outputs.end())
                    return "case " + quote_value(rc.name) + ": the response lists no " + what;
                if (o->file.empty() && a.check && o->check && o->check->tally.mismatches == 0)
                    continue;  // checked on the GPU, passed, not written
                if (!fs::is_regular_file(o->file))
                    return "case " + quote_value(rc.name) + ": the " + what + " file " +
                           o->file.filename().string() + " is missing";
            }
    }
    return "";
}

vendor_call vendor_call_for(const vendor_baseline_spec& v, const manifest_case& mc) {
    vendor_call call;
    call.op = *k_vendor_ops.parse(v.op);  // the manifest's schema enum guarantees it
    call.layout = *k_matrix_layouts.parse(v.layout);
    call.m = static_cast<int>(evaluate_integer_expression(v.m, mc.params));
    call.n = static_cast<int>(evaluate_integer_expression(v.n, mc.params));
    call.k = static_cast<int>(evaluate_integer_expression(v.k, mc.params));
    call.a = v.a;
    call.b = v.b;
    call.c = v.c;
    call.scale_a = v.scale_a;
    call.scale_b = v.scale_b;
    return call;
}

// A case the harness could not time honestly (CUPTI saw another kernel inside a sample):
// the harness's message for the case, named; "" when every case timed cleanly.
std::string invalid_timing_reason(const harness_response& resp) {
    for (const response_case& c : resp.cases)
        if (c.status == case_run_status::invalid_timing)
            return "case '" + c.name +
                   "': " + (c.error.empty() ? "its timed samples held other work" : c.error);
    return "";
}

verdict verdict_for(response_status s) {
    switch (s) {
        case response_status::compile_error:
            return verdict::compile_error;
        case response_status::invalid_request:
            return verdict::invalid_request;
        case response_status::cuda_error:
            return verdict::cuda_error;
        default:
            return verdict::harness_error;
    }
}

case_evaluation evaluate_case(const response_case& rc, const manifest& m) {
    case_kind kind = case_kind::performance;
    for (const auto& mc : m.cases)
        if (mc.name == rc.name) kind = mc.kind;
    return case_from_response(rc, kind);
}

// A case whose checked launch wrote into a declared input fails whatever its outputs: the
// attempt is mutates_inputs, its reason the first such case's. A name the request does not
// declare an input of that case is the harness's error. False when no input changed.
bool inputs_written(const request& req, const harness_response& resp, attempt_result& r) {
    for (const response_case& rc : resp.cases) {
        const auto c = std::find_if(req.cases.begin(), req.cases.end(),
                                    [&](const run_case& x) { return x.name == rc.name; });
        for (const std::string& name : rc.inputs_changed) {
            const bool declared =
                c != req.cases.end() &&
                std::any_of(c->args.begin(), c->args.end(), [&](const kernel_arg& a) {
                    return a.name == name && a.is_buffer && a.has_input() && !a.is_output();
                });
            if (declared) continue;
            r.verdict = verdict::harness_error;
            r.reason = "cuda-harness said case " + quote_value(rc.name) + " changed input '" +
                       name + "', which the request does not declare an input of that case";
            return true;
        }
        const std::string why = inputs_written_reason(rc);
        if (why.empty()) continue;
        for (case_evaluation& ce : r.cases)
            if (ce.name == rc.name) {
                ce.status = case_status::failed;
                ce.reason = why;
            }
        if (r.verdict == verdict::mutates_inputs) continue;  // the first case names the attempt
        r.verdict = verdict::mutates_inputs;
        r.reason = why;
    }
    return r.verdict == verdict::mutates_inputs;
}

// Whether the request asked the harness to check output `arg` of case `name` (on the GPU).
bool asked_check(const request& req, const std::string& name, const std::string& arg) {
    for (const run_case& rc : req.cases)
        if (rc.name == name)
            for (const kernel_arg& a : rc.args)
                if (a.name == arg) return a.check.has_value();
    return false;
}

// One output against its oracle file: "" when it passes, else the case's reason.
std::string check_output(output_check& oc, const manifest_arg& arg, const tolerance& tol,
                         const fs::path& oracle_file) {
    const auto actual = read_binary_file(oc.file);
    const auto expected = read_binary_file(oracle_file);
    if (actual.size() != expected.size())
        return oc.arg + ": " + std::to_string(actual.size()) + " bytes but the oracle has " +
               std::to_string(expected.size());
    oc.validation = validate_output(arg.type, actual.data(), expected.data(),
                                    actual.size() / dtype_size(arg.type), tol);
    return oc.validation->passed ? "" : oc.arg + ": " + oc.validation->summary();
}

}  // namespace

std::string inputs_written_reason(const response_case& rc) {
    const std::vector<std::string>& names = rc.inputs_changed;
    if (names.empty()) return "";
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i)
        list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + (quote_value(names[i]));
    const bool one = names.size() == 1;
    return "case " + quote_value(rc.name) + ": the kernel wrote into " +
           (one ? "input " : "inputs ") + list +
           (one ? " (declared input, not inout)" : " (declared inputs, not inout)");
}

case_evaluation case_from_response(const response_case& rc, case_kind kind) {
    case_evaluation ce;
    ce.name = rc.name;
    ce.kind = kind;
    ce.status = rc.status == case_run_status::ok        ? case_status::passed
                : rc.status == case_run_status::skipped ? case_status::not_run
                                                        : case_status::failed;
    ce.reason = rc.error;
    if (rc.timing) {
        ce.median_ms = rc.timing->median_ms;
        ce.mean_ms = rc.timing->mean_ms;
        ce.min_ms = rc.timing->min_ms;
        ce.max_ms = rc.timing->max_ms;
        ce.stdev_ms = rc.timing->stdev_ms;
        ce.samples_ms = rc.timing->samples_ms;
        ce.iterations = rc.timing->iterations;
        ce.timing = rc.timing->details;
    }
    for (const response_output& o : rc.outputs)
        if (!o.is_input_dump)
            ce.outputs.push_back({o.arg, o.file, o.unwritten, std::nullopt, o.check, false});
    return ce;
}

attempt_evaluator::attempt_evaluator(const manifest& m, evaluator_settings settings,
                                     process_runner& runner)
    : m_manifest(m), m_settings(std::move(settings)), m_runner(runner) {}

run_case attempt_evaluator::make_case(const candidate& c, const manifest_case& mc,
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

request attempt_evaluator::make_request(const candidate& c, const request_paths& paths,
                                        bool reference) const {
    request req;
    req.kernel.source_name = paths.source_file;
    req.kernel.entry = c.entry;
    req.kernel.compile_options = c.compile_options;
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

compile_summary attempt_evaluator::compile_only(const candidate& c, const fs::path& folder,
                                                const fs::path& cubin_out) const {
    compile_summary out;
    if (const std::string bad = prepare_folder(*this, m_manifest, c, folder, false); !bad.empty()) {
        out.log = bad;
        return out;
    }
    std::vector<std::string> argv = {m_settings.harness, (folder / "request.json").string(),
                                     "--compile-only",   "--quiet",
                                     "--response",       (folder / "response.json").string()};
    if (!m_settings.arch.empty()) argv.insert(argv.end(), {"--arch", m_settings.arch});
    if (!cubin_out.empty()) argv.insert(argv.end(), {"--cubin-out", cubin_out.string()});
    if (m_settings.inputs_key)
        argv.insert(argv.end(), {"--root", m_settings.inputs_key->file.parent_path().string()});
    // The run's cubin cache, so that a later run of the same request finds what NVRTC made here.
    if (!m_settings.cache_dir.empty())
        argv.insert(argv.end(), {"--cache-dir", m_settings.cache_dir});
    const process_result p = m_runner.run(argv, m_settings.timeout);
    try {
        const harness_response response = read_response(folder / "response.json");
        if (response.compile) {
            out = *response.compile;
            out.ok = out.ok && p.exit_code == 0;
        }
        if (!out.ok && !response.error.empty()) out.log = response.error + "\n" + out.log;
    } catch (const std::exception& e) {
        out.log = "cuda-harness " + p.describe() + ": " + e.what();
    }
    return out;
}

std::optional<harness_response> attempt_evaluator::run_harness(const fs::path& folder,
                                                               attempt_result& r,
                                                               bool trusted) const {
    const fs::path response = folder / "response.json";
    std::error_code ec;
    fs::remove(response, ec);
    std::vector<std::string> argv = m_settings.wrapper;
    argv.insert(argv.end(), {m_settings.harness, (folder / "request.json").string(), "--response",
                             response.string(), "--quiet"});
    if (!m_settings.cache_dir.empty())
        argv.insert(argv.end(), {"--cache-dir", m_settings.cache_dir});
    // The inputs key lies in the run folder, outside the request's: the harness may read there.
    if (m_settings.inputs_key)
        argv.insert(argv.end(), {"--root", m_settings.inputs_key->file.parent_path().string()});
    const process_result p = m_runner.run(
        argv, m_settings.timeout, run_purpose{m_settings.device, trusted, m_settings.own_process});
    r.harness_exit_code = p.exit_code;
    r.harness_signal = p.signal;
    r.harness_wall_ms = p.wall_ms;
    r.harness_stderr = tail(p.stderr_text, 4000);
    write_file_atomic(folder / "harness.stderr.txt", p.stderr_text);
    if (p.failed_to_start || p.timed_out || p.signal) {
        r.verdict = p.failed_to_start ? verdict::harness_error
                    : p.timed_out     ? verdict::timeout
                                      : verdict::crash;
        r.reason = p.failed_to_start ? p.describe() : "cuda-harness " + p.describe();
        if (!p.failed_to_start) count_gpu_busy(std::nullopt, r);  // it may have run kernels
        return std::nullopt;
    }
    std::optional<harness_response> out;
    try {
        out = read_response(response);
    } catch (const std::exception& e) {
        r.verdict = verdict::harness_error;
        r.reason = "cuda-harness " + p.describe() + " without a usable response: " + e.what();
        // What the harness said on its way out (its response could not be written: "cannot
        // write …/response.json: No space left on device (errno 28)") is the real cause.
        if (const std::string said = last_line(p.stderr_text); !said.empty())
            r.reason += "; it said: " + shortened(said, 400);
    }
    count_gpu_busy(out, r);
    return out;
}

void attempt_evaluator::count_gpu_busy(const std::optional<harness_response>& response,
                                       attempt_result& r) const {
    long long kernels = 0;
    if (response && response->gpu_busy) {
        r.gpu_busy_ms = response->gpu_busy->ms;
        r.gpu_busy_source = k_gpu_busy_sources.name(response->gpu_busy->source);
        kernels = response->gpu_busy->kernels.value_or(0);
    }
    if (m_settings.gpu_busy)
        m_settings.gpu_busy->add(m_settings.device, r.gpu_busy_ms, kernels, r.gpu_busy_source);
}

void attempt_evaluator::check_outputs(attempt_result& r, const oracle_files& oracle,
                                      const request& req) const {
    std::string first_failure;
    bool any_unwritten = false, any_nan = false;
    for (case_evaluation& ce : r.cases)
        for (output_check& oc : ce.outputs) {
            const manifest_arg* arg = m_manifest.find_arg(oc.arg);
            const auto it = oracle.find({ce.name, oc.arg});
            if (!arg || it == oracle.end()) continue;
            const tolerance tol = tolerance_in_case(m_manifest, *arg, ce.name);
            std::string bad;
            try {
                if (oc.gpu_check && !asked_check(req, ce.name, oc.arg))
                    throw std::runtime_error("response.json: outputs '" + oc.arg +
                                             "' has a check the request did not ask for");
                bad = oc.gpu_check ? accept_gpu_check(oc, *arg, tol, it->second)
                                   : check_output(oc, *arg, tol, it->second);
            } catch (const std::exception& e) {  // a file gone, a check against another oracle
                r.verdict = verdict::harness_error;
                r.reason = "case " + quote_value(ce.name) + ": " + e.what();
                return;
            }
            if (bad.empty()) continue;
            ce.status = case_status::failed;
            ce.reason = bad;
            any_unwritten |= oc.validation && oc.validation->unwritten > 0;
            any_nan |= oc.validation && oc.validation->non_finite > 0;
            if (first_failure.empty())
                first_failure = "case " + quote_value(ce.name) + ": " + ce.reason;
        }
    if (!first_failure.empty()) {
        r.verdict = any_unwritten ? verdict::unwritten_output
                    : any_nan     ? verdict::nan_output
                                  : verdict::wrong_output;
        r.reason = first_failure;
        return;
    }
    std::vector<double> medians;
    for (const auto& ce : r.cases)
        if (ce.kind == case_kind::performance && ce.median_ms) medians.push_back(*ce.median_ms);
    r.geomean_ms = geometric_mean(medians);
    r.verdict = verdict::valid;
    check_floors(r);
}

bool attempt_evaluator::checks_on_gpu() const {
    return m_settings.gpu_checks && !m_settings.own_process && m_settings.wrapper.empty() &&
           !m_settings.correctness_only;
}

void attempt_evaluator::add_gpu_checks(request& req, const fs::path& folder,
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

namespace {

std::string exact(double x) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", x);
    return text;
}

// The first field of the harness's check that is not what the optimizer asked for, as
// "FIELD VALUE where the request's is VALUE"; "" when all agree.
std::string check_mismatch(const response_check& g, const oracle_digest& d,
                           const cuopt_check::rule& rule, dtype type, bool rms_scaled) {
    if (g.expected_sha256 != d.sha256)
        return "expected_sha256 " + g.expected_sha256 + " where the oracle's is " + d.sha256;
    if (g.count != d.count)
        return "count " + std::to_string(g.count) + " where the oracle holds " +
               std::to_string(d.count);
    if (g.type != type)
        return "dtype " + std::string(dtype_name(g.type)) + " where the output's is " +
               std::string(dtype_name(type));
    if (g.poison != rule.poison)
        return "poison " + std::to_string(g.poison) + " where the dtype's is " +
               std::to_string(rule.poison);
    if (g.rtol != rule.rtol)
        return "rtol " + exact(g.rtol) + " where the request's is " + exact(rule.rtol);
    if (g.allowed_atol != rule.allowed_atol)
        return "allowed_atol " + exact(g.allowed_atol) + " where the optimizer's is " +
               exact(rule.allowed_atol);
    if (g.rms_scaled != rms_scaled)
        return std::string("rms_scaled ") + (g.rms_scaled ? "true" : "false") +
               " where the request's is " + (rms_scaled ? "true" : "false");
    return "";
}

}  // namespace

std::string attempt_evaluator::accept_gpu_check(output_check& oc, const manifest_arg& arg,
                                                const tolerance& tol,
                                                const fs::path& oracle_file) const {
    const response_check& g = *oc.gpu_check;
    const oracle_digest d = m_settings.digests->of(oracle_file, arg.type);
    const cuopt_check::rule rule =
        cuopt_check::make_rule(static_cast<int>(arg.type), poison_bits(arg.type), tol.atol,
                               tol.rtol, tol.rms_atol, d.finite_rms);
    const bool rms_scaled = is_float(arg.type) && tol.rms_atol > 0;
    if (const std::string bad = check_mismatch(g, d, rule, arg.type, rms_scaled); !bad.empty())
        throw std::runtime_error("response.json: outputs " + quote_value(oc.arg) + ".check." + bad +
                                 ": the harness checked against another oracle or rule");
    oc.validation = validation_from_tally(arg.type, g.tally, g.count, rule, rms_scaled);
    oc.checked_on_gpu = true;
    return oc.validation->passed ? "" : oc.arg + ": " + oc.validation->summary();
}

void attempt_evaluator::check_floors(attempt_result& r) const {
    for (case_evaluation& ce : r.cases) {
        const auto floor = m_settings.floors_ms.find(ce.name);
        if (floor == m_settings.floors_ms.end()) continue;
        ce.floor_ms = floor->second;
        if (!ce.median_ms || *ce.median_ms >= k_impossible_fraction * floor->second) continue;
        std::ostringstream s;
        s.precision(4);
        s << "case '" << ce.name << "': median " << *ce.median_ms * 1e3 << " us is below "
          << k_impossible_fraction << "x the speed-of-light floor of " << floor->second * 1e3
          << " us: no kernel moves its bytes that fast";
        ce.status = case_status::failed;
        ce.reason = s.str();
        if (r.verdict == verdict::valid) {
            r.verdict = verdict::impossible_time;
            r.reason = ce.reason;
            r.geomean_ms.reset();
        }
    }
}

attempt_result attempt_evaluator::evaluate(const candidate& c, const fs::path& folder,
                                           const oracle_files* oracle) const {
    if (!c.pytorch_mode.empty()) return time_pytorch(c, folder, m_manifest, m_settings, m_runner);
    attempt_result r;
    r.cand = c;
    r.folder = folder;
    r.device = m_settings.device;
    request req;
    if (const std::string bad =
            prepare_folder(*this, m_manifest, c, folder, oracle == nullptr, &req, oracle);
        !bad.empty()) {
        r.verdict = verdict::invalid_submission;
        r.reason = bad;
        return r;
    }
    run_and_check(req, oracle, r);
    return r;
}

void attempt_evaluator::run_and_check(const request& req, const oracle_files* oracle,
                                      attempt_result& r) const {
    // The reference run and the vendor library are trusted: never in a candidate's worker.
    const std::optional<harness_response> response =
        run_harness(r.folder, r, oracle == nullptr || req.vendor.has_value());
    if (!response) return;
    r.confinement = response->confinement.mode;
    if (response->compile) r.compile = *response->compile;
    r.timer = response->timer;
    r.gpu_monitor = response->gpu_monitor;
    for (const response_case& rc : response->cases)
        r.cases.push_back(evaluate_case(rc, m_manifest));
    if (std::string mistimed = invalid_timing_reason(*response); !mistimed.empty()) {
        r.verdict = verdict::invalid_timing;
        r.reason = std::move(mistimed);
        return;
    }
    if (response->status != response_status::ok) {
        r.verdict = verdict_for(response->status);
        r.reason = response->error;
        // NVRTC's own first error lines, one line: they name the user's file and line.
        if (r.verdict == verdict::compile_error && response->compile)
            if (std::string errors = first_compile_errors(response->compile->log); !errors.empty())
                r.reason = std::move(errors);
        return;
    }
    if (const std::string missing = missing_from(req, *response); !missing.empty()) {
        r.verdict = verdict::harness_error;
        r.reason = "cuda-harness said ok but " + missing;
        return;
    }
    if (inputs_written(req, *response, r)) return;
    if (!oracle) {
        r.verdict = verdict::valid;
        return;
    }
    check_outputs(r, *oracle, req);
}

std::optional<attempt_result> attempt_evaluator::evaluate_vendor(const candidate& c,
                                                                 const fs::path& folder,
                                                                 const oracle_files& oracle) const {
    request req = make_request(c, request_paths{}, false);
    req.kernel = kernel_spec{};
    std::vector<run_case> cases;
    for (std::size_t i = 0; i < req.cases.size(); ++i) {
        const manifest_case& mc = m_manifest.cases[i];
        if (!mc.vendor || !req.cases[i].measure) continue;
        // One library for every case: the manifest reader refuses a mix.
        req.vendor = *k_vendor_libraries.parse(mc.vendor->library);
        run_case rc = req.cases[i];
        rc.vendor = vendor_call_for(*mc.vendor, mc);
        cases.push_back(std::move(rc));
    }
    if (cases.empty()) return std::nullopt;
    req.cases = std::move(cases);
    attempt_result r;
    r.cand = c;
    r.cand.label = k_vendor_libraries.name(*req.vendor);  // "cublas", "cublaslt"
    r.folder = folder;
    fs::create_directories(folder);
    link_input_files(m_manifest, folder);
    req.folder = folder;
    write_file_atomic(folder / "request.json", write_request_json(req));
    run_and_check(req, &oracle, r);
    return r;
}

}  // namespace cuopt
