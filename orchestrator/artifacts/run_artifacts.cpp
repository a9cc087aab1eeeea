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
using allocator = rapidjson::Document::AllocatorType;

namespace {

// A setting as run.json records it: text as a string, every other kind as itself.
Value setting_json(const setting_value& v, allocator& a) {
    return std::visit(
        [&a](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>)
                return json_text(x, a);
            else
                return Value(x);
        },
        v);
}
Value integer(const std::optional<int>& v) {
    return v ? Value(*v) : Value();
}

Value compile_json(const compile_summary& c, allocator& a) {
    Value comp(rapidjson::kObjectType);
    comp.AddMember("ok", c.ok, a);
    comp.AddMember("cache_hit", c.cache_hit, a);
    comp.AddMember("wall_ms", c.wall_ms, a);
    comp.AddMember("registers", integer(c.registers), a);
    comp.AddMember("static_shared_bytes", integer(c.static_shared_bytes), a);
    comp.AddMember("local_bytes", integer(c.local_bytes), a);
    comp.AddMember("spill_store_bytes", integer(c.spill_store_bytes), a);
    comp.AddMember("log", json_text(trim_compile_log(c.log, 6000), a), a);
    return comp;
}

Value finite(double x) {
    return std::isfinite(x) ? Value(x) : Value();
}

Value output_json(const output_check& oc, const fs::path& run, allocator& a) {
    Value o(rapidjson::kObjectType);
    o.AddMember("arg", json_text(oc.arg, a), a);
    o.AddMember("file", json_text(oc.file.lexically_relative(run).generic_string(), a), a);
    o.AddMember("unwritten", static_cast<uint64_t>(oc.unwritten), a);
    if (!oc.validation) return o;
    const validation_result& vr = *oc.validation;
    o.AddMember("passed", vr.passed, a);
    o.AddMember("mismatches", static_cast<uint64_t>(vr.mismatches), a);
    o.AddMember("worst_index", static_cast<uint64_t>(vr.worst_index), a);
    o.AddMember("worst_actual", finite(vr.worst_actual), a);
    o.AddMember("worst_expected", finite(vr.worst_expected), a);
    o.AddMember("max_abs_error", finite(vr.max_abs_error), a);
    o.AddMember("max_rel_error", finite(vr.max_rel_error), a);
    o.AddMember("relative_l2_error", finite(vr.relative_l2_error), a);
    return o;
}

Value case_json(const case_evaluation& ce, const fs::path& run, allocator& a) {
    Value c(rapidjson::kObjectType);
    c.AddMember("name", json_text(ce.name, a), a);
    c.AddMember("kind",
                json_text(ce.kind == case_kind::performance ? "performance" : "correctness", a), a);
    c.AddMember("status", rapidjson::StringRef(to_string(ce.status)), a);
    c.AddMember("reason", json_text(ce.reason, a), a);
    c.AddMember("median_ms", json_number(ce.median_ms), a);
    c.AddMember("mean_ms", json_number(ce.mean_ms), a);
    c.AddMember("min_ms", json_number(ce.min_ms), a);
    c.AddMember("max_ms", json_number(ce.max_ms), a);
    c.AddMember("stdev_ms", json_number(ce.stdev_ms), a);
    add_case_timing(c, ce, a);
    Value outs(rapidjson::kArrayType);
    for (const output_check& oc : ce.outputs) outs.PushBack(output_json(oc, run, a), a);
    c.AddMember("outputs", outs, a);
    return c;
}

// What compile-ahead did for an attempt; null where its run compiled it.
Value compile_ahead_json(const std::optional<compile_ahead_record>& c, allocator& a) {
    if (!c) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("ok", c->ok, a);
    v.AddMember("wall_ms", c->wall_ms, a);
    v.AddMember("waited_ms", c->waited_ms, a);
    return v;
}

Value attempt_json(const attempt_result& r, const fs::path& run, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("iteration", r.iteration, a);
    v.AddMember("attempt", r.attempt, a);
    v.AddMember("device", r.device, a);
    v.AddMember("proposer", rapidjson::StringRef(to_string(r.cand.proposer)), a);
    v.AddMember("label", json_text(r.cand.label, a), a);
    v.AddMember("rationale", json_text(r.cand.rationale, a), a);
    v.AddMember("parent_iteration",
                r.cand.parent_iteration ? Value(*r.cand.parent_iteration) : Value(), a);
    v.AddMember("repair_of", r.repair_of >= 0 ? Value(r.repair_of) : Value(), a);
    Value cand(rapidjson::kObjectType);
    cand.AddMember("entry", json_text(r.cand.entry, a), a);
    cand.AddMember("source_file",
                   json_text((r.folder / "kernel.cu").lexically_relative(run).generic_string(), a),
                   a);
    cand.AddMember("source_sha256", json_text(sha256_hex(r.cand.source), a), a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [k, val] : r.cand.defines)
        defines.AddMember(json_text(k, a), json_text(val, a), a);
    cand.AddMember("defines", defines, a);
    Value tunables(rapidjson::kObjectType);
    for (const auto& [k, val] : r.cand.tunables)
        tunables.AddMember(json_text(k, a), Value(static_cast<int64_t>(val)), a);
    cand.AddMember("tunables", tunables, a);
    Value opts(rapidjson::kArrayType);
    for (const auto& o : r.cand.compile_options) opts.PushBack(json_text(o, a), a);
    cand.AddMember("compile_options", opts, a);
    v.AddMember("candidate", cand, a);
    v.AddMember("verdict", rapidjson::StringRef(to_string(r.verdict)), a);
    v.AddMember("reason", json_text(r.reason, a), a);
    v.AddMember("became_best", r.became_best, a);
    v.AddMember("geomean_ms", json_number(r.geomean_ms), a);
    v.AddMember("speedup_vs_initial", json_number(r.speedup_vs_initial), a);
    v.AddMember("compile", compile_json(r.compile, a), a);
    v.AddMember("compile_ahead", compile_ahead_json(r.compile_ahead, a), a);
    Value h(rapidjson::kObjectType);
    h.AddMember("exit_code", r.harness_exit_code, a);
    h.AddMember("signal", r.harness_signal, a);
    h.AddMember("wall_ms", r.harness_wall_ms, a);
    h.AddMember("stderr_tail", json_text(r.harness_stderr, a), a);
    v.AddMember("harness", h, a);
    v.AddMember("confinement", r.confinement.empty() ? Value() : json_text(r.confinement, a), a);
    Value cases(rapidjson::kArrayType);
    for (const case_evaluation& ce : r.cases) cases.PushBack(case_json(ce, run, a), a);
    v.AddMember("cases", cases, a);
    return v;
}

Value attempt_ref(const search_outcome& o, std::optional<std::size_t> index, allocator& a) {
    if (!index) return Value();
    const attempt_result& r = o.history[*index];
    Value v(rapidjson::kObjectType);
    v.AddMember("iteration", r.iteration, a);
    v.AddMember("attempt", r.attempt, a);
    v.AddMember("label", json_text(r.cand.label, a), a);
    v.AddMember("proposer", rapidjson::StringRef(to_string(r.cand.proposer)), a);
    v.AddMember("device", r.device, a);
    v.AddMember("geomean_ms", json_number(r.geomean_ms), a);
    v.AddMember(
        "speedup_vs_initial",
        json_number(r.speedup_vs_initial ? r.speedup_vs_initial : std::optional<double>(1.0)), a);
    return v;
}

// summary.json's entry for manifest case i: medians initial vs best, its outputs' oracles.
Value summary_case_json(const search_outcome& o, const manifest& m, std::size_t i,
                        const oracle_files& oracle, const fs::path& run, allocator& a) {
    const manifest_case& mc = m.cases[i];
    Value c(rapidjson::kObjectType);
    c.AddMember("index", static_cast<uint64_t>(i), a);
    c.AddMember("name", json_text(mc.name, a), a);
    c.AddMember("kind",
                json_text(mc.kind == case_kind::performance ? "performance" : "correctness", a), a);
    // The initial kernel on the device that measured the best (its speedup's baseline).
    const auto initial_ms = o.best ? initial_median_ms(o, o.history[*o.best].device, mc.name)
                                   : o.median_ms(o.initial, mc.name);
    const auto best_ms = o.median_ms(o.best, mc.name);
    c.AddMember("initial_median_ms", json_number(initial_ms), a);
    c.AddMember("best_median_ms", json_number(best_ms), a);
    c.AddMember("speedup", initial_ms && best_ms ? Value(*initial_ms / *best_ms) : Value(), a);
    c.AddMember("replay_request",
                o.best ? json_text("best-case-" + std::to_string(i) + ".json", a) : Value(), a);
    Value outs(rapidjson::kArrayType);
    for (const manifest_arg& ma : m.args) {
        if (!ma.has_output()) continue;
        Value ov(rapidjson::kObjectType);
        ov.AddMember("arg", json_text(ma.name, a), a);
        ov.AddMember("dtype", json_text(std::string(dtype_name(ma.type)), a), a);
        ov.AddMember("atol", ma.tol.atol, a);
        ov.AddMember("rtol", ma.tol.rtol, a);
        const auto it = oracle.find({mc.name, ma.name});
        ov.AddMember("oracle",
                     it == oracle.end()
                         ? Value()
                         : json_text(it->second.lexically_relative(run).generic_string(), a),
                     a);
        outs.PushBack(ov, a);
    }
    c.AddMember("outputs", outs, a);
    return c;
}

Value resumes_json(const std::vector<resume_entry>& resumes, allocator& a) {
    Value out(rapidjson::kArrayType);
    for (const resume_entry& r : resumes) {
        Value v(rapidjson::kObjectType);
        v.AddMember("resumed", json_text(r.resumed_utc, a), a);
        Value cmd(rapidjson::kArrayType);
        for (const auto& c : r.command_line) cmd.PushBack(json_text(c, a), a);
        v.AddMember("command_line", cmd, a);
        v.AddMember("attempts_kept", r.attempts_kept, a);
        Value in_flight(rapidjson::kArrayType);
        for (const auto& f : r.in_flight) in_flight.PushBack(json_text(f, a), a);
        v.AddMember("in_flight", in_flight, a);
        out.PushBack(v, a);
    }
    return out;
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
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("run", json_text(run.filename().string(), a), a);
    Value attempts(rapidjson::kArrayType);
    for (const auto& r : o.history) attempts.PushBack(attempt_json(r, run, a), a);
    doc.AddMember("attempts", attempts, a);
    return to_pretty_json(doc);
}

// The go / no-go rule (report_verdict) applied to the summary itself, so that a script reads the
// same verdict the report shows.
static void add_verdict(rapidjson::Document& doc) {
    auto& a = doc.GetAllocator();
    const go_verdict v = decide_go(doc, Value());
    Value reasons(rapidjson::kArrayType);
    for (const std::string& r : verdict_reasons(v)) reasons.PushBack(json_text(r, a), a);
    doc.AddMember("verdict", json_text(verdict_word(v), a), a);
    doc.AddMember("verdict_reasons", reasons, a);
}

std::string summary_json(const search_outcome& o, const manifest& m, const oracle_files& oracle,
                         const fs::path& run, const std::string& model_json,
                         const evidence_report* evidence, bool simulated) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("run_dir", json_text(absolute_path(run), a), a);
    doc.AddMember("stop_reason", rapidjson::StringRef(to_string(o.stop)), a);
    doc.AddMember("error", o.error.empty() ? Value() : json_text(o.error, a), a);
    doc.AddMember("initial", attempt_ref(o, o.initial, a), a);
    Value best = attempt_ref(o, o.best, a);
    if (o.best) add_winner_fields(best, o.history[*o.best].cand, m, a);
    doc.AddMember("best", best, a);
    doc.AddMember("best_source", o.best ? Value("best.cu") : Value(), a);
    doc.AddMember("best_json", o.best ? Value("best.json") : Value(), a);
    Value cases(rapidjson::kArrayType);
    for (std::size_t i = 0; i < m.cases.size(); ++i)
        cases.PushBack(summary_case_json(o, m, i, oracle, run, a), a);
    doc.AddMember("cases", cases, a);
    Value counts(rapidjson::kObjectType);
    const auto [valid, rejected] = o.counts();
    counts.AddMember("attempts", static_cast<int>(o.history.size()), a);
    counts.AddMember("valid", valid, a);
    Value rej(rapidjson::kObjectType);
    for (const auto& [k, n] : rejected) rej.AddMember(json_text(k, a), Value(n), a);
    counts.AddMember("rejected", rej, a);
    doc.AddMember("counts", counts, a);
    int iterations = 0;
    for (const auto& r : o.history) iterations = std::max(iterations, r.iteration);
    doc.AddMember("iterations_run", iterations, a);
    doc.AddMember("devices", devices_json(o, nullptr, a, evidence ? &evidence->devices : nullptr),
                  a);
    doc.AddMember("timer", timer_json(summarize_timer(o.history), a), a);
    const auto gpu = summarize_gpu_state(o.history);
    doc.AddMember("throttled_cases", gpu ? Value(static_cast<int>(gpu->throttled.size())) : Value(),
                  a);
    rapidjson::Document model;
    try_parse_json(model, model_json);
    doc.AddMember("model", model.IsNull() ? Value() : Value(model, a), a);
    doc.AddMember("evidence", evidence ? evidence_json(*evidence, o, m, a) : Value(), a);
    add_verdict(doc);
    doc.AddMember("simulated", simulated, a);
    return to_pretty_json(doc);
}

std::string run_json(const run_info& info, const search_outcome& o) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    Value cmd(rapidjson::kArrayType);
    for (const auto& c : info.command_line) cmd.PushBack(json_text(c, a), a);
    doc.AddMember("command_line", cmd, a);
    doc.AddMember("working_directory", json_text(info.working_directory, a), a);
    doc.AddMember("resumes", resumes_json(info.resumes, a), a);
    doc.AddMember("proposer", rapidjson::StringRef(to_string(info.proposer)), a);
    Value settings(rapidjson::kObjectType);
    for (const auto& [k, v] : info.settings)
        settings.AddMember(json_text(k, a), setting_json(v, a), a);
    doc.AddMember("settings", settings, a);
    Value hashes(rapidjson::kObjectType);
    for (const auto& [k, v] : info.sha256) hashes.AddMember(json_text(k, a), json_text(v, a), a);
    doc.AddMember("sha256", hashes, a);
    rapidjson::Document device;
    try_parse_json(device, info.device_json);
    doc.AddMember("device", device.IsNull() ? Value() : Value(device, a), a);
    doc.AddMember("devices", devices_json(o, &info.devices_json, a), a);
    doc.AddMember("started", json_text(info.started_utc, a), a);
    doc.AddMember("finished", info.finished_utc.empty() ? Value() : json_text(info.finished_utc, a),
                  a);
    doc.AddMember("wall_s", info.wall_s, a);
    double harness_s = 0, gpu_ms = 0;
    for (const auto& r : o.history) {
        harness_s += r.harness_wall_ms / 1000.0;
        for (const auto& ce : r.cases)
            if (ce.median_ms) gpu_ms += *ce.median_ms * info.launches_per_measured_case;
    }
    doc.AddMember("harness_wall_s", harness_s, a);
    doc.AddMember("gpu_busy_ms_estimate", gpu_ms, a);
    doc.AddMember("timer", timer_json(summarize_timer(o.history), a), a);
    doc.AddMember("gpu_state", gpu_state_json(summarize_gpu_state(o.history), a), a);
    doc.AddMember("attempts", static_cast<int>(o.history.size()), a);
    if (!info.finished_utc.empty()) {  // under way: no stop reason yet
        doc.AddMember("stop_reason", rapidjson::StringRef(to_string(o.stop)), a);
        doc.AddMember("error", o.error.empty() ? Value() : json_text(o.error, a), a);
    }
    rapidjson::Document model;
    try_parse_json(model, info.model_json);
    doc.AddMember("model", model.IsNull() ? Value() : Value(model, a), a);
    rapidjson::Document processes;
    try_parse_json(processes, info.harness_processes_json);
    doc.AddMember("harness_processes", processes.IsNull() ? Value() : Value(processes, a), a);
    if (info.confinement)
        doc.AddMember("confinement",
                      confinement_record_json(count_confinement(*info.confinement, o.history), a),
                      a);
    return to_pretty_json(doc);
}

}  // namespace cuopt
