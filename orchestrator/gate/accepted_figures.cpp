#include "orchestrator/gate/accepted_figures.hpp"

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_record = 64 << 20;

// RUN/RELATIVE, read inside the run folder without following a link on the way: the run may be
// someone else's (a colleague's, a committed one in CI), and what the gate reads it may quote.
rapidjson::Document read_checked(const fs::path& run, const fs::path& relative,
                                 const char* schema) {
    try {
        rapidjson::Document doc = parse_json(read_text_beneath(run, relative, k_max_record),
                                             relative.filename().string());
        validate_json(doc, embedded_schema(schema), relative.filename().string());
        return doc;
    } catch (const std::exception& e) {
        throw cannot_judge_error("cannot read " + (run / relative).string() + ": " + e.what());
    }
}

// The measured cases' samples of one response; nothing when it is unreadable, reached through a
// link, or not ok.
case_samples samples_of(const fs::path& run, const fs::path& relative) {
    case_samples out;
    if (read_beneath(run, relative, k_max_record).refused != untrusted_read::refusal::none)
        return out;
    const fs::path response = run / relative;
    try {
        const harness_response r = read_response(response);
        if (r.status != response_status::ok) return out;
        for (const response_case& c : r.cases)
            if (c.status == case_run_status::ok && c.timing && !c.timing->samples_ms.empty())
                out[c.name].push_back(c.timing->samples_ms);
    } catch (const std::exception&) {
        // No readable response: no samples, which the caller reports as missing figures.
    }
    return out;
}

void append(case_samples& to, const case_samples& from) {
    for (const auto& [name, runs] : from) to[name].insert(to[name].end(), runs.begin(), runs.end());
}

// The winner's significance rounds, where the evidence stage re-measured it.
case_samples significance_rounds(const fs::path& run, const json_field& summary,
                                 std::string& source) {
    case_samples out;
    const std::optional<json_field> evidence = summary.find("evidence");
    const std::optional<std::string> winner =
        evidence ? evidence->optional_text("winner") : std::nullopt;
    if (!winner) return out;
    const fs::path rounds = fs::path("evidence") / *winner / "significance";
    for (int round = 1; fs::is_directory(run / rounds / ("round-" + std::to_string(round)));
         ++round)
        append(out, samples_of(run, rounds / ("round-" + std::to_string(round)) / "winner" /
                                        "response.json"));
    source = rounds.string();
    return out;
}

// The winner's attempt in the search: one run.
case_samples search_attempt(const fs::path& run, const json_field& summary, std::string& source) {
    const std::optional<json_field> best = summary.find("best");
    if (!best) return {};
    const fs::path folder =
        attempt_folder(fs::path(), best->integer<int>("iteration"), best->integer<int>("attempt"));
    source = folder.string();
    return samples_of(run, folder / "response.json");
}

bool covers(const case_samples& figures, const std::vector<replay_case>& cases) {
    for (const replay_case& c : cases)
        if (c.performance && !figures.count(c.name)) return false;
    return true;
}

// The run's own figures: the richest source that has every performance case.
case_samples run_figures(const fs::path& run, const std::vector<replay_case>& cases,
                         std::string& source) {
    const rapidjson::Document doc = read_checked(run, "summary.json", "summary");
    const json_field summary(doc, "summary.json");
    if (case_samples s = significance_rounds(run, summary, source); covers(s, cases)) return s;
    if (case_samples s = search_attempt(run, summary, source); covers(s, cases)) return s;
    case_samples medians;
    for (const replay_case& c : cases)
        if (c.performance && c.best_median_ms) medians[c.name] = {{*c.best_median_ms}};
    source = "summary.json (medians only)";
    return medians;
}

// The baseline's figures and machine.
case_samples baseline_figures(const json_field& doc) {
    case_samples out;
    for (const json_field& c : doc["cases"].items())
        for (const json_field& run : c["runs"].items())
            out[c.text("name")].push_back(run.numbers());
    return out;
}

}  // namespace

accepted_figures read_accepted_figures(const fs::path& run, const std::vector<replay_case>& cases,
                                       const fs::path& gate_folder) {
    accepted_figures f;
    const bool baseline = fs::exists(run / k_gate_baseline_file);
    const rapidjson::Document file = baseline
                                         ? read_checked(run, k_gate_baseline_file, "gate-baseline")
                                         : read_checked(run, "run.json", "run");
    const json_field doc(file, baseline ? k_gate_baseline_file : "run.json");
    if (baseline) {
        f.source = k_gate_baseline_file;
        f.kernel = run / k_gate_baseline_kernel;
        f.cases = baseline_figures(doc);
    } else {
        f.kernel = run / "best.cu";
        f.cases = run_figures(run, cases, f.source);
    }
    const std::optional<json_field> device = doc.find("device");
    if (!device || !device->is_object())
        throw cannot_judge_error(doc.source() + " does not say which GPU the figures come from");
    f.env.device = read_device_summary(device->value());
    f.env.gpu_state = gpu_state_from_json(doc["gpu_state"]);
    for (const replay_case& c : cases)
        if (c.performance && !f.cases.count(c.name))
            throw cannot_judge_error("no accepted figure for case '" + c.name + "' in " +
                                     (run / f.source).string());
    // The gate compiles, hashes and may quote the accepted kernel: it works on its own copy,
    // read inside the run without following a link.
    try {
        const std::string source = read_text_beneath(run, f.kernel.filename(), k_max_record);
        f.kernel = gate_folder / ("accepted-" + f.kernel.filename().string());
        write_file_atomic(f.kernel, source);
    } catch (const std::runtime_error& e) {
        throw cannot_judge_error(std::string("the accepted kernel: ") + e.what());
    }
    return f;
}

}  // namespace cuopt
