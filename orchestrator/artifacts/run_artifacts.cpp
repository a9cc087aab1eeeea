#include "orchestrator/artifacts/run_artifacts.hpp"

#include <rapidjson/document.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <type_traits>
#include <variant>

#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/device_figures.hpp"
#include "orchestrator/artifacts/report_verdict.hpp"
#include "orchestrator/artifacts/timing_conditions.hpp"
#include "orchestrator/artifacts/winner_files.hpp"
#include "orchestrator/evaluation/compile_log.hpp"
#include "orchestrator/search/device_baselines.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// A setting as run.json records it: text as a string, every other kind as itself.
Value setting_json(const setting_value& v, json_allocator& a) {
    return std::visit(
        [&a](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
                return json_text(x, a);
            else
                return Value(x);
        },
        v);
}
Value compile_json(const compile_summary& c, json_allocator& a) {
    json_object comp(a);
    comp.add("ok", c.ok).add("cache_hit", c.cache_hit).add("wall_ms", c.wall_ms);
    comp.add("registers", c.registers).add("static_shared_bytes", c.static_shared_bytes);
    comp.add("local_bytes", c.local_bytes).add("spill_store_bytes", c.spill_store_bytes);
    return comp.add("log", trim_compile_log(c.log, 6000)).take();
}

std::optional<double> finite(double x) {
    return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

Value output_json(const output_check& oc, const fs::path& run, json_allocator& a) {
    json_object o(a);
    o.add("arg", oc.arg);
    o.add("file", oc.file.empty() ? Value()
                                  : json_text(oc.file.lexically_relative(run).generic_string(), a));
    o.add("unwritten", static_cast<uint64_t>(oc.unwritten));
    if (!oc.validation) return o.take();
    const validation_result& vr = *oc.validation;
    o.add("checked_on", oc.checked_on_gpu ? "gpu" : "cpu");
    o.add("passed", vr.passed).add("mismatches", static_cast<uint64_t>(vr.mismatches));
    o.add("worst_index", static_cast<uint64_t>(vr.worst_index));
    o.add("worst_actual", finite(vr.worst_actual)).add("worst_expected", finite(vr.worst_expected));
    o.add("max_abs_error", finite(vr.max_abs_error)).add("max_rel_error", finite(vr.max_rel_error));
    return o.add("relative_l2_error", finite(vr.relative_l2_error)).take();
}

Value case_json(const case_evaluation& ce, const fs::path& run, json_allocator& a) {
    Value v(rapidjson::kObjectType);
    json_object c(v, a);
    c.add("name", ce.name);
    c.add("kind", ce.kind == case_kind::performance ? "performance" : "correctness");
    c.add("status", to_string(ce.status)).add("reason", ce.reason);
    c.add("median_ms", ce.median_ms).add("mean_ms", ce.mean_ms).add("min_ms", ce.min_ms);
    c.add("max_ms", ce.max_ms).add("stdev_ms", ce.stdev_ms);
    add_case_timing(v, ce, a);
    json_array outs(a);
    for (const output_check& oc : ce.outputs) outs.push(output_json(oc, run, a));
    c.add("outputs", outs);
    return v;
}

// What compile-ahead did for an attempt; null where its run compiled it.
Value compile_ahead_json(const std::optional<compile_ahead_record>& c, json_allocator& a) {
    if (!c) return Value();
    json_object v(a);
    return v.add("ok", c->ok).add("wall_ms", c->wall_ms).add("waited_ms", c->waited_ms).take();
}

Value attempt_candidate_json(const attempt_result& r, const fs::path& run, json_allocator& a) {
    json_object cand(a);
    cand.add("entry", r.cand.entry);
    cand.add("source_file", (r.folder / "kernel.cu").lexically_relative(run).generic_string());
    cand.add("source_sha256", sha256_hex(r.cand.source)).add("defines", r.cand.defines);
    cand.add("tunables", r.cand.tunables).add("compile_options", r.cand.compile_options);
    return cand.take();
}

Value attempt_json(const attempt_result& r, const fs::path& run, json_allocator& a) {
    json_object v(a);
    v.add("iteration", r.iteration).add("attempt", r.attempt).add("device", r.device);
    v.add("proposer", to_string(r.cand.proposer)).add("label", r.cand.label);
    v.add("rationale", r.cand.rationale).add("parent_iteration", r.cand.parent_iteration);
    v.add("repair_of", r.repair_of >= 0 ? std::optional<int>(r.repair_of) : std::nullopt);
    v.add("candidate", attempt_candidate_json(r, run, a));
    v.add("verdict", to_string(r.verdict)).add("reason", r.reason);
    v.add("became_best", r.became_best).add("geomean_ms", r.geomean_ms);
    v.add("speedup_vs_initial", r.speedup_vs_initial).add("compile", compile_json(r.compile, a));
    v.add("compile_ahead", compile_ahead_json(r.compile_ahead, a));
    json_object h(a);
    h.add("exit_code", r.harness_exit_code).add("signal", r.harness_signal);
    h.add("wall_ms", r.harness_wall_ms).add("stderr_tail", r.harness_stderr);
    v.add("harness", h);
    v.add("confinement", r.confinement.empty() ? Value() : json_text(r.confinement, a));
    json_array cases(a);
    for (const case_evaluation& ce : r.cases) cases.push(case_json(ce, run, a));
    return v.add("cases", cases).take();
}

Value attempt_ref(const search_outcome& o, std::optional<std::size_t> index, json_allocator& a) {
    if (!index) return Value();
    const attempt_result& r = o.history[*index];
    json_object v(a);
    v.add("iteration", r.iteration).add("attempt", r.attempt).add("label", r.cand.label);
    v.add("proposer", to_string(r.cand.proposer)).add("device", r.device);
    v.add("geomean_ms", r.geomean_ms);
    return v.add("speedup_vs_initial", r.speedup_vs_initial.value_or(1.0)).take();
}

// summary.json's outputs of manifest case `mc`: each output argument with its oracle file.
Value summary_outputs_json(const manifest& m, const manifest_case& mc, const oracle_files& oracle,
                           const fs::path& run, json_allocator& a) {
    json_array outs(a);
    for (const manifest_arg& ma : m.args) {
        if (!ma.has_output()) continue;
        json_object ov(a);
        ov.add("arg", ma.name).add("dtype", std::string(dtype_name(ma.type)));
        const tolerance tol = ma.tolerance_in(mc.params);
        ov.add("atol", tol.atol).add("rtol", tol.rtol);
        if (tol.rms_atol > 0) ov.add("rms_atol", tol.rms_atol);
        const auto it = oracle.find({mc.name, ma.name});
        outs.push(ov.add("oracle",
                         it == oracle.end()
                             ? Value()
                             : json_text(it->second.lexically_relative(run).generic_string(), a)));
    }
    return outs.take();
}

// summary.json's entry for manifest case i: medians initial vs best, its outputs' oracles.
Value summary_case_json(const search_outcome& o, const manifest& m, std::size_t i,
                        const oracle_files& oracle, const fs::path& run, json_allocator& a) {
    const manifest_case& mc = m.cases[i];
    json_object c(a);
    c.add("index", static_cast<uint64_t>(i)).add("name", mc.name);
    c.add("kind", mc.kind == case_kind::performance ? "performance" : "correctness");
    // The initial kernel on the device that measured the best (its speedup's baseline).
    const auto initial_ms = o.best ? initial_median_ms(o, o.history[*o.best].device, mc.name)
                                   : o.median_ms(o.initial, mc.name);
    const auto best_ms = o.median_ms(o.best, mc.name);
    c.add("initial_median_ms", initial_ms).add("best_median_ms", best_ms);
    c.add("speedup", initial_ms && best_ms ? Value(*initial_ms / *best_ms) : Value());
    c.add("replay_request",
          o.best ? json_text("best-case-" + std::to_string(i) + ".json", a) : Value());
    return c.add("outputs", summary_outputs_json(m, mc, oracle, run, a)).take();
}

Value resumes_json(const std::vector<resume_entry>& resumes, json_allocator& a) {
    json_array out(a);
    for (const resume_entry& r : resumes) {
        json_object v(a);
        v.add("resumed", r.resumed_utc).add("command_line", r.command_line);
        out.push(v.add("attempts_kept", r.attempts_kept).add("in_flight", r.in_flight));
    }
    return out.take();
}

}  // namespace

std::string setting_text(const setting_value& v) {
    rapidjson::Document doc;
    const Value value = setting_json(v, doc.GetAllocator());
    return to_compact_json(value);
}

fs::path create_run_folder(const fs::path& results_dir, const std::string& prefix) {
    fs::create_directories(results_dir);
    for (int n = 1; n < 100000; ++n) {
        char name[64];
        std::snprintf(name, sizeof name, "%s-%03d", prefix.c_str(), n);
        const fs::path p = results_dir / name;
        if (::mkdir(p.c_str(), 0755) == 0) return p;
        if (errno != EEXIST)
            throw std::runtime_error(p.string() + ": cannot create (" + std::strerror(errno) + ")");
    }
    throw std::runtime_error(results_dir.string() + ": no free " + prefix + " number");
}

fs::path attempt_folder(const fs::path& run, int iteration, int attempt) {
    char name[64];
    std::snprintf(name, sizeof name, "candidates/iter-%02d/attempt-%d", iteration, attempt);
    return run / name;
}

std::string history_json(const search_outcome& o, const fs::path& run) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json_array attempts(a);
    for (const auto& r : o.history) attempts.push(attempt_json(r, run, a));
    json_object(doc)
        .add("schema_version", 1)
        .add("run", run.filename().string())
        .add("attempts", attempts);
    return to_pretty_json(doc);
}

// The go / no-go rule (report_verdict) applied to the summary itself, so that a script reads the
// same verdict the report shows.
static void add_verdict(rapidjson::Document& doc) {
    const go_verdict v = decide_go(doc, Value());
    json_object(doc).add("verdict", verdict_word(v)).add("verdict_reasons", verdict_reasons(v));
}

namespace {

// summary.json's "counts": attempts, valid, and the rejected ones by verdict.
Value counts_json(const search_outcome& o, json_allocator& a) {
    const auto [valid, rejected] = o.counts();
    json_object counts(a);
    counts.add("attempts", static_cast<int>(o.history.size())).add("valid", valid);
    return counts.add("rejected", rejected).take();
}

// A JSON text another part wrote (model usage, device facts) as a value; null for none.
Value parsed_or_null(const std::string& text, json_allocator& a) {
    rapidjson::Document parsed;
    try_parse_json(parsed, text);
    return parsed.IsNull() ? Value() : Value(parsed, a);
}

// run.json's gpu_busy: the meter's figures, in seconds.
Value gpu_busy_json(const gpu_busy_record& g, json_allocator& a) {
    json_array gpus(a);
    for (const gpu_busy_totals& t : g.gpus) {
        json_object gpu(a);
        gpu.add("device", t.device).add("busy_s", t.busy_ms / 1000);
        gpu.add("search_busy_s", t.search_busy_ms / 1000).add("kernels", t.kernels);
        gpu.add("search_kernels", t.search_kernels).add("harness_runs", t.harness_runs);
        gpus.push(gpu.add("unmeasured_runs", t.unmeasured_runs).take());
    }
    json_object out(a);
    out.add("source", g.source).add("search_wall_s", g.search_wall_s).add("gpus", gpus);
    return out.add("busy_fraction", g.busy_fraction).take();
}

// An imported problem's torch.compile row: its verdict and medians, beside the eager baseline.
Value pytorch_compile_json(const attempt_result& r, json_allocator& a) {
    std::map<std::string, std::optional<double>> medians;
    for (const case_evaluation& ce : r.cases)
        if (ce.kind == case_kind::performance) medians[ce.name] = ce.median_ms;
    json_object o(a);
    o.add("verdict", to_string(r.verdict)).add("reason", r.reason);
    return o.add("geomean_ms", r.geomean_ms).add("median_ms", medians).take();
}

}  // namespace

std::string summary_json(const search_outcome& o, const manifest& m, const oracle_files& oracle,
                         const fs::path& run, const std::string& model_json,
                         const evidence_report* evidence, bool simulated,
                         const attempt_result* pytorch_compile) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json_object top(doc);
    top.add("schema_version", 1).add("run_dir", absolute_path(run));
    top.add("stop_reason", to_string(o.stop));
    top.add("error", o.error.empty() ? Value() : json_text(o.error, a));
    top.add("initial", attempt_ref(o, o.initial, a));
    Value best = attempt_ref(o, o.best, a);
    if (o.best) add_winner_fields(best, o.history[*o.best].cand, m, a);
    top.add("best", std::move(best));
    top.add("best_source", o.best ? Value("best.cu") : Value());
    top.add("best_json", o.best ? Value("best.json") : Value());
    json_array cases(a);
    for (std::size_t i = 0; i < m.cases.size(); ++i)
        cases.push(summary_case_json(o, m, i, oracle, run, a));
    top.add("cases", cases).add("counts", counts_json(o, a));
    int iterations = 0;
    for (const auto& r : o.history) iterations = std::max(iterations, r.iteration);
    top.add("iterations_run", iterations);
    top.add("devices", devices_json(o, nullptr, a, evidence ? &evidence->devices : nullptr));
    top.add("timer", timer_json(summarize_timer(o.history), a));
    const auto gpu = summarize_gpu_state(o.history);
    top.add("throttled_cases",
            gpu ? std::optional<int>(static_cast<int>(gpu->throttled.size())) : std::nullopt);
    top.add("model", parsed_or_null(model_json, a));
    top.add("evidence", evidence ? evidence_json(*evidence, o, m, a) : Value());
    if (pytorch_compile) top.add("pytorch_compile", pytorch_compile_json(*pytorch_compile, a));
    if (const std::optional<std::size_t> own = o.own_kernel()) {  // beside PyTorch eager
        Value v = attempt_ref(o, own, a);
        std::map<std::string, std::optional<double>> medians;
        for (const case_evaluation& ce : o.history[*own].cases)
            if (ce.kind == case_kind::performance) medians[ce.name] = ce.median_ms;
        json_object(v, a)
            .add("verdict", to_string(o.history[*own].verdict))
            .add("median_ms", medians);
        top.add("initial_kernel", std::move(v));
    }
    add_verdict(doc);
    json_object(doc).add("simulated", simulated);
    return to_pretty_json(doc);
}

std::string run_json(const run_info& info, const search_outcome& o) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    json_object top(doc);
    top.add("command_line", info.command_line).add("working_directory", info.working_directory);
    top.add("resumes", resumes_json(info.resumes, a)).add("proposer", to_string(info.proposer));
    json_object settings(a);
    for (const auto& [k, v] : info.settings) settings.add(k, setting_json(v, a));
    top.add("settings", settings).add("sha256", info.sha256);
    if (!info.inputs_key_id.empty()) {
        json_object key(a);
        key.add("file", k_inputs_key_file).add("id", info.inputs_key_id);
        top.add("inputs_key", key);
    }
    top.add("device", parsed_or_null(info.device.json, a));
    top.add("devices", devices_json(o, &info.devices, a));
    top.add("started", info.started_utc);
    top.add("finished", info.finished_utc.empty() ? Value() : json_text(info.finished_utc, a));
    top.add("wall_s", info.wall_s);
    double harness_s = 0;
    for (const auto& r : o.history) harness_s += r.harness_wall_ms / 1000.0;
    top.add("harness_wall_s", harness_s).add("gpu_busy", gpu_busy_json(info.gpu_busy, a));
    top.add("timer", timer_json(summarize_timer(o.history), a));
    top.add("gpu_state", gpu_state_json(summarize_gpu_state(o.history), a));
    top.add("attempts", static_cast<int>(o.history.size()));
    if (!info.finished_utc.empty()) {  // under way: no stop reason yet
        top.add("stop_reason", to_string(o.stop));
        top.add("error", o.error.empty() ? Value() : json_text(o.error, a));
    }
    top.add("model", parsed_or_null(info.model_json, a));
    top.add("harness_processes", parsed_or_null(info.harness_processes_json, a));
    if (info.confinement)
        top.add("confinement",
                confinement_record_json(count_confinement(*info.confinement, o.history), a));
    return to_pretty_json(doc);
}

}  // namespace cuopt
