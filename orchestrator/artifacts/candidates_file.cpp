#include "orchestrator/artifacts/candidates_file.hpp"

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

Value launch_json(const launch_expressions& l, json_allocator& a) {
    json_object v(a);
    v.add("grid", l.grid).add("block", l.block).add("dynamic_shared_bytes", l.dynamic_shared_bytes);
    return v.take();
}

Value candidate_json(const candidate& c, json_allocator& a) {
    json_object v(a);
    v.add("proposer", to_string(c.proposer)).add("label", c.label).add("rationale", c.rationale);
    v.add("parent_iteration", c.parent_iteration).add("entry", c.entry).add("source", c.source);
    v.add("defines", c.defines).add("tunables", c.tunables);
    v.add("compile_options", c.compile_options);
    v.add("launch", c.launch ? launch_json(*c.launch, a) : Value());
    json_object per_case(a);
    for (const auto& [name, l] : c.case_launch) per_case.add(name, launch_json(l, a));
    return v.add("case_launch", per_case).add("rejected", c.rejected).take();
}

// The schema has been checked: every member is there, of its kind; what is left are
// integers too large for their field.
candidate candidate_from(const json_field& v, const manifest& m) {
    candidate c;
    c.proposer = v.word("proposer", k_proposer_kinds);
    c.label = v.text("label");
    c.rationale = v.text("rationale");
    c.parent_iteration = v.optional_integer<int>("parent_iteration");
    c.entry = v.text("entry");
    c.source = v.text("source");
    for (const auto& [name, d] : v["defines"].members()) c.defines[name] = d.text();
    for (const auto& [name, t] : v["tunables"].members()) c.tunables[name] = t.integer();
    c.compile_options = v.texts("compile_options");
    if (const auto l = v.find("launch")) c.launch = read_launch_expressions(*l, m.launch);
    for (const auto& [name, l] : v["case_launch"].members())
        c.case_launch[name] = read_launch_expressions(l, m.launch);
    c.rejected = v.text("rejected");
    return c;
}

}  // namespace

std::string candidates_json(int iteration, const iteration_record& record) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json_array batch(a);
    for (const candidate& c : record.batch) batch.push(candidate_json(c, a));
    json_array repairs(a);
    for (const repair_record& r : record.repairs) {
        json_object v(a);
        v.add("repair_of", r.repair_of).add("attempt", r.attempt);
        repairs.push(v.add("candidate", r.fixed ? candidate_json(*r.fixed, a) : Value()));
    }
    json_object(doc)
        .add("schema_version", 1)
        .add("iteration", iteration)
        .add("batch", batch)
        .add("repairs", repairs);
    return to_pretty_json(doc);
}

iteration_record iteration_record_from_json(const Value& doc, const manifest& m,
                                            const std::string& source) {
    try {
        validate_json(doc, embedded_schema("candidates"), source);
        const json_field root(doc, source);
        iteration_record out;
        for (const json_field& c : root["batch"].items()) out.batch.push_back(candidate_from(c, m));
        for (const json_field& r : root["repairs"].items()) {
            repair_record rr;
            rr.repair_of = r.integer<int>("repair_of");
            rr.attempt = r.integer<int>("attempt");
            if (const auto c = r.find("candidate")) rr.fixed = candidate_from(*c, m);
            out.repairs.push_back(std::move(rr));
        }
        return out;
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
            doc = parse_record_json(read_text_file(file), name);
        } catch (const std::exception& ex) {
            throw candidates_file_error(ex.what());
        }
        const iteration_record record = iteration_record_from_json(doc, m, name);
        try {
            out[json_field(doc, name).integer<int>("iteration")] = record;
        } catch (const json_error& ex) {
            throw candidates_file_error(ex.what());
        }
    }
    return out;
}

}  // namespace cuopt
