#include <rapidjson/document.h>

#include "common/json_document.hpp"
#include "harness/device_measurement.hpp"
#include "harness/gpu_state.hpp"
#include "harness/harness_report.hpp"

namespace cuopt {

namespace {

using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

Value device_json(const device_fingerprint& d, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("index", d.index, a);
    v.AddMember("name", json_text(d.name, a), a);
    v.AddMember("uuid", json_text(d.uuid, a), a);
    v.AddMember("pci_bus_id", json_text(d.pci_bus_id, a), a);
    v.AddMember("compute_capability",
                json_text(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor), a), a);
    v.AddMember("arch", json_text(d.arch(), a), a);
    v.AddMember("sm_count", d.sm_count, a);
    v.AddMember("l2_bytes", static_cast<int64_t>(d.l2_bytes), a);
    v.AddMember("total_memory_bytes", static_cast<int64_t>(d.total_memory_bytes), a);
    v.AddMember("max_threads_per_block", d.max_threads_per_block, a);
    v.AddMember("max_shared_per_block_optin_bytes", d.max_shared_per_block_optin_bytes, a);
    v.AddMember("sm_clock_max_khz", d.sm_clock_khz, a);
    v.AddMember("memory_clock_max_khz", d.memory_clock_khz, a);
    v.AddMember("memory_bus_width_bits", d.memory_bus_width_bits, a);
    v.AddMember("driver_version",
                json_text(std::to_string(d.driver_version / 1000) + "." +
                              std::to_string((d.driver_version % 1000) / 10),
                          a),
                a);
    v.AddMember("nvrtc_version", json_text(d.nvrtc_version, a), a);
    if (d.simulated) v.AddMember("simulated", true, a);  // only a stand-in says so
    return v;
}

Value compile_json(const harness_report& r, allocator& a) {
    const compile_result& c = *r.compile;
    Value v(rapidjson::kObjectType);
    v.AddMember("ok", c.ok, a);
    v.AddMember("entry", json_text(r.entry, a), a);
    v.AddMember("lowered_name", json_text(c.lowered_name, a), a);
    v.AddMember("arch", json_text(c.arch, a), a);
    v.AddMember("nvrtc_version", json_text(nvrtc_version_string(), a), a);
    Value opts(rapidjson::kArrayType);
    for (const auto& o : c.options) opts.PushBack(json_text(o, a), a);
    v.AddMember("options", opts, a);
    v.AddMember("log", json_text(c.log, a), a);
    v.AddMember("wall_ms", c.wall_ms, a);
    v.AddMember("cache_hit", c.cache_hit, a);
    v.AddMember("cubin_sha256", c.ok ? json_text(c.cubin_sha256, a) : Value(), a);
    Value res(rapidjson::kObjectType);
    const auto& p = c.ptxas;
    auto num = [](long long x) { return x < 0 ? Value() : Value(static_cast<int64_t>(x)); };
    res.AddMember("registers", r.attributes ? Value(r.attributes->registers) : num(p.registers), a);
    res.AddMember(
        "static_shared_bytes",
        r.attributes ? Value(r.attributes->static_shared_bytes) : num(p.static_shared_bytes), a);
    res.AddMember("local_bytes", r.attributes ? Value(r.attributes->local_bytes) : Value(), a);
    res.AddMember("const_bytes",
                  r.attributes ? Value(r.attributes->const_bytes) : num(p.constant_bytes), a);
    res.AddMember("max_threads_per_block",
                  r.attributes ? Value(r.attributes->max_threads_per_block) : Value(), a);
    res.AddMember("stack_frame_bytes", num(p.stack_frame_bytes), a);
    res.AddMember("spill_store_bytes", num(p.spill_store_bytes), a);
    res.AddMember("spill_load_bytes", num(p.spill_load_bytes), a);
    res.AddMember("source", json_text(r.attributes ? "driver" : "ptxas", a), a);
    v.AddMember("resources", res, a);
    return v;
}

Value samples_json(const std::vector<double>& samples, allocator& a) {
    Value v(rapidjson::kArrayType);
    for (double s : samples) v.PushBack(s, a);
    return v;
}

// One channel's samples and their summary; null for a channel that did not run.
Value channel_json(const std::vector<double>& samples, allocator& a) {
    if (samples.empty()) return Value();
    const sample_statistics s = summarize(samples);
    Value v(rapidjson::kObjectType);
    v.AddMember("median_ms", s.median, a);
    v.AddMember("min_ms", s.min, a);
    v.AddMember("max_ms", s.max, a);
    v.AddMember("samples_ms", samples_json(samples, a), a);
    return v;
}

Value reasons_json(std::uint64_t mask, allocator& a) {
    Value v(rapidjson::kArrayType);
    for (const std::string& name : throttle_reason_names(mask)) v.PushBack(json_text(name, a), a);
    return v;
}

Value state_json(const gpu_state& s, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("sm_clock_mhz", s.sm_clock_mhz, a);
    v.AddMember("mem_clock_mhz", s.mem_clock_mhz, a);
    v.AddMember("temperature_c", s.temperature_c, a);
    v.AddMember("power_w", s.power_w, a);
    v.AddMember("power_limit_w", s.power_limit_w, a);
    v.AddMember("throttle_reasons", reasons_json(s.throttle_mask, a), a);
    v.AddMember("throttle_mask", static_cast<uint64_t>(s.throttle_mask), a);
    return v;
}

// The GPU's state before and after the timed loop, and whether power, heat or a hardware
// slowdown held the clocks down at either end.
Value gpu_state_json(const case_outcome& c, allocator& a) {
    if (!c.state_before || !c.state_after) return Value();
    const std::uint64_t slowing =
        slowing_reasons(c.state_before->throttle_mask | c.state_after->throttle_mask);
    Value v(rapidjson::kObjectType);
    v.AddMember("before", state_json(*c.state_before, a), a);
    v.AddMember("after", state_json(*c.state_after, a), a);
    v.AddMember("throttled", slowing != 0, a);
    v.AddMember("throttle_reasons", reasons_json(slowing, a), a);
    return v;
}

// Events minus CUPTI: the events' own cost, ~1.35 us on the H200 (tools/bench). Beyond
// k_event_overhead_max_ms, or below zero, by more than 2% of the kernel's time, the two
// clocks disagree about the case and the response says so.
constexpr double k_event_overhead_max_ms = 0.004;

void add_channels(const case_outcome& c, Value& t, allocator& a) {
    Value channels(rapidjson::kObjectType);
    channels.AddMember("cupti", channel_json(c.cupti_samples_ms, a), a);
    channels.AddMember("events", channel_json(c.event_samples_ms, a), a);
    t.AddMember("channels", channels, a);
    if (c.cupti_samples_ms.empty() || c.event_samples_ms.empty()) {
        t.AddMember("event_overhead_ms", Value(), a);
        t.AddMember("channels_agree", Value(), a);
        return;
    }
    const double cupti = summarize(c.cupti_samples_ms).median;
    const double overhead = summarize(c.event_samples_ms).median - cupti;
    const double slack = 0.02 * cupti;
    t.AddMember("event_overhead_ms", overhead, a);
    t.AddMember("channels_agree", overhead >= -slack && overhead <= k_event_overhead_max_ms + slack,
                a);
}

Value timing_json(const case_outcome& c, allocator& a) {
    Value t(rapidjson::kObjectType);
    t.AddMember("warmup", c.warmup, a);
    t.AddMember("iterations", c.iterations, a);
    t.AddMember("timer", json_text(c.timer, a), a);
    t.AddMember("timer_note", c.timer_note.empty() ? Value() : json_text(c.timer_note, a), a);
    t.AddMember("median_ms", c.stats_ms.median, a);
    t.AddMember("mean_ms", c.stats_ms.mean, a);
    t.AddMember("min_ms", c.stats_ms.min, a);
    t.AddMember("max_ms", c.stats_ms.max, a);
    t.AddMember("stdev_ms", c.stats_ms.stdev, a);
    t.AddMember("stop_rule", rapidjson::StringRef(k_stop_rules.name(c.rule)), a);
    t.AddMember("relative_standard_error",
                c.relative_standard_error ? Value(*c.relative_standard_error) : Value(), a);
    double gpu_time = 0;
    for (double s : c.samples_ms) gpu_time += s;
    t.AddMember("gpu_time_ms", gpu_time, a);
    t.AddMember("stream_held", c.stream_held, a);
    t.AddMember("stream_hold_timed_out", c.stream_hold_timed_out, a);
    t.AddMember("samples_ms", samples_json(c.samples_ms, a), a);
    add_channels(c, t, a);
    t.AddMember("gpu_state", gpu_state_json(c, a), a);
    return t;
}

Value case_json(const case_outcome& c, const harness_report& r, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("name", json_text(c.name, a), a);
    v.AddMember("status", rapidjson::StringRef(k_case_run_statuses.name(c.status)), a);
    v.AddMember("error", c.error.empty() ? Value() : json_text(c.error, a), a);
    v.AddMember("measured", c.measured, a);
    v.AddMember("timing",
                c.status == case_run_status::ok && c.measured ? timing_json(c, a) : Value(), a);
    if (!c.entry.empty()) v.AddMember("entry", json_text(c.entry, a), a);
    v.AddMember("checked_launch_index", static_cast<uint64_t>(c.checked_launch_index), a);
    Value outs(rapidjson::kArrayType);
    for (const auto& o : c.outputs) {
        Value ov(rapidjson::kObjectType);
        ov.AddMember("arg", json_text(o.arg, a), a);
        ov.AddMember("role", json_text(o.role, a), a);
        ov.AddMember("file",
                     json_text(o.file.lexically_relative(r.request_folder).generic_string(), a), a);
        ov.AddMember("dtype", json_text(std::string(dtype_name(o.type)), a), a);
        ov.AddMember("count", static_cast<uint64_t>(o.count), a);
        ov.AddMember("sha256", json_text(o.sha256, a), a);
        ov.AddMember("unwritten", static_cast<uint64_t>(o.unwritten), a);
        outs.PushBack(ov, a);
    }
    v.AddMember("outputs", outs, a);
    if (c.inputs_changed) {  // the case got as far as its checked launch's inputs
        Value changed(rapidjson::kArrayType);
        for (const std::string& name : *c.inputs_changed) changed.PushBack(json_text(name, a), a);
        v.AddMember("inputs_changed", changed, a);
    }
    return v;
}

}  // namespace

std::string write_device_json(const device_fingerprint& device, const device_measurement* m) {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    Value v = device_json(device, a);
    if (m) {
        Value measured(rapidjson::kObjectType);
        measured.AddMember("copy_bandwidth_gbps", m->bandwidth.gbps, a);
        measured.AddMember("bytes", static_cast<uint64_t>(m->bandwidth.bytes), a);
        measured.AddMember("repetitions", m->bandwidth.repetitions, a);
        measured.AddMember("method", json_text(copy_method(m->bandwidth), a), a);
        measured.AddMember("cached", m->bandwidth.cached, a);
        v.AddMember("measured", measured, a);
        if (m->peaks) {
            Value peaks(rapidjson::kObjectType);
            for (const auto& [name, tflops] : {std::pair{"f64", m->peaks->f64},
                                               {"f32", m->peaks->f32},
                                               {"tf32", m->peaks->tf32},
                                               {"f16", m->peaks->f16},
                                               {"bf16", m->peaks->bf16},
                                               {"i8", m->peaks->i8}})
                peaks.AddMember(rapidjson::StringRef(name), tflops, a);
            v.AddMember("peak_tflops", peaks, a);
        }
        v.AddMember("peak_note", json_text(m->peak_note, a), a);
    }
    return to_pretty_json(v);
}

static Value string_array(const std::vector<std::string>& items, allocator& a) {
    Value v(rapidjson::kArrayType);
    for (const auto& s : items) v.PushBack(json_text(s, a), a);
    return v;
}

Value confinement_json(const confinement& c, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("mode", json_text(c.mode, a), a);
    if (c.confined()) {
        v.AddMember("abi", c.abi, a);
        v.AddMember("read", string_array(c.read, a), a);
        v.AddMember("write", string_array(c.write, a), a);
    } else {
        v.AddMember("reason", json_text(c.reason, a), a);
    }
    return v;
}

std::string write_response_json(const harness_report& r) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-harness");
    doc.AddMember("status", rapidjson::StringRef(k_response_statuses.name(r.status)), a);
    doc.AddMember("exit_code", to_int(r.code), a);
    doc.AddMember("exit_name", json_text(exit_code_name(r.code), a), a);
    doc.AddMember("error", r.error.empty() ? Value() : json_text(r.error, a), a);
    doc.AddMember("mode", json_text(r.mode, a), a);
    doc.AddMember("confinement", confinement_json(r.confinement, a), a);
    doc.AddMember("request_file", json_text(r.request_file.filename().string(), a), a);
    doc.AddMember("request_layout", json_text(r.upstream_layout ? "upstream-v0" : "native", a), a);
    doc.AddMember("device", r.device ? device_json(*r.device, a) : Value(), a);
    doc.AddMember("compile", r.compile ? compile_json(r, a) : Value(), a);
    if (r.vendor) {
        Value v(rapidjson::kObjectType);
        v.AddMember("library", json_text(r.vendor->library, a), a);
        v.AddMember("file", json_text(r.vendor->file, a), a);
        v.AddMember("version", json_text(r.vendor->version, a), a);
        v.AddMember("math_mode", json_text(r.vendor->math_mode, a), a);
        v.AddMember("notes", json_text(r.vendor->notes, a), a);
        doc.AddMember("vendor", v, a);
    }
    if (r.timing) {
        Value t(rapidjson::kObjectType);
        t.AddMember("warmup", r.timing->warmup, a);
        t.AddMember("iterations", r.timing->iterations, a);
        t.AddMember("flush_l2", r.timing->flush_l2, a);
        t.AddMember("fresh_inputs", r.timing->fresh_inputs, a);
        t.AddMember("mode", rapidjson::StringRef(k_timing_modes.name(r.timing->mode)), a);
        t.AddMember("timer", rapidjson::StringRef(k_timer_choices.name(r.timing->timer)), a);
        if (r.timing->mode == timing_mode::adaptive) {
            t.AddMember("min_samples", r.timing->min_samples, a);
            t.AddMember("min_time_ms", r.timing->min_time_ms, a);
            t.AddMember("target_rse", r.timing->target_rse, a);
        }
        if (r.timing->checked_launch) t.AddMember("checked_launch", *r.timing->checked_launch, a);
        doc.AddMember("timing_config", t, a);
    } else {
        doc.AddMember("timing_config", Value(), a);
    }
    if (r.mode == "run") {
        Value timer(rapidjson::kObjectType);
        timer.AddMember("name", json_text(r.timer, a), a);
        timer.AddMember("note", r.timer_note.empty() ? Value() : json_text(r.timer_note, a), a);
        timer.AddMember("library",
                        r.timer_library.empty() ? Value() : json_text(r.timer_library, a), a);
        doc.AddMember("timer", timer, a);
        Value monitor(rapidjson::kObjectType);
        monitor.AddMember("source", r.gpu_monitor ? Value("nvml") : Value(), a);
        monitor.AddMember(
            "note", r.gpu_monitor_note.empty() ? Value() : json_text(r.gpu_monitor_note, a), a);
        doc.AddMember("gpu_monitor", monitor, a);
    }
    Value cases(rapidjson::kArrayType);
    for (const auto& c : r.cases) cases.PushBack(case_json(c, r, a), a);
    doc.AddMember("cases", cases, a);
    doc.AddMember("wall_ms", r.wall_ms, a);
    Value phases(rapidjson::kObjectType);
    for (const auto& [name, ms] : r.phases_ms) phases.AddMember(json_text(name, a), Value(ms), a);
    doc.AddMember("phases_ms", phases, a);
    return to_pretty_json(doc);
}

}  // namespace cuopt
