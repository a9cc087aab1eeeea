#include "orchestrator/artifacts/evidence_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/json_document.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/artifacts/timing_conditions.hpp"

namespace cuopt {

using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

namespace {

std::string id_of(const search_outcome& o, std::optional<std::size_t> i) {
    if (!i) return "";
    return o.history[*i].id();
}

// An attempt as the console names it, as the summary line does: "tiled.cu (iteration 1,
// attempt 0)" (its JSON id "1.0" would read as a number).
std::string console_name_of(const search_outcome& o, std::size_t i) {
    const attempt_result& r = o.history[i];
    return r.cand.label + " (iteration " + std::to_string(r.iteration) + ", attempt " +
           std::to_string(r.attempt) + ")";
}

Value id_json(const search_outcome& o, std::optional<std::size_t> i, allocator& a) {
    return i ? json_text(id_of(o, i), a) : Value();
}

Value estimate_json(const ratio_estimate& e, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("ratio", e.ratio, a);
    v.AddMember("low", e.low, a);
    v.AddMember("high", e.high, a);
    v.AddMember("verdict", rapidjson::StringRef(to_string(e.verdict)), a);
    return v;
}

Value check_json(const candidate_check& c, const search_outcome& o, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("attempt", id_json(o, c.attempt, a), a);
    v.AddMember("label", json_text(o.history[c.attempt].cand.label, a), a);
    v.AddMember("outcome", rapidjson::StringRef(c.passed ? "passed" : "disqualified"), a);
    v.AddMember("gate", c.gate.empty() ? Value() : json_text(c.gate, a), a);
    v.AddMember("verdict", json_text(c.verdict, a), a);
    v.AddMember("reason", json_text(c.reason, a), a);
    Value warnings(rapidjson::kArrayType);
    for (const std::string& w : c.warnings) warnings.PushBack(json_text(w, a), a);
    v.AddMember("warnings", warnings, a);
    Value gates(rapidjson::kArrayType);
    for (const gate_result& g : c.gates) {
        Value gv(rapidjson::kObjectType);
        gv.AddMember("gate", json_text(g.gate, a), a);
        gv.AddMember("ran", g.ran, a);
        gv.AddMember("passed", g.passed, a);
        gv.AddMember("detail", json_text(g.detail, a), a);
        gates.PushBack(gv, a);
    }
    v.AddMember("gates", gates, a);
    Value san(rapidjson::kArrayType);
    for (const sanitizer_result& s : c.sanitizer) {
        Value sv(rapidjson::kObjectType);
        sv.AddMember("tool", json_text(s.tool, a), a);
        sv.AddMember("completed", s.completed, a);
        sv.AddMember("errors", s.errors, a);
        sv.AddMember("warnings", s.warnings, a);
        Value lines(rapidjson::kArrayType);
        for (const std::string& l : s.first_lines) lines.PushBack(json_text(l, a), a);
        sv.AddMember("first_lines", lines, a);
        san.PushBack(sv, a);
    }
    v.AddMember("sanitizer", san, a);
    v.AddMember(
        "determinism",
        c.determinism ? Value(rapidjson::StringRef(to_string(c.determinism->kind))) : Value(), a);
    v.AddMember("repetition_ratio", json_number(c.repetition_ratio), a);
    return v;
}

Value significance_json(const significance_report& s, allocator& a) {
    Value v(rapidjson::kObjectType);
    v.AddMember("runs", s.runs, a);
    Value warmups(rapidjson::kArrayType);
    for (int w : s.warmups) warmups.PushBack(w, a);
    v.AddMember("warmups", warmups, a);
    v.AddMember("reliable", s.reliable, a);
    v.AddMember("throttled_cases", s.throttled_cases, a);
    v.AddMember("device", s.device, a);
    v.AddMember("margin", s.margin, a);
    v.AddMember("aa_class", rapidjson::StringRef(to_string(s.aa_overall)), a);
    v.AddMember("speedup", estimate_json(s.speedup.geomean, a), a);
    v.AddMember("aa", estimate_json(s.aa.geomean, a), a);
    Value cases(rapidjson::kArrayType);
    for (std::size_t i = 0; i < s.cases.size(); ++i) {
        Value c(rapidjson::kObjectType);
        c.AddMember("name", json_text(s.cases[i], a), a);
        c.AddMember("initial_median_ms", s.initial_median_ms.at(s.cases[i]), a);
        c.AddMember("winner_median_ms", s.winner_median_ms.at(s.cases[i]), a);
        c.AddMember("speedup", estimate_json(s.speedup.cases[i], a), a);
        c.AddMember("aa", estimate_json(s.aa.cases[i], a), a);
        c.AddMember("process_spread", json_number(s.spreads[i]), a);
        c.AddMember("margin", s.margins[i], a);
        c.AddMember("aa_class", rapidjson::StringRef(to_string(s.aa_classes[i])), a);
        cases.PushBack(c, a);
    }
    v.AddMember("cases", cases, a);
    return v;
}

// The median of a case for the SOL table: the re-measured one where there is one.
std::optional<double> measured(const evidence_report& ev, const search_outcome& o,
                               std::optional<std::size_t> which, const std::string& name,
                               bool winner) {
    if (ev.significance) {
        const auto& m =
            winner ? ev.significance->winner_median_ms : ev.significance->initial_median_ms;
        if (const auto it = m.find(name); it != m.end()) return it->second;
    }
    return o.median_ms(which, name);
}

// The re-measured top candidates, fastest first, each with its speedup over the initial kernel
// (null for one dropped after a failed run, with why).
Value reranked_json(const evidence_report& ev, const search_outcome& o, allocator& a) {
    Value list(rapidjson::kArrayType);
    if (!ev.rerank) return list;
    for (const rerank_entry& e : ev.rerank->entries) {
        Value v(rapidjson::kObjectType);
        v.AddMember("attempt", id_json(o, e.attempt, a), a);
        v.AddMember("label", json_text(o.history[e.attempt].cand.label, a), a);
        v.AddMember("speedup", e.problem.empty() ? estimate_json(e.speedup.geomean, a) : Value(),
                    a);
        v.AddMember("dropped", e.problem.empty() ? Value() : json_text(e.problem, a), a);
        list.PushBack(v, a);
    }
    return list;
}

Value runner_up_json(const evidence_report& ev, const search_outcome& o, allocator& a) {
    if (!ev.rerank || !ev.rerank->runner_up || !ev.rerank->over_runner_up) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("runner_up", id_json(o, ev.rerank->runner_up, a), a);
    v.AddMember("estimate", estimate_json(*ev.rerank->over_runner_up, a), a);
    return v;
}

Value sol_json(const evidence_report& ev, const search_outcome& o, allocator& a) {
    Value cases(rapidjson::kArrayType);
    for (const auto& [name, f] : ev.floors) {
        Value c(rapidjson::kObjectType);
        c.AddMember("name", json_text(name, a), a);
        c.AddMember("floor_ms", f.floor_ms, a);
        c.AddMember("bound", json_text(f.bound, a), a);
        c.AddMember("bytes", f.bytes, a);
        c.AddMember("flops", json_number(f.flops), a);
        const auto ti = measured(ev, o, o.initial, name, false);
        const auto tb = measured(ev, o, o.best, name, true);
        c.AddMember("initial_fraction", ti ? Value(sol_fraction(f.floor_ms, *ti)) : Value(), a);
        c.AddMember("best_fraction", tb ? Value(sol_fraction(f.floor_ms, *tb)) : Value(), a);
        c.AddMember("sol_score", ti && tb ? json_number(sol_score(*tb, *ti, f.floor_ms)) : Value(),
                    a);
        cases.PushBack(c, a);
    }
    return cases;
}

Value vendor_json(const evidence_report& ev, const search_outcome& o, allocator& a) {
    if (!ev.vendor.ran) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("verdict", json_text(ev.vendor.verdict, a), a);
    v.AddMember("reason", json_text(ev.vendor.reason, a), a);
    Value cases(rapidjson::kArrayType);
    for (const auto& [name, ms] : ev.vendor.median_ms) {
        Value c(rapidjson::kObjectType);
        c.AddMember("name", json_text(name, a), a);
        c.AddMember("median_ms", ms, a);
        const auto best = measured(ev, o, o.best, name, true);
        c.AddMember("vendor_over_best", best ? Value(ms / *best) : Value(), a);
        cases.PushBack(c, a);
    }
    v.AddMember("cases", cases, a);
    return v;
}

}  // namespace

Value evidence_json(const evidence_report& ev, const search_outcome& o, const manifest& m,
                    allocator& a) {
    (void)m;
    Value v(rapidjson::kObjectType);
    v.AddMember("ran", ev.ran, a);
    v.AddMember("skipped", ev.skipped.empty() ? Value() : json_text(ev.skipped, a), a);
    v.AddMember("search_best", id_json(o, ev.search_best, a), a);
    v.AddMember("winner", id_json(o, ev.winner, a), a);
    Value checked(rapidjson::kArrayType);
    for (const candidate_check& c : ev.checked) checked.PushBack(check_json(c, o, a), a);
    v.AddMember("checked", checked, a);
    v.AddMember("rerank_rounds", ev.rerank ? ev.rerank->rounds : 0, a);
    v.AddMember("reranked", reranked_json(ev, o, a), a);
    v.AddMember("winner_over_runner_up", runner_up_json(ev, o, a), a);
    v.AddMember("significance", ev.significance ? significance_json(*ev.significance, a) : Value(),
                a);
    // The speedup to quote: the interleaved re-measure's where there is one.
    std::optional<double> headline;
    if (ev.significance)
        headline = ev.significance->speedup.geomean.ratio;
    else if (ev.winner && o.initial && *ev.winner == *o.initial)
        headline = 1.0;
    v.AddMember("headline_speedup", json_number(headline), a);
    // The stage's own timed runs, summarised like the search's.
    v.AddMember("timer", timer_json(summarize_timer(ev.timed_runs), a), a);
    v.AddMember("gpu_state", gpu_state_json(summarize_gpu_state(ev.timed_runs), a), a);
    v.AddMember("sol", sol_json(ev, o, a), a);
    v.AddMember("vendor", vendor_json(ev, o, a), a);
    return v;
}

namespace {

std::string ratio_text(const ratio_estimate& e) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3fx [%.3f, %.3f]", e.ratio, e.low, e.high);
    return buf;
}

// "evidence: re-ranked over 3 rounds: 2.0 2.010x [..], 1.0 1.990x [..]; the winner 2.0 ahead of
// 1.0 by 1.010x [1.002, 1.019]".
std::string rerank_lines(const search_outcome& o, const evidence_report& ev) {
    if (!ev.rerank) return "";
    std::string out =
        "evidence: re-ranked over " + std::to_string(ev.rerank->rounds) + " interleaved rounds:";
    for (const rerank_entry& e : ev.rerank->entries)
        out += " " + console_name_of(o, e.attempt) + " " +
               (e.problem.empty() ? ratio_text(e.speedup.geomean) : "dropped (" + e.problem + ")") +
               ",";
    out.back() = '\n';
    if (ev.winner && ev.rerank->runner_up && ev.rerank->over_runner_up)
        out += "evidence: the winner " + console_name_of(o, *ev.winner) + " is " +
               ratio_text(*ev.rerank->over_runner_up) + " as fast as the runner-up " +
               console_name_of(o, *ev.rerank->runner_up) + " (" +
               to_string(ev.rerank->over_runner_up->verdict) + ")\n";
    return out;
}

// The other GPUs of --devices where their references differ from the first's: "sol: GPU 1
// (NAME) floors: perf-256 0.0004 ms (memory), ..." where a floor is more than 2% apart (GPUs of
// two models), and "vendor: cublas on GPU 1 wrong_output: ..." where the library failed there.
std::string device_lines(const evidence_report& ev) {
    std::string out;
    char buf[160];
    for (std::size_t i = 1; i < ev.devices.size(); ++i) {
        const device_reference& d = ev.devices[i];
        bool apart = d.floors.size() != ev.floors.size();
        std::string floors;
        for (const auto& [name, f] : d.floors) {
            const auto first = ev.floors.find(name);
            apart |=
                first == ev.floors.end() || std::fabs(f.floor_ms - first->second.floor_ms) >
                                                0.02 * std::max(f.floor_ms, first->second.floor_ms);
            std::snprintf(buf, sizeof buf, "%s%s %.4f ms (%s)", floors.empty() ? "" : ", ",
                          name.c_str(), f.floor_ms, f.bound.c_str());
            floors += buf;
        }
        const std::string gpu = "GPU " + std::to_string(d.index);
        if (apart && !floors.empty())
            out += "sol: " + gpu + " (" + d.name + ") floors: " + floors + "\n";
        if (d.vendor.ran && d.vendor.verdict != "valid")
            out +=
                "vendor: cublas on " + gpu + " " + d.vendor.verdict + ": " + d.vendor.reason + "\n";
    }
    return out;
}

}  // namespace

std::string evidence_lines(const search_outcome& o, const evidence_report& ev, bool simulated) {
    if (!ev.ran) return ev.skipped.empty() ? "" : "evidence: skipped (" + ev.skipped + ")\n";
    std::string out = rerank_lines(o, ev);
    char buf[512];
    for (const candidate_check& c : ev.checked) {
        std::string skipped;
        for (const gate_result& g : c.gates)
            if (!g.ran) skipped += (skipped.empty() ? "" : ", ") + g.gate;
        out += "evidence: " + console_name_of(o, c.attempt) + ": " +
               (!c.passed         ? c.gate + " -> " + c.verdict + ": " + c.reason
                : skipped.empty() ? std::string("passed every gate")
                                  : "passed the gates that ran (not run: " + skipped + ")") +
               "\n";
        for (const std::string& w : c.warnings) out += "  warning: " + w + "\n";
    }
    if (!ev.winner) out += "evidence: NO candidate passes the gates, the initial kernel included\n";
    if (ev.significance) {
        const auto& s = *ev.significance;
        std::snprintf(buf, sizeof buf,
                      "evidence: re-measured over %d interleaved runs: %.3fx [%.3f, %.3f] %s at a "
                      "margin of ±%.2f%%; A/A ",
                      s.runs, s.speedup.geomean.ratio, s.speedup.geomean.low,
                      s.speedup.geomean.high, to_string(s.speedup.geomean.verdict), 100 * s.margin);
        out += buf + (s.reliable ? describe_aa(s.aa.geomean, s.margin) + " (verdicts reliable)\n"
                                 : aa_problem(s) + " (verdicts NOT reliable)\n");
    }
    for (const auto& [name, f] : ev.floors) {
        const auto ti = measured(ev, o, o.initial, name, false);
        const auto tb = measured(ev, o, o.best, name, true);
        if (!ti || !tb) continue;
        const auto score = sol_score(*tb, *ti, f.floor_ms);
        std::snprintf(buf, sizeof buf,
                      "sol: %-28s floor %.4f ms (%s)  initial %.2f%%  best %.2f%%  score %s\n",
                      name.c_str(), f.floor_ms, f.bound.c_str(),
                      100 * sol_fraction(f.floor_ms, *ti), 100 * sol_fraction(f.floor_ms, *tb),
                      score ? std::to_string(*score).substr(0, 5).c_str() : "-");
        out += buf;
    }
    if (ev.vendor.ran && ev.vendor.verdict != "valid")
        out += "vendor: cublas " + ev.vendor.verdict + ": " + ev.vendor.reason + "\n";
    out += device_lines(ev);
    return out + timing_condition_lines(ev.timed_runs, simulated, "evidence ");
}

}  // namespace cuopt
