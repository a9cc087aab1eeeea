// A harness response judged into an attempt's verdict: complete and honestly timed, no input
// written, every output against the oracle (on the CPU or the harness's GPU check), floors.
#include "orchestrator/evaluation/response_judge.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "orchestrator/evaluation/compile_log.hpp"
#include "orchestrator/evaluation/ranker.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

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

response_judge::response_judge(const manifest& m, const evaluator_settings& settings)
    : m_manifest(m), m_settings(settings) {}

void response_judge::judge(const request& req, const harness_response& response,
                           const oracle_files* oracle, attempt_result& r) const {
    r.confinement = response.confinement.mode;
    if (response.compile) r.compile = *response.compile;
    r.timer = response.timer;
    r.gpu_monitor = response.gpu_monitor;
    for (const response_case& rc : response.cases) r.cases.push_back(evaluate_case(rc, m_manifest));
    if (std::string mistimed = invalid_timing_reason(response); !mistimed.empty()) {
        r.verdict = verdict::invalid_timing;
        r.reason = std::move(mistimed);
        return;
    }
    if (response.status != response_status::ok) {
        r.verdict = verdict_for(response.status);
        r.reason = response.error;
        // NVRTC's own first error lines, one line: they name the user's file and line.
        if (r.verdict == verdict::compile_error && response.compile)
            if (std::string errors = first_compile_errors(response.compile->log); !errors.empty())
                r.reason = std::move(errors);
        return;
    }
    if (const std::string missing = missing_from(req, response); !missing.empty()) {
        r.verdict = verdict::harness_error;
        r.reason = "cuda-harness said ok but " + missing;
        return;
    }
    if (inputs_written(req, response, r)) return;
    if (!oracle) {
        r.verdict = verdict::valid;
        return;
    }
    check_outputs(r, *oracle, req);
}

void response_judge::check_outputs(attempt_result& r, const oracle_files& oracle,
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

std::string response_judge::accept_gpu_check(output_check& oc, const manifest_arg& arg,
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

void response_judge::check_floors(attempt_result& r) const {
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

}  // namespace cuopt
