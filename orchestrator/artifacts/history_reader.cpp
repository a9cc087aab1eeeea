#include "orchestrator/artifacts/history_reader.hpp"

#include <cmath>
#include <limits>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/run_folder.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

std::optional<int> int_of(const Value& v, const char* key) {
    const auto x = integer_of(v, key);
    return x ? std::optional<int>(static_cast<int>(*x)) : std::nullopt;
}

std::vector<std::string> texts_of(const Value& v, const char* key) {
    std::vector<std::string> out;
    for (const Value& e : array_or_empty(v, key).GetArray())
        if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
    return out;
}

// history.json writes a non-finite error figure as null: read it back as NaN, which writes as
// null again.
double finite_or_nan(const Value& v, const char* key) {
    return number_of(v, key).value_or(std::numeric_limits<double>::quiet_NaN());
}

template <class Enum, std::size_t N>
Enum word_of(const Value& v, const char* key, const name_table<Enum, N>& table) {
    const std::string word = text_of(v, key);
    const std::optional<Enum> e = table.parse(word);
    if (!e) throw history_read_error(std::string("field ") + key + ": unknown word '" + word + "'");
    return *e;
}

template <class Enum, std::size_t N>
std::optional<Enum> optional_word(const Value& v, const char* key,
                                  const name_table<Enum, N>& table) {
    if (!member(v, key)) return std::nullopt;
    return word_of(v, key, table);
}

compile_summary compile_from(const Value& v) {
    compile_summary c;
    c.ok = bool_of(v, "ok").value_or(false);
    c.cache_hit = bool_of(v, "cache_hit").value_or(false);
    c.wall_ms = number_of(v, "wall_ms").value_or(0);
    c.registers = int_of(v, "registers");
    c.static_shared_bytes = int_of(v, "static_shared_bytes");
    c.local_bytes = int_of(v, "local_bytes");
    c.spill_store_bytes = int_of(v, "spill_store_bytes");
    c.log = text_of(v, "log");
    return c;
}

std::optional<response_gpu_reading> reading_from(const Value& v, const char* key) {
    const Value* r = member(v, key);
    if (!r || !r->IsObject()) return std::nullopt;
    response_gpu_reading g;
    g.sm_clock_mhz = int_of(*r, "sm_clock_mhz");
    g.mem_clock_mhz = int_of(*r, "mem_clock_mhz");
    g.temperature_c = int_of(*r, "temperature_c");
    g.power_w = number_of(*r, "power_w");
    g.power_limit_w = number_of(*r, "power_limit_w");
    g.throttle_reasons = texts_of(*r, "throttle_reasons");
    return g;
}

// The case's timing fields as add_case_timing writes them; each clock's channel holds only its
// median here (the samples are in the attempt's response.json).
void timing_from(const Value& v, case_evaluation& ce) {
    response_timing_details& d = ce.timing;
    ce.iterations = int_of(v, "iterations");
    d.timer = optional_word(v, "timer", k_response_timer_kinds);
    if (member(v, "timer_note")) d.timer_note = text_of(v, "timer_note");
    d.stop_rule = optional_word(v, "stop_rule", k_response_stop_rules);
    d.relative_standard_error = number_of(v, "relative_standard_error");
    if (const auto ms = number_of(v, "cupti_median_ms")) d.cupti = response_channel{*ms, 0, 0, {}};
    if (const auto ms = number_of(v, "events_median_ms"))
        d.events = response_channel{*ms, 0, 0, {}};
    d.event_overhead_ms = number_of(v, "event_overhead_ms");
    d.channels_agree = bool_of(v, "channels_agree");
    if (const Value* g = member(v, "gpu_state"); g && g->IsObject()) {
        response_gpu_state s;
        s.throttled = bool_of(*g, "throttled").value_or(false);
        s.throttle_reasons = texts_of(*g, "throttle_reasons");
        s.before = reading_from(*g, "before");
        s.after = reading_from(*g, "after");
        d.gpu_state = s;
    }
}

output_check output_from(const Value& v, const fs::path& run) {
    output_check oc;
    oc.arg = text_of(v, "arg");
    oc.file = run / text_of(v, "file");
    oc.unwritten = static_cast<std::uint64_t>(integer_of(v, "unwritten").value_or(0));
    if (!member(v, "passed")) return oc;
    validation_result vr;
    vr.passed = bool_of(v, "passed").value_or(false);
    vr.mismatches = static_cast<std::size_t>(integer_of(v, "mismatches").value_or(0));
    vr.worst_index = static_cast<std::size_t>(integer_of(v, "worst_index").value_or(0));
    vr.worst_actual = finite_or_nan(v, "worst_actual");
    vr.worst_expected = finite_or_nan(v, "worst_expected");
    vr.max_abs_error = finite_or_nan(v, "max_abs_error");
    vr.max_rel_error = finite_or_nan(v, "max_rel_error");
    vr.relative_l2_error = finite_or_nan(v, "relative_l2_error");
    oc.validation = vr;
    return oc;
}

case_evaluation case_from(const Value& v, const fs::path& run) {
    case_evaluation ce;
    ce.name = text_of(v, "name");
    ce.kind = text_of(v, "kind") == "correctness" ? case_kind::correctness : case_kind::performance;
    ce.status = word_of(v, "status", k_case_statuses);
    ce.reason = text_of(v, "reason");
    ce.median_ms = number_of(v, "median_ms");
    ce.mean_ms = number_of(v, "mean_ms");
    ce.min_ms = number_of(v, "min_ms");
    ce.max_ms = number_of(v, "max_ms");
    ce.stdev_ms = number_of(v, "stdev_ms");
    timing_from(v, ce);
    for (const Value& o : array_or_empty(v, "outputs").GetArray())
        ce.outputs.push_back(output_from(o, run));
    return ce;
}

// The candidate's fields history.json holds (not its source, launch or case launches).
candidate candidate_from(const Value& v) {
    candidate c;
    c.proposer = word_of(v, "proposer", k_proposer_kinds);
    c.label = text_of(v, "label");
    c.rationale = text_of(v, "rationale");
    c.parent_iteration = int_of(v, "parent_iteration");
    const Value& cand = object_or_empty(v, "candidate");
    c.entry = text_of(cand, "entry");
    for (const auto& d : object_or_empty(cand, "defines").GetObject())
        c.defines[d.name.GetString()] = d.value.IsString() ? d.value.GetString() : "";
    for (const auto& t : object_or_empty(cand, "tunables").GetObject())
        c.tunables[t.name.GetString()] = t.value.IsInt64() ? t.value.GetInt64() : 0;
    c.compile_options = texts_of(cand, "compile_options");
    return c;
}

recorded_attempt attempt_from(const Value& v, const fs::path& run) {
    recorded_attempt out;
    attempt_result& r = out.result;
    r.iteration = int_of(v, "iteration").value_or(0);
    r.attempt = int_of(v, "attempt").value_or(0);
    r.device = int_of(v, "device").value_or(0);
    r.cand = candidate_from(v);
    const Value& cand = object_or_empty(v, "candidate");
    r.folder = (run / text_of(cand, "source_file")).parent_path();
    out.source_sha256 = text_of(cand, "source_sha256");
    r.repair_of = int_of(v, "repair_of").value_or(-1);
    r.verdict = word_of(v, "verdict", k_verdicts);
    r.reason = text_of(v, "reason");
    r.became_best = bool_of(v, "became_best").value_or(false);
    r.geomean_ms = number_of(v, "geomean_ms");
    r.speedup_vs_initial = number_of(v, "speedup_vs_initial");
    r.compile = compile_from(object_or_empty(v, "compile"));
    if (const Value* ahead = member(v, "compile_ahead"); ahead && ahead->IsObject())
        r.compile_ahead = compile_ahead_record{bool_of(*ahead, "ok").value_or(false),
                                               number_of(*ahead, "wall_ms").value_or(0),
                                               number_of(*ahead, "waited_ms").value_or(0)};
    const Value& h = object_or_empty(v, "harness");
    r.harness_exit_code = int_of(h, "exit_code").value_or(-1);
    r.harness_signal = int_of(h, "signal").value_or(0);
    r.harness_wall_ms = number_of(h, "wall_ms").value_or(0);
    r.harness_stderr = text_of(h, "stderr_tail");
    r.confinement = text_of(v, "confinement");
    for (const Value& c : array_or_empty(v, "cases").GetArray())
        r.cases.push_back(case_from(c, run));
    return out;
}

}  // namespace

std::vector<recorded_attempt> history_from_json(const Value& doc, const fs::path& run) {
    try {
        validate_json(doc, embedded_schema("history"), "history.json");
    } catch (const json_error& e) {
        throw history_read_error(e.what());
    }
    std::vector<recorded_attempt> out;
    const Value& attempts = doc["attempts"];
    for (rapidjson::SizeType i = 0; i < attempts.Size(); ++i) {
        try {
            out.push_back(attempt_from(attempts[i], run));
        } catch (const history_read_error& e) {
            throw history_read_error("history.json: attempts[" + std::to_string(i) +
                                     "]: " + e.what());
        }
    }
    return out;
}

std::vector<recorded_attempt> read_history(const fs::path& run) {
    const fs::path file = run / "history.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw history_read_error(file.string() + ": not found");
    rapidjson::Document doc;
    try {
        doc = parse_json(read_text_file(file), file.string());
    } catch (const std::exception& e) {
        throw history_read_error(e.what());
    }
    return history_from_json(doc, run);
}

}  // namespace cuopt
