#include "orchestrator/gate/gate_json.hpp"

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/gate/accepted_figures.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

std::optional<std::string> text_or_null(const std::string& s) {
    return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

Value device_json(const device_summary& d, json_allocator& a) {
    json_object v(a);
    v.add("name", text_or_null(d.name))
        .add("uuid", text_or_null(d.uuid))
        .add("compute_capability", text_or_null(d.compute_capability))
        .add("driver_version", text_or_null(d.driver_version))
        .add("nvrtc_version", text_or_null(d.nvrtc_version))
        .add("sm_clock_max_khz", d.sm_clock_max_khz)
        .add("memory_clock_max_khz", d.memory_clock_max_khz);
    return v.take();
}

Value environment_json(const environment& e, json_allocator& a) {
    json_object v(a);
    v.add("device", device_json(e.device, a)).add("gpu_state", gpu_state_json(e.gpu_state, a));
    return v.take();
}

Value comparison_json(const gate_record& r, json_allocator& a) {
    json_object v(a);
    v.add("recorded", environment_json(r.recorded, a))
        .add("now", environment_json(r.now, a))
        .add("same_model",
             r.comparison ? std::optional<bool>(r.comparison->same_model) : std::nullopt);
    json_array changes(a);
    if (r.comparison)
        for (const environment_change& c : r.comparison->changes) {
            json_object e(a);
            e.add("what", c.what).add("recorded", c.recorded).add("now", c.now);
            changes.push(e);
        }
    v.add("changes", changes)
        .add("conditions", r.comparison ? r.comparison->conditions : std::vector<std::string>{});
    return v.take();
}

Value slowdown_json(const std::optional<slowdown_estimate>& s, json_allocator& a) {
    if (!s) return Value();
    json_object v(a);
    v.add("ratio", s->ratio)
        .add("low", s->low)
        .add("high", s->high)
        .add("verdict", to_string(s->verdict))
        .add("regression", s->regression);
    return v.take();
}

Value latency_json(const std::optional<latency_report>& l, json_allocator& a) {
    if (!l) return Value();
    json_array cases(a);
    for (const case_latency& c : l->cases) {
        json_object e(a);
        e.add("name", c.name)
            .add("accepted_median_ms", c.accepted_ms)
            .add("kernel_median_ms", c.kernel_ms)
            .add("accepted_now_median_ms", json_number(c.accepted_now_ms))
            .add("vs_accepted", slowdown_json(c.vs_accepted, a))
            .add("vs_accepted_now", slowdown_json(c.vs_accepted_now, a))
            .add("drift", slowdown_json(c.drift, a));
        cases.push(e);
    }
    json_object g(a);
    g.add("vs_accepted", slowdown_json(l->geomean, a))
        .add("vs_accepted_now", slowdown_json(l->geomean_vs_accepted_now, a))
        .add("drift", slowdown_json(l->geomean_drift, a));
    json_object v(a);
    v.add("cases", cases).add("geomean", g);
    return v.take();
}

Value runs_json(const gate_record& r, json_allocator& a) {
    json_array runs(a);
    for (const kernel_run& k : r.runs) {
        json_object e(a);
        e.add("round", k.round)
            .add("role", k.role)
            .add("folder", k.result.folder.lexically_relative(r.folder).string())
            .add("verdict", to_string(k.result.verdict))
            .add("reason", k.result.reason)
            .add("wrong_outputs", k.wrong);
        runs.push(e);
    }
    return runs.take();
}

json_object kernel_json(const fs::path& file, json_allocator& a) {
    json_object v(a);
    v.add("file", file.string())
        .add("sha256", fs::is_regular_file(file) ? std::optional<std::string>(sha256_file_hex(file))
                                                 : std::nullopt);
    return v;
}

Value settings_json(const gate_options& o, json_allocator& a) {
    json_object v(a);
    v.add("threshold", o.threshold)
        .add("runs", o.runs)
        .add("accept", o.accept)
        .add("harness", o.harness)
        .add("timeout_s", o.timeout_s)
        .add("device", o.device);
    return v.take();
}

void add_outcome(rapidjson::Document& doc, const gate_record& r) {
    json_object d(doc);
    auto& a = d.allocator();
    d.add("verdict", k_gate_outcomes.name(r.verdict.outcome))
        .add("exit_code", r.exit_code)
        .add("summary", r.verdict.line)
        .add("reasons", r.verdict.reasons)
        .add("environment_notes",
             r.comparison ? environment_lines(*r.comparison) : std::vector<std::string>{});
    json_object baseline(a);
    baseline.add("written", r.baseline_written)
        .add("file", r.baseline_written
                         ? std::optional<std::string>((r.run / k_gate_baseline_file).string())
                         : std::nullopt)
        .add("note", text_or_null(r.baseline_note));
    d.add("baseline", baseline);
}

}  // namespace

std::string gate_json(const gate_record& r) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-optimizer");
    add_outcome(doc, r);
    json_object kernel = kernel_json(r.kernel, a);
    kernel.add("is_accepted", r.options.kernel.empty());
    json_object d(doc);
    d.add("accepted_run", r.run.string())
        .add("gate_dir", r.folder.string())
        .add("accepted_kernel", kernel_json(r.accepted_kernel, a))
        .add("kernel", kernel)
        .add("figures_source", text_or_null(r.figures_source))
        .add("settings", settings_json(r.options, a))
        .add("started", r.started)
        .add("finished", r.finished)
        .add("wall_s", r.wall_s)
        .add("environment", comparison_json(r, a))
        .add("runs", runs_json(r, a))
        .add("latency", latency_json(r.latency, a));
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
    json_object kernel(a);
    kernel.add("file", k_gate_baseline_kernel)
        .add("sha256", sha256_file_hex(r.kernel))
        .add("from", r.kernel.string());
    json_array cases(a);
    for (const auto& [name, runs] : samples_of(r.runs, "kernel")) {
        json_object c(a);
        c.add("name", name).add("median_ms", pooled_median(runs)).add("runs", runs);
        cases.push(c);
    }
    json_object d(doc);
    d.add("recorded", utc_now())
        .add("gate_dir", r.folder.string())
        .add("kernel", kernel)
        .add("device", device_json(r.now.device, a))
        .add("gpu_state", gpu_state_json(r.now.gpu_state, a))
        .add("cases", cases);
    validate_json(doc, embedded_schema("gate-baseline"), k_gate_baseline_file);
    const std::string source = read_text_file(r.kernel);  // before a copy onto itself
    write_file_atomic(r.run / k_gate_baseline_kernel, source);
    write_file_atomic(r.run / k_gate_baseline_file, to_pretty_json(doc));
}

}  // namespace cuopt
