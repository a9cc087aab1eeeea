#include "orchestrator/contract/response_reader.hpp"

#include <rapidjson/document.h>

#include "common/file_io.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

std::string optional_text(const Value& v) {
    return v.IsString() ? v.GetString() : "";
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
    return out;
}

}  // namespace

harness_response read_response(const fs::path& file) {
    const std::string name = file.filename().string();
    const rapidjson::Document doc = parse_json(read_text_file(file), name);
    validate_json(doc, embedded_schema("response"), name);
    harness_response out;
    out.status = k_response_statuses.parse(doc["status"].GetString())
                     .value_or(response_status::internal_error);
    out.error = optional_text(doc["error"]);
    out.exit_code = doc["exit_code"].GetInt();
    if (doc["compile"].IsObject()) out.compile = read_compile_block(doc["compile"]);
    if (doc.HasMember("vendor")) {
        const Value& v = doc["vendor"];
        out.vendor = vendor_summary{v["library"].GetString(), v["file"].GetString(),
                                    v["version"].GetString(), v["math_mode"].GetString(),
                                    v["notes"].GetString()};
    }
    for (const Value& jc : doc["cases"].GetArray())
        out.cases.push_back(read_case(jc, file.parent_path()));
    return out;
}

}  // namespace cuopt
