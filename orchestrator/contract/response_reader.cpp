#include "orchestrator/contract/response_reader.hpp"

#include <rapidjson/document.h>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

std::string optional_text(const Value& v) {
    return v.IsString() ? v.GetString() : "";
}

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

// Issue 12's fields, read before the schema check so that a value of the wrong kind is named
// exactly (under the schema's oneOf the check would name only the block around it). Every part
// is optional: a response from an older harness has none of them.
struct timing_blocks {
    std::optional<response_timer> timer;
    std::optional<response_gpu_monitor> gpu_monitor;
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
    const auto cases = doc.FindMember("cases");
    if (cases == doc.MemberEnd() || !cases->value.IsArray()) return out;
    for (rapidjson::SizeType i = 0; i < cases->value.Size(); ++i) {
        const Value& c = cases->value[i];
        const auto timing = c.IsObject() ? c.FindMember("timing") : c.MemberEnd();
        if (!c.IsObject() || timing == c.MemberEnd() || !timing->value.IsObject()) {
            out.cases.emplace_back();
            continue;
        }
        out.cases.emplace_back(read_timing_details(
            json_field(timing->value, source, "cases[" + std::to_string(i) + "].timing")));
    }
    return out;
}

compile_summary read_compile_block(const Value& comp) {
    compile_summary out;
    out.ok = comp["ok"].GetBool();
    out.cache_hit = comp["cache_hit"].GetBool();
    out.wall_ms = comp["wall_ms"].GetDouble();
    out.log = comp["log"].GetString();
    const Value& res = comp["resources"];
    auto count = [&res](const char* k) {
        return res[k].IsInt() ? std::optional<int>(res[k].GetInt()) : std::nullopt;
    };
    out.registers = count("registers");
    out.static_shared_bytes = count("static_shared_bytes");
    out.local_bytes = count("local_bytes");
    out.spill_store_bytes = count("spill_store_bytes");
    return out;
}

response_timing read_timing(const Value& t) {
    response_timing out;
    out.warmup = t["warmup"].GetInt();
    out.iterations = t["iterations"].GetInt();
    out.median_ms = t["median_ms"].GetDouble();
    out.mean_ms = t["mean_ms"].GetDouble();
    out.min_ms = t["min_ms"].GetDouble();
    out.max_ms = t["max_ms"].GetDouble();
    out.stdev_ms = t["stdev_ms"].GetDouble();
    for (const Value& s : t["samples_ms"].GetArray()) out.samples_ms.push_back(s.GetDouble());
    return out;
}

response_case read_case(const Value& jc, const fs::path& folder) {
    response_case out;
    out.name = jc["name"].GetString();
    out.status =
        k_case_run_statuses.parse(jc["status"].GetString()).value_or(case_run_status::skipped);
    out.error = optional_text(jc["error"]);
    out.measured = jc["measured"].GetBool();
    if (jc.HasMember("entry")) out.entry = jc["entry"].GetString();
    if (jc["timing"].IsObject()) out.timing = read_timing(jc["timing"]);
    for (const Value& o : jc["outputs"].GetArray()) {
        response_output r;
        r.arg = o["arg"].GetString();
        r.is_input_dump = std::string(o["role"].GetString()) == "input_dump";
        r.file = folder / o["file"].GetString();
        r.type = parse_dtype(o["dtype"].GetString()).value_or(dtype::u8);
        r.count = o["count"].GetUint64();
        r.sha256 = o["sha256"].GetString();
        r.unwritten = o["unwritten"].GetUint64();
        out.outputs.push_back(std::move(r));
    }
    if (jc.HasMember("inputs_changed"))  // absent from an older harness's response
        for (const Value& name : jc["inputs_changed"].GetArray())
            out.inputs_changed.emplace_back(name.GetString());
    return out;
}

// The confinement block, already checked against the schema (landlock: abi, read, write;
// none: reason).
confinement read_confinement(const Value& v) {
    confinement c;
    c.mode = v["mode"].GetString();
    if (!c.confined()) {
        c.reason = v["reason"].GetString();
        return c;
    }
    c.abi = v["abi"].GetInt();
    for (const Value& p : v["read"].GetArray()) c.read.emplace_back(p.GetString());
    for (const Value& p : v["write"].GetArray()) c.write.emplace_back(p.GetString());
    return c;
}

}  // namespace

response_gpu_reading read_gpu_reading(const json_field& f) {
    response_gpu_reading out;
    out.sm_clock_mhz = f.optional_integer<int>("sm_clock_mhz");
    out.mem_clock_mhz = f.optional_integer<int>("mem_clock_mhz");
    out.temperature_c = f.optional_integer<int>("temperature_c");
    out.power_w = f.optional_number("power_w");
    out.power_limit_w = f.optional_number("power_limit_w");
    out.throttle_reasons = f.optional_texts("throttle_reasons");
    out.throttle_mask = f.optional_integer<std::uint64_t>("throttle_mask");
    return out;
}

confinement unreported_confinement() {
    confinement c;
    c.reason = "the harness did not report its confinement";
    return c;
}

device_summary read_device_summary(const Value& device) {
    device_summary out;
    if (!device.IsObject()) return out;
    auto text = [&device](const char* key) {
        const auto it = device.FindMember(key);
        return it != device.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
    };
    auto number = [&device](const char* key) -> std::optional<std::int64_t> {
        const auto it = device.FindMember(key);
        if (it == device.MemberEnd() || !it->value.IsInt64() || it->value.GetInt64() <= 0)
            return std::nullopt;
        return it->value.GetInt64();
    };
    out.name = text("name");
    out.uuid = text("uuid");
    out.compute_capability = text("compute_capability");
    out.driver_version = text("driver_version");
    out.nvrtc_version = text("nvrtc_version");
    out.sm_clock_max_khz = number("sm_clock_max_khz");
    out.memory_clock_max_khz = number("memory_clock_max_khz");
    const auto simulated = device.FindMember("simulated");
    out.simulated =
        simulated != device.MemberEnd() && simulated->value.IsBool() && simulated->value.GetBool();
    return out;
}

harness_response read_response(const fs::path& file) {
    const std::string name = file.filename().string();
    const rapidjson::Document doc = parse_json(read_text_file(file), name);
    timing_blocks blocks = read_timing_blocks(doc, name);
    validate_json(doc, embedded_schema("response"), name);
    harness_response out;
    out.status = k_response_statuses.parse(doc["status"].GetString())
                     .value_or(response_status::internal_error);
    out.error = optional_text(doc["error"]);
    out.exit_code = doc["exit_code"].GetInt();
    if (doc["compile"].IsObject()) out.compile = read_compile_block(doc["compile"]);
    if (doc["device"].IsObject()) out.device = read_device_summary(doc["device"]);
    if (doc.HasMember("vendor")) {
        const Value& v = doc["vendor"];
        out.vendor = vendor_summary{v["library"].GetString(), v["file"].GetString(),
                                    v["version"].GetString(), v["math_mode"].GetString(),
                                    v["notes"].GetString()};
    }
    for (const Value& jc : doc["cases"].GetArray())
        out.cases.push_back(read_case(jc, file.parent_path()));
    for (std::size_t i = 0; i < out.cases.size(); ++i)
        if (out.cases[i].timing && blocks.cases[i]) out.cases[i].timing->details = *blocks.cases[i];
    out.timer = std::move(blocks.timer);
    out.gpu_monitor = std::move(blocks.gpu_monitor);
    if (doc.HasMember("confinement")) out.confinement = read_confinement(doc["confinement"]);
    return out;
}

}  // namespace cuopt
