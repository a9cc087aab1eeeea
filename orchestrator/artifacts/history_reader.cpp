#include "orchestrator/artifacts/history_reader.hpp"

#include <cmath>
#include <limits>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// history.json writes a non-finite error figure as null: read it back as NaN, which writes as
// null again.
double finite_or_nan(const json_field& v, const char* key) {
    return v.optional_number(key).value_or(std::numeric_limits<double>::quiet_NaN());
}

compile_summary compile_from(const json_field& v) {
    compile_summary c;
    c.ok = v.boolean("ok");
    c.cache_hit = v.boolean("cache_hit");
    c.wall_ms = v.number("wall_ms");
    c.registers = v.optional_integer<int>("registers");
    c.static_shared_bytes = v.optional_integer<int>("static_shared_bytes");
    c.local_bytes = v.optional_integer<int>("local_bytes");
    c.spill_store_bytes = v.optional_integer<int>("spill_store_bytes");
    c.log = v.text("log");
    return c;
}

std::optional<response_gpu_reading> reading_from(const json_field& v, const char* key) {
    const std::optional<json_field> r = v.find(key);
    return r ? std::optional<response_gpu_reading>(read_gpu_reading(*r)) : std::nullopt;
}

// The case's timing fields as add_case_timing writes them; each clock's channel holds only its
// median here (the samples are in the attempt's response.json).
void timing_from(const json_field& v, case_evaluation& ce) {
    response_timing_details& d = ce.timing;
    ce.iterations = v.optional_integer<int>("iterations");
    d.timer = v.optional_word("timer", k_response_timer_kinds);
    d.timer_note = v.optional_text("timer_note");
    d.stop_rule = v.optional_word("stop_rule", k_response_stop_rules);
    d.relative_standard_error = v.optional_number("relative_standard_error");
    if (const auto ms = v.optional_number("cupti_median_ms"))
        d.cupti = response_channel{*ms, 0, 0, {}};
    if (const auto ms = v.optional_number("events_median_ms"))
        d.events = response_channel{*ms, 0, 0, {}};
    d.event_overhead_ms = v.optional_number("event_overhead_ms");
    d.channels_agree = v.optional_boolean("channels_agree");
    if (const std::optional<json_field> g = v.find("gpu_state")) {
        response_gpu_state s;
        s.throttled = g->boolean("throttled");
        s.throttle_reasons = g->texts("throttle_reasons");
        s.before = reading_from(*g, "before");
        s.after = reading_from(*g, "after");
        d.gpu_state = s;
    }
}

output_check output_from(const json_field& v, const fs::path& run) {
    output_check oc;
    oc.arg = v.text("arg");
    if (const auto file = v.optional_text("file")) oc.file = run / *file;
    oc.unwritten = v.integer<std::uint64_t>("unwritten");
    if (!v.has("passed")) return oc;
    oc.checked_on_gpu = v.optional_text("checked_on").value_or("cpu") == "gpu";
    validation_result vr;
    vr.passed = v.boolean("passed");
    vr.mismatches = v.optional_integer<std::size_t>("mismatches").value_or(0);
    vr.worst_index = v.optional_integer<std::size_t>("worst_index").value_or(0);
    vr.worst_actual = finite_or_nan(v, "worst_actual");
    vr.worst_expected = finite_or_nan(v, "worst_expected");
    vr.max_abs_error = finite_or_nan(v, "max_abs_error");
    vr.max_rel_error = finite_or_nan(v, "max_rel_error");
    vr.relative_l2_error = finite_or_nan(v, "relative_l2_error");
    oc.validation = vr;
    return oc;
}

case_evaluation case_from(const json_field& v, const fs::path& run) {
    case_evaluation ce;
    ce.name = v.text("name");
    ce.kind = v.text("kind") == "correctness" ? case_kind::correctness : case_kind::performance;
    ce.status = v.word("status", k_case_statuses);
    ce.reason = v.text("reason");
    ce.median_ms = v.optional_number("median_ms");
    ce.mean_ms = v.optional_number("mean_ms");
    ce.min_ms = v.optional_number("min_ms");
    ce.max_ms = v.optional_number("max_ms");
    ce.stdev_ms = v.optional_number("stdev_ms");
    timing_from(v, ce);
    for (const json_field& o : v["outputs"].items()) ce.outputs.push_back(output_from(o, run));
    return ce;
}

// The candidate's fields history.json holds (not its source, launch or case launches).
candidate candidate_from(const json_field& v) {
    candidate c;
    c.proposer = v.word("proposer", k_proposer_kinds);
    c.label = v.text("label");
    c.rationale = v.text("rationale");
    c.parent_iteration = v.optional_integer<int>("parent_iteration");
    const json_field cand = v["candidate"];
    c.entry = cand.text("entry");
    for (const auto& [name, d] : cand["defines"].members()) c.defines[name] = d.text();
    for (const auto& [name, t] : cand["tunables"].members()) c.tunables[name] = t.integer();
    c.compile_options = cand.texts("compile_options");
    return c;
}

recorded_attempt attempt_from(const json_field& v, const fs::path& run) {
    recorded_attempt out;
    attempt_result& r = out.result;
    r.iteration = v.integer<int>("iteration");
    r.attempt = v.integer<int>("attempt");
    r.device = v.optional_integer<int>("device").value_or(0);
    r.cand = candidate_from(v);
    const json_field cand = v["candidate"];
    r.folder = (run / cand.text("source_file")).parent_path();
    out.source_sha256 = cand.text("source_sha256");
    r.repair_of = v.optional_integer<int>("repair_of").value_or(-1);
    r.verdict = v.word("verdict", k_verdicts);
    r.reason = v.text("reason");
    r.became_best = v.boolean("became_best");
    r.geomean_ms = v.optional_number("geomean_ms");
    r.speedup_vs_initial = v.optional_number("speedup_vs_initial");
    r.compile = compile_from(v["compile"]);
    if (const std::optional<json_field> ahead = v.find("compile_ahead"))
        r.compile_ahead = compile_ahead_record{ahead->boolean("ok"), ahead->number("wall_ms"),
                                               ahead->number("waited_ms")};
    const json_field h = v["harness"];
    r.harness_exit_code = h.optional_integer<int>("exit_code").value_or(-1);
    r.harness_signal = h.optional_integer<int>("signal").value_or(0);
    r.harness_wall_ms = h.number("wall_ms");
    r.harness_stderr = h.text("stderr_tail");
    r.confinement = v.optional_text("confinement").value_or("");
    for (const json_field& c : v["cases"].items()) r.cases.push_back(case_from(c, run));
    return out;
}

}  // namespace

std::vector<recorded_attempt> history_from_json(const Value& doc, const fs::path& run) {
    try {
        validate_json(doc, embedded_schema("history"), "history.json");
        std::vector<recorded_attempt> out;
        for (const json_field& a : json_field(doc, "history.json")["attempts"].items())
            out.push_back(attempt_from(a, run));
        return out;
    } catch (const json_error& e) {
        throw history_read_error(e.what());
    }
}

std::vector<recorded_attempt> read_history(const fs::path& run) {
    const fs::path file = run / "history.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw history_read_error(file.string() + ": not found");
    rapidjson::Document doc;
    try {
        doc = parse_record_json(read_text_file(file), file.string());
    } catch (const std::exception& e) {
        throw history_read_error(e.what());
    }
    return history_from_json(doc, run);
}

}  // namespace cuopt
