#include "orchestrator/evaluation/replay_oracle.hpp"

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// A file a run folder names (an oracle, a replay request): inside the folder, links resolved,
// or the record is refused. A run folder can come from someone else (a gate job's upload).
fs::path inside_run(const fs::path& run, const std::string& name, const std::string& field) {
    try {
        return resolve_inside(run, name);
    } catch (const std::invalid_argument&) {
        throw json_error("summary.json: " + field + " " + name.substr(0, 200) +
                         ": expected a path inside the run folder");
    }
}

replay_output read_output(const json_field& out, const fs::path& run) {
    replay_output o;
    o.arg = out.text("arg");
    o.type = parse_dtype(out.text("dtype"));
    o.tol = {out.number("atol"), out.number("rtol"), out.optional_number("rms_atol").value_or(0)};
    if (const auto oracle = out.optional_text("oracle"))
        o.oracle = inside_run(run, *oracle, "oracle");
    return o;
}

}  // namespace

std::vector<replay_case> read_replay_cases(const fs::path& run) {
    const rapidjson::Document summary =
        parse_json(read_text_beneath(run, "summary.json", std::size_t{256} << 20), "summary.json");
    validate_json(summary, embedded_schema("summary"), "summary.json");
    std::vector<replay_case> out;
    for (const json_field& sc : json_field(summary, "summary.json")["cases"].items()) {
        replay_case c;
        c.index = out.size();
        c.name = sc.text("name");
        c.performance = sc.text("kind") == "performance";
        c.best_median_ms = sc.optional_number("best_median_ms");
        c.request = run / ("best-case-" + std::to_string(c.index) + ".json");
        if (const auto request = sc.optional_text("replay_request"))
            c.request = inside_run(run, *request, "replay_request");
        for (const json_field& o : sc["outputs"].items()) c.outputs.push_back(read_output(o, run));
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<replay_output_check> check_replay_outputs(const replay_case& c,
                                                      const fs::path& outputs) {
    std::vector<replay_output_check> out;
    for (const replay_output& o : c.outputs) {
        if (!o.oracle) continue;
        replay_output_check& check = out.emplace_back();
        check.arg = o.arg;
        const fs::path file = outputs / (c.name + "." + o.arg + ".bin");
        if (!fs::is_regular_file(file)) {
            check.summary = "the harness wrote no " + file.filename().string();
            continue;
        }
        const auto actual = read_binary_file(file);
        const auto expected = read_binary_file(*o.oracle);
        if (!o.type || actual.size() != expected.size()) {
            check.summary = "size differs from the oracle (" + std::to_string(actual.size()) +
                            " bytes, the oracle " + std::to_string(expected.size()) + ")";
            continue;
        }
        const validation_result v = validate_output(*o.type, actual.data(), expected.data(),
                                                    actual.size() / dtype_size(*o.type), o.tol);
        check.passed = v.passed;
        check.summary = v.summary();
    }
    return out;
}

harness_failure describe_harness_failure(const process_result& p, const fs::path& response,
                                         const std::string& command) {
    if (p.failed_to_start)
        return {true, p.describe() + "; fix: build cuda-harness, or pass --harness PATH"};
    std::string why;
    try {
        why = read_response(response).error;
    } catch (const std::exception&) {
        why = p.stderr_text.substr(0, 400);  // no usable response: its stderr says why
        while (!why.empty() && why.back() == '\n') why.pop_back();
    }
    const std::string code = "(cuda-harness " + p.describe() + ")";
    if (p.exit_code == to_int(exit_code::no_driver) || p.exit_code == to_int(exit_code::no_device))
        return {true, why + " " + code + "; " + command +
                          " runs the kernel, so it needs a machine with an NVIDIA GPU and its "
                          "driver"};
    return {false, why.empty() ? code : why + " " + code};
}

}  // namespace cuopt
