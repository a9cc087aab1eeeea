#include <rapidjson/document.h>

#include <cmath>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "harness/device_measurement.hpp"
#include "harness/gpu_state.hpp"
#include "harness/harness_report.hpp"

namespace cuopt {

namespace {

using rapidjson::Value;

Value device_json(const device_fingerprint& d, json_allocator& a) {
    json_object v(a);
    v.add("index", d.index).add("name", d.name).add("uuid", d.uuid).add("pci_bus_id", d.pci_bus_id);
    v.add("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    v.add("arch", d.arch()).add("sm_count", d.sm_count);
    v.add("l2_bytes", static_cast<int64_t>(d.l2_bytes));
    v.add("total_memory_bytes", static_cast<int64_t>(d.total_memory_bytes));
    v.add("max_threads_per_block", d.max_threads_per_block);
    v.add("max_shared_per_block_optin_bytes", d.max_shared_per_block_optin_bytes);
    v.add("sm_clock_max_khz", d.sm_clock_khz).add("memory_clock_max_khz", d.memory_clock_khz);
    v.add("memory_bus_width_bits", d.memory_bus_width_bits);
    v.add("driver_version", std::to_string(d.driver_version / 1000) + "." +
                                std::to_string((d.driver_version % 1000) / 10));
    v.add("nvrtc_version", d.nvrtc_version);
    v.add_if(d.simulated, "simulated", true);  // only a stand-in says so
    return v.take();
}

// A ptxas figure: null where ptxas did not say (-1).
std::optional<int64_t> known(long long x) {
    return x < 0 ? std::nullopt : std::optional<int64_t>(x);
}

Value resources_json(const harness_report& r, json_allocator& a) {
    const auto& p = r.compile->ptxas;
    const auto& k = r.attributes;
    using figure = std::optional<int64_t>;
    json_object res(a);
    res.add("registers", k ? figure(k->registers) : known(p.registers));
    res.add("static_shared_bytes",
            k ? figure(k->static_shared_bytes) : known(p.static_shared_bytes));
    res.add("local_bytes", k ? figure(k->local_bytes) : std::nullopt);
    res.add("const_bytes", k ? figure(k->const_bytes) : known(p.constant_bytes));
    res.add("max_threads_per_block", k ? figure(k->max_threads_per_block) : std::nullopt);
    res.add("stack_frame_bytes", known(p.stack_frame_bytes));
    res.add("spill_store_bytes", known(p.spill_store_bytes));
    res.add("spill_load_bytes", known(p.spill_load_bytes));
    return res.add("source", k ? "driver" : "ptxas").take();
}

Value compile_json(const harness_report& r, json_allocator& a) {
    const compile_result& c = *r.compile;
    json_object v(a);
    v.add("ok", c.ok).add("entry", r.entry).add("lowered_name", c.lowered_name).add("arch", c.arch);
    v.add("nvrtc_version", c.nvrtc_version).add("options", c.options).add("log", c.log);
    v.add("wall_ms", c.wall_ms).add("cache_hit", c.cache_hit);
    v.add("cubin_sha256", c.ok ? json_text(c.cubin_sha256, a) : Value());
    return v.add("resources", resources_json(r, a)).take();
}

// One channel's samples and their summary; null for a channel that did not run.
Value channel_json(const std::vector<double>& samples, json_allocator& a) {
    if (samples.empty()) return Value();
    const sample_statistics s = summarize(samples);
    json_object v(a);
    v.add("median_ms", s.median).add("min_ms", s.min).add("max_ms", s.max);
    return v.add("samples_ms", samples).take();
}

Value state_json(const gpu_state& s, json_allocator& a) {
    json_object v(a);
    v.add("sm_clock_mhz", s.sm_clock_mhz).add("mem_clock_mhz", s.mem_clock_mhz);
    v.add("temperature_c", s.temperature_c).add("power_w", s.power_w);
    v.add("power_limit_w", s.power_limit_w);
    v.add("throttle_reasons", throttle_reason_names(s.throttle_mask));
    return v.add("throttle_mask", static_cast<uint64_t>(s.throttle_mask)).take();
}

// The GPU's state before and after the timed loop, and whether power, heat or a hardware
// slowdown held the clocks down at either end.
Value gpu_state_json(const case_outcome& c, json_allocator& a) {
    if (!c.state_before || !c.state_after) return Value();
    const std::uint64_t slowing =
        slowing_reasons(c.state_before->throttle_mask | c.state_after->throttle_mask);
    json_object v(a);
    v.add("before", state_json(*c.state_before, a)).add("after", state_json(*c.state_after, a));
    return v.add("throttled", slowing != 0)
        .add("throttle_reasons", throttle_reason_names(slowing))
        .take();
}

// Events minus CUPTI: the events' own cost, ~1.35 us on the H200 (tools/bench). Beyond
// k_event_overhead_max_ms, or below zero, by more than 2% of the kernel's time, the two
// clocks disagree about the case and the response says so.
constexpr double k_event_overhead_max_ms = 0.004;

void add_channels(const case_outcome& c, json_object& t) {
    json_allocator& a = t.allocator();
    json_object channels(a);
    channels.add("cupti", channel_json(c.cupti_samples_ms, a));
    t.add("channels", channels.add("events", channel_json(c.event_samples_ms, a)));
    if (c.cupti_samples_ms.empty() || c.event_samples_ms.empty()) {
        t.add_null("event_overhead_ms").add_null("channels_agree");
        return;
    }
    const double cupti = summarize(c.cupti_samples_ms).median;
    const double overhead = summarize(c.event_samples_ms).median - cupti;
    const double slack = 0.02 * cupti;
    t.add("event_overhead_ms", overhead);
    t.add("channels_agree", overhead >= -slack && overhead <= k_event_overhead_max_ms + slack);
}

Value timing_json(const case_outcome& c, json_allocator& a) {
    json_object t(a);
    t.add("warmup", c.warmup).add("iterations", c.iterations).add("timer", c.timer);
    t.add("timer_note", c.timer_note.empty() ? Value() : json_text(c.timer_note, a));
    t.add("median_ms", c.stats_ms.median).add("mean_ms", c.stats_ms.mean);
    t.add("min_ms", c.stats_ms.min).add("max_ms", c.stats_ms.max).add("stdev_ms", c.stats_ms.stdev);
    t.add("stop_rule", k_stop_rules.name(c.rule));
    t.add("relative_standard_error", c.relative_standard_error);
    double gpu_time = 0;
    for (double s : c.samples_ms) gpu_time += s;
    t.add("gpu_time_ms", gpu_time).add("stream_held", c.stream_held);
    t.add("stream_hold_timed_out", c.stream_hold_timed_out).add("samples_ms", c.samples_ms);
    add_channels(c, t);
    return t.add("gpu_state", gpu_state_json(c, a)).take();
}

// JSON holds no infinity (an f64 difference can overflow): null stands for it.
Value finite_or_null(double x) {
    return std::isfinite(x) ? Value(x) : Value();
}

Value check_json(const output_check_result& c, std::uint64_t count, const harness_report& r,
                 json_allocator& a) {
    const cuopt_check::tally& t = c.tally;
    json_object v(a);
    v.add("expected_file", c.expected_file.lexically_relative(r.request_folder).generic_string());
    v.add("expected_sha256", c.expected_sha256).add("passed", t.mismatches == 0);
    v.add("count", static_cast<uint64_t>(count)).add("compared", static_cast<uint64_t>(t.compared));
    v.add("mismatches", static_cast<uint64_t>(t.mismatches));
    v.add("non_finite", static_cast<uint64_t>(t.non_finite));
    v.add("unwritten", static_cast<uint64_t>(t.unwritten));
    v.add("worst_index", static_cast<uint64_t>(t.worst_index));
    v.add("worst_actual_bits", static_cast<uint64_t>(t.worst_actual_bits));
    v.add("worst_expected_bits", static_cast<uint64_t>(t.worst_expected_bits));
    v.add("max_abs_error", finite_or_null(t.max_abs_error));
    v.add("max_rel_error", finite_or_null(t.max_rel_error));
    v.add("diff_sq", finite_or_null(t.diff_sq)).add("ref_sq", finite_or_null(t.ref_sq));
    v.add("allowed_atol", finite_or_null(c.rule.allowed_atol)).add("rtol", c.rule.rtol);
    v.add("dtype", std::string(dtype_name(static_cast<dtype>(c.rule.kind))));
    v.add("poison", static_cast<uint64_t>(c.rule.poison));
    return v.add("rms_scaled", c.rms_scaled).take();
}

Value outputs_json(const case_outcome& c, const harness_report& r, json_allocator& a) {
    json_array outs(a);
    for (const auto& o : c.outputs) {
        json_object ov(a);
        ov.add("arg", o.arg).add("role", o.role);
        ov.add("file",
               o.file.empty()
                   ? Value()
                   : json_text(o.file.lexically_relative(r.request_folder).generic_string(), a));
        ov.add("dtype", std::string(dtype_name(o.type)))
            .add("count", static_cast<uint64_t>(o.count));
        ov.add("sha256", o.sha256.empty() ? Value() : json_text(o.sha256, a));
        ov.add("unwritten", static_cast<uint64_t>(o.unwritten));
        if (o.check) ov.add("check", check_json(*o.check, o.count, r, a));
        outs.push(ov);
    }
    return outs.take();
}

Value case_json(const case_outcome& c, const harness_report& r, json_allocator& a) {
    json_object v(a);
    v.add("name", c.name).add("status", k_case_run_statuses.name(c.status));
    v.add("error", c.error.empty() ? Value() : json_text(c.error, a)).add("measured", c.measured);
    v.add("timing", c.status == case_run_status::ok && c.measured ? timing_json(c, a) : Value());
    v.add_if(!c.entry.empty(), "entry", c.entry);
    v.add("checked_launch_index", static_cast<uint64_t>(c.checked_launch_index));
    v.add("outputs", outputs_json(c, r, a));
    // The case got as far as its checked launch's inputs.
    if (c.inputs_changed) v.add("inputs_changed", *c.inputs_changed);
    return v.take();
}

}  // namespace

std::string write_device_json(const device_fingerprint& device, const device_measurement* m) {
    rapidjson::Document doc;
    auto& a = doc.GetAllocator();
    Value v = device_json(device, a);
    if (m) {
        json_object d(v, a);
        json_object measured(a);
        measured.add("copy_bandwidth_gbps", m->bandwidth.gbps);
        measured.add("bytes", static_cast<uint64_t>(m->bandwidth.bytes));
        measured.add("repetitions", m->bandwidth.repetitions);
        measured.add("method", copy_method(m->bandwidth)).add("cached", m->bandwidth.cached);
        d.add("measured", measured);
        if (m->peaks) {
            json_object peaks(a);
            peaks.add("f64", m->peaks->f64).add("f32", m->peaks->f32).add("tf32", m->peaks->tf32);
            peaks.add("f16", m->peaks->f16).add("bf16", m->peaks->bf16).add("fp8", m->peaks->fp8);
            peaks.add("i8", m->peaks->i8);
            d.add("peak_tflops", peaks);
        }
        d.add("peak_note", m->peak_note);
    }
    return to_pretty_json(v);
}

Value confinement_json(const confinement& c, json_allocator& a) {
    json_object v(a);
    v.add("mode", c.mode);
    if (c.confined())
        v.add("abi", c.abi).add("read", c.read).add("write", c.write);
    else
        v.add("reason", c.reason);
    return v.take();
}

namespace {

Value vendor_json(const harness_report& r, json_allocator& a) {
    json_object v(a);
    v.add("library", r.vendor->library).add("file", r.vendor->file);
    v.add("version", r.vendor->version).add("math_mode", r.vendor->math_mode);
    return v.add("notes", r.vendor->notes).take();
}

Value timing_config_json(const harness_report& r, json_allocator& a) {
    if (!r.timing) return Value();
    json_object t(a);
    t.add("warmup", r.timing->warmup).add("iterations", r.timing->iterations);
    t.add("flush_l2", r.timing->flush_l2).add("fresh_inputs", r.timing->fresh_inputs);
    t.add("mode", k_timing_modes.name(r.timing->mode));
    t.add("timer", k_timer_choices.name(r.timing->timer));
    if (r.timing->mode == timing_mode::adaptive) {
        t.add("min_samples", r.timing->min_samples).add("min_time_ms", r.timing->min_time_ms);
        t.add("target_rse", r.timing->target_rse);
    }
    return t
        .add_if(r.timing->checked_launch.has_value(), "checked_launch", r.timing->checked_launch)
        .take();
}

// A run's clock and GPU monitor: what timed the cases and what watched the GPU; and how long
// the GPU was busy with the request's kernels.
void add_run_monitors(const harness_report& r, json_object& doc) {
    json_allocator& a = doc.allocator();
    json_object timer(a);
    timer.add("name", r.timer);
    timer.add("note", r.timer_note.empty() ? Value() : json_text(r.timer_note, a));
    timer.add("library", r.timer_library.empty() ? Value() : json_text(r.timer_library, a));
    json_object monitor(a);
    monitor.add("source", r.gpu_monitor ? Value("nvml") : Value());
    monitor.add("note", r.gpu_monitor_note.empty() ? Value() : json_text(r.gpu_monitor_note, a));
    doc.add("timer", timer).add("gpu_monitor", monitor);
    const gpu_busy_report& b = r.gpu_busy;
    json_object busy(a);
    busy.add("ms", b.ms).add("kernels", b.ms ? std::optional<int64_t>(b.kernels) : std::nullopt);
    busy.add("source", b.source).add("note", b.note.empty() ? Value() : json_text(b.note, a));
    doc.add("gpu_busy", busy);
}

}  // namespace

std::string write_response_json(const harness_report& r) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    add_document_header(doc, "cuda-harness");
    json_object top(doc);
    top.add("status", k_response_statuses.name(r.status)).add("exit_code", to_int(r.code));
    top.add("exit_name", exit_code_name(r.code));
    top.add("error", r.error.empty() ? Value() : json_text(r.error, a)).add("mode", r.mode);
    top.add("confinement", confinement_json(r.confinement, a));
    top.add("request_file", r.request_file.filename().string());
    top.add("request_layout", r.upstream_layout ? "upstream-v0" : "native");
    top.add("device", r.device ? device_json(*r.device, a) : Value());
    top.add("compile", r.compile ? compile_json(r, a) : Value());
    if (r.vendor) top.add("vendor", vendor_json(r, a));
    top.add("timing_config", timing_config_json(r, a));
    if (r.mode == "run") add_run_monitors(r, top);
    json_array cases(a);
    for (const auto& c : r.cases) cases.push(case_json(c, r, a));
    json_object phases(a);
    for (const auto& [name, ms] : r.phases_ms) phases.add(name, ms);
    top.add("cases", cases).add("wall_ms", r.wall_ms).add("phases_ms", phases);
    return to_pretty_json(doc);
}

}  // namespace cuopt
