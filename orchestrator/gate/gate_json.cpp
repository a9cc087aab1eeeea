#include "orchestrator/gate/gate_json.hpp"

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/gate/accepted_figures.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

namespace {

Value text_or_null(const std::string& s, allocator& a) {
    return s.empty() ? Value() : json_text(s, a);
}

Value device_json(const device_summary& d, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("name", text_or_null(d.name, a), a);
    v.AddMember("uuid", text_or_null(d.uuid, a), a);
    v.AddMember("compute_capability", text_or_null(d.compute_capability, a), a);
    v.AddMember("driver_version", text_or_null(d.driver_version, a), a);
    v.AddMember("nvrtc_version", text_or_null(d.nvrtc_version, a), a);
    v.AddMember("sm_clock_max_khz", d.sm_clock_max_khz ? Value(*d.sm_clock_max_khz) : Value(), a);
    v.AddMember("memory_clock_max_khz",
                d.memory_clock_max_khz ? Value(*d.memory_clock_max_khz) : Value(), a);
    return v;
}

Value environment_json(const environment& e, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("device", device_json(e.device, a), a);
    v.AddMember("gpu_state", gpu_state_json(e.gpu_state, a), a);
    return v;
}

Value texts_json(const std::vector<std::string>& texts, allocator& a) {
    Value v(rapidjson::kArrayType);
    for (const std::string& t : texts) v.PushBack(json_text(t, a), a);
    return v;
}

Value comparison_json(const gate_record& r, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("recorded", environment_json(r.recorded, a), a);
    v.AddMember("now", environment_json(r.now, a), a);
    v.AddMember("same_model", r.comparison ? Value(r.comparison->same_model) : Value(), a);
    Value changes(rapidjson::kArrayType);
    if (r.comparison)
        for (const environment_change& c : r.comparison->changes) {
            Value e(rapidjson::kObjectType);
            e.AddMember("what", json_text(c.what, a), a);
            e.AddMember("recorded", json_text(c.recorded, a), a);
            e.AddMember("now", json_text(c.now, a), a);
            changes.PushBack(e, a);
        }
    v.AddMember("changes", changes, a);
    v.AddMember("conditions",
                texts_json(r.comparison ? r.comparison->conditions : std::vector<std::string>{}, a),
                a);
    return v;
}

Value slowdown_json(const std::optional<slowdown_estimate>& s, allocator& a) {
    if (!s) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("ratio", s->ratio, a);
    v.AddMember("low", s->low, a);
    v.AddMember("high", s->high, a);
    v.AddMember("verdict", json_text(to_string(s->verdict), a), a);
    v.AddMember("regression", s->regression, a);
    return v;
}

Value latency_json(const std::optional<latency_report>& l, allocator& a) {
    if (!l) return Value();
    Value cases(rapidjson::kArrayType);
    for (const case_latency& c : l->cases) {
        Value e(rapidjson::kObjectType);
        e.AddMember("name", json_text(c.name, a), a);
        e.AddMember("accepted_median_ms", c.accepted_ms, a);
        e.AddMember("kernel_median_ms", c.kernel_ms, a);
        e.AddMember("accepted_now_median_ms", json_number(c.accepted_now_ms), a);
        e.AddMember("vs_accepted", slowdown_json(c.vs_accepted, a), a);
        e.AddMember("vs_accepted_now", slowdown_json(c.vs_accepted_now, a), a);
        e.AddMember("drift", slowdown_json(c.drift, a), a);
        cases.PushBack(e, a);
    }
    Value g(rapidjson::kObjectType);
    g.AddMember("vs_accepted", slowdown_json(l->geomean, a), a);
    g.AddMember("vs_accepted_now", slowdown_json(l->geomean_vs_accepted_now, a), a);
    g.AddMember("drift", slowdown_json(l->geomean_drift, a), a);
    Value v(rapidjson::kObjectType);
    v.AddMember("cases", cases, a);
    v.AddMember("geomean", g, a);
    return v;
}

Value runs_json(const gate_record& r, allocator& a) {
    Value runs(rapidjson::kArrayType);
    for (const kernel_run& k : r.runs) {
        Value e(rapidjson::kObjectType);
        e.AddMember("round", k.round, a);
        e.AddMember("role", json_text(k.role, a), a);
        e.AddMember("folder", json_text(k.result.folder.lexically_relative(r.folder).string(), a),
                    a);
        e.AddMember("verdict", json_text(to_string(k.result.verdict), a), a);
        e.AddMember("reason", json_text(k.result.reason, a), a);
        e.AddMember("wrong_outputs", texts_json(k.wrong, a), a);
        runs.PushBack(e, a);
    }
    return runs;
}

Value kernel_json(const fs::path& file, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("file", json_text(file.string(), a), a);
    v.AddMember("sha256", fs::is_regular_file(file) ? json_text(sha256_file_hex(file), a) : Value(),
                a);
    return v;
}

Value settings_json(const gate_options& o, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("threshold", o.threshold, a);
    v.AddMember("runs", o.runs, a);
    v.AddMember("accept", o.accept, a);
    v.AddMember("harness", json_text(o.harness, a), a);
    v.AddMember("timeout_s", o.timeout_s, a);
    v.AddMember("device", o.device ? Value(*o.device) : Value(), a);
    return v;
}

void add_outcome(rapidjson::Document& doc, const gate_record& r) {
    auto& a = doc.GetAllocator();
    doc.AddMember("verdict", json_text(k_gate_outcomes.name(r.verdict.outcome), a), a);
    doc.AddMember("exit_code", r.exit_code, a);
    doc.AddMember("summary", json_text(r.verdict.line, a), a);
    doc.AddMember("reasons", texts_json(r.verdict.reasons, a), a);
    doc.AddMember(
        "environment_notes",
        texts_json(r.comparison ? environment_lines(*r.comparison) : std::vector<std::string>{}, a),
        a);
    Value baseline(rapidjson::kObjectType);
    baseline.AddMember("written", r.baseline_written, a);
    baseline.AddMember(
        "file",
        r.baseline_written ? json_text((r.run / k_gate_baseline_file).string(), a) : Value(), a);
    baseline.AddMember("note", text_or_null(r.baseline_note, a), a);
    doc.AddMember("baseline", baseline, a);
}

}  // namespace

std::string gate_json(const gate_record& r) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    add_outcome(doc, r);
    doc.AddMember("accepted_run", json_text(r.run.string(), a), a);
    doc.AddMember("gate_dir", json_text(r.folder.string(), a), a);
    doc.AddMember("accepted_kernel", kernel_json(r.accepted_kernel, a), a);
    Value kernel = kernel_json(r.kernel, a);
    kernel.AddMember("is_accepted", r.options.kernel.empty(), a);
    doc.AddMember("kernel", kernel, a);
    doc.AddMember("figures_source", text_or_null(r.figures_source, a), a);
    doc.AddMember("settings", settings_json(r.options, a), a);
    doc.AddMember("started", json_text(r.started, a), a);
    doc.AddMember("finished", json_text(r.finished, a), a);
    doc.AddMember("wall_s", r.wall_s, a);
    doc.AddMember("environment", comparison_json(r, a), a);
    doc.AddMember("runs", runs_json(r, a), a);
    doc.AddMember("latency", latency_json(r.latency, a), a);
    try {
        validate_json(doc, embedded_schema("gate"), "gate.json");
    } catch (const json_error& e) {
        throw std::logic_error(e.what());
    }
    return to_pretty_json(doc);
}

void write_gate_baseline(const gate_record& r) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    doc.AddMember("recorded", json_text(utc_now(), a), a);
    doc.AddMember("gate_dir", json_text(r.folder.string(), a), a);
    Value kernel(rapidjson::kObjectType);
    kernel.AddMember("file", json_text(k_gate_baseline_kernel, a), a);
    kernel.AddMember("sha256", json_text(sha256_file_hex(r.kernel), a), a);
    kernel.AddMember("from", json_text(r.kernel.string(), a), a);
    doc.AddMember("kernel", kernel, a);
    doc.AddMember("device", device_json(r.now.device, a), a);
    doc.AddMember("gpu_state", gpu_state_json(r.now.gpu_state, a), a);
    Value cases(rapidjson::kArrayType);
    for (const auto& [name, runs] : samples_of(r.runs, "kernel")) {
        Value c(rapidjson::kObjectType), list(rapidjson::kArrayType);
        c.AddMember("name", json_text(name, a), a);
        c.AddMember("median_ms", pooled_median(runs), a);
        for (const std::vector<double>& run : runs) {
            Value samples(rapidjson::kArrayType);
            for (double s : run) samples.PushBack(s, a);
            list.PushBack(samples, a);
        }
        c.AddMember("runs", list, a);
        cases.PushBack(c, a);
    }
    doc.AddMember("cases", cases, a);
    validate_json(doc, embedded_schema("gate-baseline"), k_gate_baseline_file);
    const std::string source = read_text_file(r.kernel);  // before a copy onto itself
    write_file_atomic(r.run / k_gate_baseline_kernel, source);
    write_file_atomic(r.run / k_gate_baseline_file, to_pretty_json(doc));
}

}  // namespace cuopt
