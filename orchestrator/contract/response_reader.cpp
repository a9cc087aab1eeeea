#include "orchestrator/contract/response_reader.hpp"

#include <rapidjson/document.h>

#include <cmath>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// Issue 12's fields are read through json_field: absent and null read as nothing, a value of
// another kind throws json_error naming the file and the field
// ("response.json: field cases[0].timing.channels_agree: expected true or false, found ...").
response_channel read_channel(const json_field& f) {
    response_channel out;
    out.median_ms = f.number("median_ms");
    out.min_ms = f.number("min_ms");
    out.max_ms = f.number("max_ms");
    out.samples_ms = f.optional_numbers("samples_ms");
    return out;
}

response_gpu_state read_gpu_state(const json_field& f) {
    response_gpu_state out;
    if (const auto before = f.find("before")) out.before = read_gpu_reading(*before);
    if (const auto after = f.find("after")) out.after = read_gpu_reading(*after);
    out.throttled = f.optional_boolean("throttled").value_or(false);
    out.throttle_reasons = f.optional_texts("throttle_reasons");
    return out;
}

// The fields issue 12 added beside the old ones in a case's timing block.
response_timing_details read_timing_details(const json_field& f) {
    response_timing_details out;
    out.timer = f.optional_word("timer", k_response_timer_kinds);
    out.timer_note = f.optional_text("timer_note");
    if (const auto channels = f.find("channels")) {
        if (const auto c = channels->find("cupti")) out.cupti = read_channel(*c);
        if (const auto e = channels->find("events")) out.events = read_channel(*e);
    }
    out.event_overhead_ms = f.optional_number("event_overhead_ms");
    out.channels_agree = f.optional_boolean("channels_agree");
    out.stop_rule = f.optional_word("stop_rule", k_response_stop_rules);
    out.relative_standard_error = f.optional_number("relative_standard_error");
    out.gpu_time_ms = f.optional_number("gpu_time_ms");
    if (const auto g = f.find("gpu_state")) out.gpu_state = read_gpu_state(*g);
    return out;
}

// Issue 12's fields and gpu_busy, read before the schema check so that a value of the wrong
// kind is named exactly (under the schema's oneOf the check would name only the block around
// it). Every part is optional: a response from an older harness has none of them.
struct timing_blocks {
    std::optional<response_timer> timer;
    std::optional<response_gpu_monitor> gpu_monitor;
    std::optional<response_gpu_busy> gpu_busy;
    std::vector<std::optional<response_timing_details>> cases;  // by index
};

timing_blocks read_timing_blocks(const Value& doc, const std::string& source) {
    timing_blocks out;
    if (!doc.IsObject()) return out;
    const json_field top(doc, source);
    if (const auto t = top.find("timer"))
        out.timer = response_timer{t->word("name", k_response_timer_kinds),
                                   t->optional_text("note"), t->optional_text("library")};
    if (const auto g = top.find("gpu_monitor"))
        out.gpu_monitor =
            response_gpu_monitor{g->optional_text("source"), g->optional_text("note")};
    if (const auto b = top.find("gpu_busy"))
        out.gpu_busy = response_gpu_busy{
            b->optional_number("ms"), b->optional_integer<std::int64_t>("kernels"),
            b->word("source", k_gpu_busy_sources), b->optional_text("note")};
    const auto cases = top.find("cases");
    if (!cases || !cases->is_array()) return out;
    for (const json_field& c : cases->items()) {
        const auto timing = c.is_object() ? c.find("timing") : std::nullopt;
        out.cases.push_back(timing && timing->is_object()
                                ? std::optional(read_timing_details(*timing))
                                : std::nullopt);
    }
    return out;
}

// What follows reads a document the schema has passed: the kinds are known, and an optional
// member is absent or null.
compile_summary read_compile_block(const json_field& f) {
    const json_field res = f["resources"];
    return {f.boolean("ok"),
            f.boolean("cache_hit"),
            f.number("wall_ms"),
            f.text("log"),
            res.optional_integer<int>("registers"),
            res.optional_integer<int>("static_shared_bytes"),
            res.optional_integer<int>("local_bytes"),
            res.optional_integer<int>("spill_store_bytes"),
            f.text("lowered_name"),
            f.text("arch")};
}

response_timing read_timing(const json_field& t) {
    return {t.integer<int>("warmup"), t.integer<int>("iterations"), t.number("median_ms"),
            t.number("mean_ms"),      t.number("min_ms"),           t.number("max_ms"),
            t.number("stdev_ms"),     t.numbers("samples_ms"),      {}};
}

response_check read_check(const json_field& c) {
    response_check r;
    r.expected_sha256 = c.text("expected_sha256");
    r.count = c.integer<std::uint64_t>("count");
    cuopt_check::tally& t = r.tally;
    t.compared = c.integer<std::uint64_t>("compared");
    t.mismatches = c.integer<std::uint64_t>("mismatches");
    t.non_finite = c.integer<std::uint64_t>("non_finite");
    t.unwritten = c.integer<std::uint64_t>("unwritten");
    t.worst_index = c.integer<std::uint64_t>("worst_index");
    t.worst_actual_bits = c.integer<std::uint64_t>("worst_actual_bits");
    t.worst_expected_bits = c.integer<std::uint64_t>("worst_expected_bits");
    const auto number = [&](const char* key) { return c.optional_number(key).value_or(INFINITY); };
    t.max_abs_error = number("max_abs_error");
    t.max_rel_error = number("max_rel_error");
    t.diff_sq = number("diff_sq");
    t.ref_sq = number("ref_sq");
    r.allowed_atol = number("allowed_atol");
    r.rtol = c.number("rtol");
    r.rms_scaled = c.boolean("rms_scaled");
    r.type = parse_dtype(c.text("dtype")).value_or(dtype::u8);
    r.poison = c.integer<std::uint64_t>("poison");
    if (t.compared != r.count)
        c.fail("'compared' equal to 'count' (every element checked)",
               std::to_string(t.compared) + " of " + std::to_string(r.count));
    if (t.mismatches > r.count || t.non_finite + t.unwritten > t.mismatches ||
        (t.mismatches && t.worst_index >= r.count))
        c.fail("mismatches <= count, non_finite + unwritten <= mismatches and worst_index < count",
               std::to_string(t.mismatches) + " mismatches (" + std::to_string(t.non_finite) +
                   " NaN/Inf, " + std::to_string(t.unwritten) + " unwritten), worst_index " +
                   std::to_string(t.worst_index) + " of " + std::to_string(r.count));
    if (c.boolean("passed") != (t.mismatches == 0))
        c.fail("'passed' true exactly when 'mismatches' is 0",
               std::to_string(t.mismatches) + " mismatches with passed " +
                   (t.mismatches ? "true" : "false"));
    return r;
}

response_output read_output(const json_field& o, const fs::path& folder) {
    response_output r;
    r.arg = o.text("arg");
    r.is_input_dump = o.text("role") == "input_dump";
    if (const auto file = o.optional_text("file")) r.file = folder / *file;
    r.type = parse_dtype(o.text("dtype")).value_or(dtype::u8);
    r.count = o.integer<std::uint64_t>("count");
    r.sha256 = o.optional_text("sha256").value_or("");
    r.unwritten = o.integer<std::uint64_t>("unwritten");
    if (const auto check = o.find("check")) r.check = read_check(*check);
    if (r.file.empty() && !(r.check && r.check->tally.mismatches == 0))
        o.fail("a 'file' for an output not checked on the GPU, or one that failed its check",
               "file null");
    return r;
}

response_case read_case(const json_field& jc, const fs::path& folder) {
    response_case out;
    out.name = jc.text("name");
    out.status = jc.word("status", k_case_run_statuses);
    out.error = jc.optional_text("error").value_or("");
    out.measured = jc.boolean("measured");
    out.entry = jc.optional_text("entry").value_or("");
    if (const auto timing = jc.find("timing")) out.timing = read_timing(*timing);
    for (const json_field& o : jc["outputs"].items()) out.outputs.push_back(read_output(o, folder));
    out.inputs_changed = jc.optional_texts("inputs_changed");  // absent from an older harness's
    return out;
}

// The confinement block (landlock: abi, read, write; none: reason).
confinement read_confinement(const json_field& v) {
    confinement c;
    c.mode = v.text("mode");
    if (!c.confined()) {
        c.reason = v.text("reason");
        return c;
    }
    c.abi = v.integer<int>("abi");
    c.read = v.texts("read");
    c.write = v.texts("write");
    return c;
}

}  // namespace

response_gpu_reading read_gpu_reading(const json_field& f) {
    return {f.optional_integer<int>("sm_clock_mhz"),
            f.optional_integer<int>("mem_clock_mhz"),
            f.optional_integer<int>("temperature_c"),
            f.optional_number("power_w"),
            f.optional_number("power_limit_w"),
            f.optional_texts("throttle_reasons"),
            f.optional_integer<std::uint64_t>("throttle_mask")};
}

confinement unreported_confinement() {
    confinement c;
    c.reason = "the harness did not report its confinement";
    return c;
}

device_summary read_device_summary(const Value& device) {
    auto positive = [&device](const char* key) -> std::optional<std::int64_t> {
        const std::optional<long long> v = integer_of(device, key);
        return v && *v > 0 ? v : std::nullopt;
    };
    auto text = [&device](const char* key) { return string_of(device, key).value_or(""); };
    return {text("name"),
            text("uuid"),
            text("compute_capability"),
            text("driver_version"),
            text("nvrtc_version"),
            positive("sm_clock_max_khz"),
            positive("memory_clock_max_khz"),
            bool_of(device, "simulated").value_or(false)};
}

harness_response read_response(const fs::path& file) {
    const std::string name = file.filename().string();
    const rapidjson::Document doc = parse_json(read_text_file(file), name);
    timing_blocks blocks = read_timing_blocks(doc, name);
    validate_json(doc, embedded_schema("response"), name);
    const json_field top(doc, name);
    harness_response out;
    out.status = top.word("status", k_response_statuses);
    out.error = top.optional_text("error").value_or("");
    out.exit_code = top.integer<int>("exit_code");
    if (const auto compile = top.find("compile")) out.compile = read_compile_block(*compile);
    if (const auto device = top.find("device")) out.device = read_device_summary(device->value());
    if (const auto v = top.find("vendor"))
        out.vendor = vendor_summary{v->text("library"), v->text("file"), v->text("version"),
                                    v->text("math_mode"), v->text("notes")};
    for (const json_field& jc : top["cases"].items())
        out.cases.push_back(read_case(jc, file.parent_path()));
    for (std::size_t i = 0; i < out.cases.size() && i < blocks.cases.size(); ++i)
        if (out.cases[i].timing && blocks.cases[i]) out.cases[i].timing->details = *blocks.cases[i];
    out.timer = std::move(blocks.timer);
    out.gpu_monitor = std::move(blocks.gpu_monitor);
    out.gpu_busy = std::move(blocks.gpu_busy);
    if (const auto c = top.find("confinement")) out.confinement = read_confinement(*c);
    return out;
}

}  // namespace cuopt
