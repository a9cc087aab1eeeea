#include "orchestrator/artifacts/candidates_file.hpp"

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/artifacts/run_folder.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

namespace {

Value texts(const std::array<std::string, 3>& v, allocator& a) {
    Value out(rapidjson::kArrayType);
    for (const auto& x : v) out.PushBack(json_text(x, a), a);
    return out;
}

Value launch_json(const launch_expressions& l, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("grid", texts(l.grid, a), a);
    v.AddMember("block", texts(l.block, a), a);
    v.AddMember("dynamic_shared_bytes", json_text(l.dynamic_shared_bytes, a), a);
    return v;
}

Value candidate_json(const candidate& c, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("proposer", rapidjson::StringRef(to_string(c.proposer)), a);
    v.AddMember("label", json_text(c.label, a), a);
    v.AddMember("rationale", json_text(c.rationale, a), a);
    v.AddMember("parent_iteration", c.parent_iteration ? Value(*c.parent_iteration) : Value(), a);
    v.AddMember("entry", json_text(c.entry, a), a);
    v.AddMember("source", json_text(c.source, a), a);
    Value defines(rapidjson::kObjectType);
    for (const auto& [k, x] : c.defines) defines.AddMember(json_text(k, a), json_text(x, a), a);
    v.AddMember("defines", defines, a);
    Value tunables(rapidjson::kObjectType);
    for (const auto& [k, x] : c.tunables)
        tunables.AddMember(json_text(k, a), Value(static_cast<int64_t>(x)), a);
    v.AddMember("tunables", tunables, a);
    Value options(rapidjson::kArrayType);
    for (const std::string& o : c.compile_options) options.PushBack(json_text(o, a), a);
    v.AddMember("compile_options", options, a);
    v.AddMember("launch", c.launch ? launch_json(*c.launch, a) : Value(), a);
    Value per_case(rapidjson::kObjectType);
    for (const auto& [name, l] : c.case_launch)
        per_case.AddMember(json_text(name, a), launch_json(l, a), a);
    v.AddMember("case_launch", per_case, a);
    v.AddMember("rejected", json_text(c.rejected, a), a);
    return v;
}

std::string string_of(const Value& v, const char* key) {
    const Value& s = v[key];
    return std::string(s.GetString(), s.GetStringLength());
}

// A JSON integer the schema let through that does not fit (a number past 2^63 is one to it).
int int_of(const Value& v, const char* key) {
    if (!v[key].IsInt()) throw candidates_file_error(std::string("field ") + key + ": too large");
    return v[key].GetInt();
}

// The schema has been checked: every member is there, of its kind.
candidate candidate_from(const Value& v, const manifest& m) {
    candidate c;
    const auto kind = k_proposer_kinds.parse(v["proposer"].GetString());
    if (!kind) throw candidates_file_error(std::string("field proposer: unknown proposer"));
    c.proposer = *kind;
    c.label = string_of(v, "label");
    c.rationale = string_of(v, "rationale");
    if (!v["parent_iteration"].IsNull()) c.parent_iteration = int_of(v, "parent_iteration");
    c.entry = string_of(v, "entry");
    c.source = string_of(v, "source");
    for (const auto& d : v["defines"].GetObject())
        c.defines[d.name.GetString()] = d.value.GetString();
    for (const auto& t : v["tunables"].GetObject()) {
        if (!t.value.IsInt64()) throw candidates_file_error("field tunables: too large");
        c.tunables[t.name.GetString()] = t.value.GetInt64();
    }
    for (const Value& o : v["compile_options"].GetArray())
        c.compile_options.emplace_back(o.GetString());
    if (v["launch"].IsObject()) c.launch = read_launch_expressions(v["launch"], m.launch);
    for (const auto& l : v["case_launch"].GetObject())
        c.case_launch[l.name.GetString()] = read_launch_expressions(l.value, m.launch);
    c.rejected = string_of(v, "rejected");
    return c;
}

}  // namespace

std::string candidates_json(int iteration, const iteration_record& record) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema_version", 1, a);
    doc.AddMember("iteration", iteration, a);
    Value batch(rapidjson::kArrayType);
    for (const candidate& c : record.batch) batch.PushBack(candidate_json(c, a), a);
    doc.AddMember("batch", batch, a);
    Value repairs(rapidjson::kArrayType);
    for (const repair_record& r : record.repairs) {
        Value v(rapidjson::kObjectType);
        v.AddMember("repair_of", r.repair_of, a);
        v.AddMember("attempt", r.attempt, a);
        v.AddMember("candidate", r.fixed ? candidate_json(*r.fixed, a) : Value(), a);
        repairs.PushBack(v, a);
    }
    doc.AddMember("repairs", repairs, a);
    return to_pretty_json(doc);
}

iteration_record iteration_record_from_json(const Value& doc, const manifest& m,
                                            const std::string& source) {
    try {
        validate_json(doc, embedded_schema("candidates"), source);
        iteration_record out;
        for (const Value& c : doc["batch"].GetArray()) out.batch.push_back(candidate_from(c, m));
        for (const Value& r : doc["repairs"].GetArray()) {
            repair_record rr;
            rr.repair_of = int_of(r, "repair_of");
            rr.attempt = int_of(r, "attempt");
            if (r["candidate"].IsObject()) rr.fixed = candidate_from(r["candidate"], m);
            out.repairs.push_back(std::move(rr));
        }
        return out;
    } catch (const candidates_file_error& e) {
        throw candidates_file_error(source + ": " + e.what());
    } catch (const std::exception& e) {  // json_error, expression_error
        throw candidates_file_error(e.what());
    }
}

fs::path candidates_file(const fs::path& run, int iteration) {
    return attempt_folder(run, iteration, 0).parent_path() / "candidates.json";
}

void write_candidates_file(const fs::path& run, int iteration, const iteration_record& record) {
    const fs::path file = candidates_file(run, iteration);
    fs::create_directories(file.parent_path());
    write_file_durable(file, candidates_json(iteration, record));
}

std::map<int, iteration_record> read_candidates_files(const fs::path& run, const manifest& m) {
    std::map<int, iteration_record> out;
    std::error_code ec;
    if (!fs::is_directory(run / "candidates", ec)) return out;
    for (const auto& e : fs::directory_iterator(run / "candidates")) {
        const fs::path file = e.path() / "candidates.json";
        if (!fs::is_regular_file(file, ec)) continue;
        const std::string name = file.lexically_relative(run).generic_string();
        rapidjson::Document doc;
        try {
            doc = parse_json(read_text_file(file), name);
        } catch (const std::exception& ex) {
            throw candidates_file_error(ex.what());
        }
        const iteration_record record = iteration_record_from_json(doc, m, name);
        if (!doc["iteration"].IsInt()) throw candidates_file_error(name + ": field iteration");
        out[doc["iteration"].GetInt()] = record;
    }
    return out;
}

}  // namespace cuopt
