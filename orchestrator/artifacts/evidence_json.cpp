#include "orchestrator/artifacts/evidence_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/artifacts/timing_conditions.hpp"

namespace cuopt {

using rapidjson::Value;

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

Value id_json(const search_outcome& o, std::optional<std::size_t> i, json_allocator& a) {
    return i ? json_text(id_of(o, i), a) : Value();
}

Value estimate_json(const ratio_estimate& e, json_allocator& a) {
    json_object v(a);
    v.add("ratio", e.ratio).add("low", e.low).add("high", e.high);
    return v.add("verdict", to_string(e.verdict)).take();
}

Value gates_json(const std::vector<gate_result>& gates, json_allocator& a) {
    json_array out(a);
    for (const gate_result& g : gates) {
        json_object gv(a);
        gv.add("gate", g.gate).add("ran", g.ran).add("passed", g.passed);
        out.push(gv.add("detail", g.detail));
    }
    return out.take();
}

Value sanitizer_json(const std::vector<sanitizer_result>& runs, json_allocator& a) {
    json_array out(a);
    for (const sanitizer_result& s : runs) {
        json_object sv(a);
        sv.add("tool", s.tool).add("completed", s.completed).add("errors", s.errors);
        out.push(sv.add("warnings", s.warnings).add("first_lines", s.first_lines));
    }
    return out.take();
}

// The instructions gate's audit (null where the gate did not reach it).
Value instructions_json(const std::optional<instruction_audit>& audit, json_allocator& a) {
    if (!audit) return Value();
    const instruction_mix& m = audit->mix;
    json_object v(a);
    v.add("ran", audit->ran).add("reason", audit->ran ? Value() : json_text(audit->reason, a));
    v.add("tool", audit->tool).add("arch", audit->arch).add("total", m.total);
    v.add("mma", m.mma).add("mma_opcodes", m.mma_opcodes).add("fp64", m.fp64);
    v.add("atomics", m.atomics).add("atomic_opcodes", m.atomic_opcodes);
    v.add("clock_reads", m.clock_reads);
    v.add("clock_registers",
          std::vector<std::string>(m.clock_registers.begin(), m.clock_registers.end()));
    v.add("device_heap", calls_device_heap(m)).add("externs", m.externs);
    return v.add("functions", m.functions).add("other_kernels", m.other_kernels).take();
}

Value check_json(const candidate_check& c, const search_outcome& o, json_allocator& a) {
    json_object v(a);
    v.add("attempt", id_json(o, c.attempt, a)).add("label", o.history[c.attempt].cand.label);
    v.add("outcome", c.passed ? "passed" : "disqualified");
    v.add("gate", c.gate.empty() ? Value() : json_text(c.gate, a));
    v.add("verdict", c.verdict).add("reason", c.reason).add("warnings", c.warnings);
    v.add("gates", gates_json(c.gates, a)).add("sanitizer", sanitizer_json(c.sanitizer, a));
    v.add("determinism",
          c.determinism ? Value(rapidjson::StringRef(to_string(c.determinism->kind))) : Value());
    v.add("repetition_ratio", c.repetition_ratio);
    v.add("instructions", instructions_json(c.instructions, a));
    json_array spreads(a);
    for (const launch_spread& s : c.launch_spreads) {
        json_object sv(a);
        sv.add("case", s.case_name).add("runs", s.runs).add("launches", s.launches);
        sv.add("mean_over_median", s.mean_over_median);
        spreads.push(
            sv.add("slowest_over_median", s.slowest_over_median).add("tail_share", s.tail_share));
    }
    return v.add("launch_spreads", spreads).take();
}

Value significance_json(const significance_report& s, json_allocator& a) {
    json_object v(a);
    v.add("runs", s.runs).add("warmups", s.warmups).add("reliable", s.reliable);
    v.add("throttled_cases", s.throttled_cases).add("device", s.device).add("margin", s.margin);
    v.add("aa_class", to_string(s.aa_overall));
    v.add("speedup", estimate_json(s.speedup.geomean, a)).add("aa", estimate_json(s.aa.geomean, a));
    json_array cases(a);
    for (std::size_t i = 0; i < s.cases.size(); ++i) {
        json_object c(a);
        c.add("name", s.cases[i]).add("initial_median_ms", s.initial_median_ms.at(s.cases[i]));
        c.add("winner_median_ms", s.winner_median_ms.at(s.cases[i]));
        c.add("speedup", estimate_json(s.speedup.cases[i], a));
        c.add("aa", estimate_json(s.aa.cases[i], a)).add("process_spread", s.spreads[i]);
        cases.push(c.add("margin", s.margins[i]).add("aa_class", to_string(s.aa_classes[i])));
    }
    return v.add("cases", cases).take();
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
Value reranked_json(const evidence_report& ev, const search_outcome& o, json_allocator& a) {
    json_array list(a);
    if (!ev.rerank) return list.take();
    for (const rerank_entry& e : ev.rerank->entries) {
        json_object v(a);
        v.add("attempt", id_json(o, e.attempt, a)).add("label", o.history[e.attempt].cand.label);
        v.add("speedup", e.problem.empty() ? estimate_json(e.speedup.geomean, a) : Value());
        list.push(v.add("dropped", e.problem.empty() ? Value() : json_text(e.problem, a)));
    }
    return list.take();
}

Value runner_up_json(const evidence_report& ev, const search_outcome& o, json_allocator& a) {
    if (!ev.rerank || !ev.rerank->runner_up || !ev.rerank->over_runner_up) return Value();
    json_object v(a);
    v.add("runner_up", id_json(o, ev.rerank->runner_up, a));
    return v.add("estimate", estimate_json(*ev.rerank->over_runner_up, a)).take();
}

Value sol_json(const evidence_report& ev, const search_outcome& o, json_allocator& a) {
    json_array cases(a);
    for (const auto& [name, f] : ev.floors) {
        const auto ti = measured(ev, o, o.initial, name, false);
        const auto tb = measured(ev, o, o.best, name, true);
        json_object c(a);
        c.add("name", name).add("floor_ms", f.floor_ms).add("bound", f.bound);
        c.add("bytes", f.bytes).add("flops", f.flops);
        c.add("initial_fraction", ti ? Value(sol_fraction(f.floor_ms, *ti)) : Value());
        c.add("best_fraction", tb ? Value(sol_fraction(f.floor_ms, *tb)) : Value());
        c.add("traffic_bytes", f.traffic_bytes);
        c.add("best_memory_sol", tb ? Value(sol_fraction(f.traffic_ms, *tb)) : Value());
        cases.push(c.add("sol_score", ti && tb ? sol_score(*tb, *ti, f.floor_ms) : std::nullopt));
    }
    return cases.take();
}

Value vendor_json(const evidence_report& ev, const search_outcome& o, json_allocator& a) {
    if (!ev.vendor.ran) return Value();
    json_object v(a);
    v.add("verdict", ev.vendor.verdict).add("reason", ev.vendor.reason);
    json_array cases(a);
    for (const auto& [name, ms] : ev.vendor.median_ms) {
        const auto best = measured(ev, o, o.best, name, true);
        json_object c(a);
        c.add("name", name).add("median_ms", ms);
        cases.push(c.add("vendor_over_best", best ? Value(ms / *best) : Value()));
    }
    return v.add("cases", cases).take();
}

}  // namespace

Value evidence_json(const evidence_report& ev, const search_outcome& o, const manifest& m,
                    json_allocator& a) {
    json_object v(a);
    v.add("requires_mma", m.required_mma.empty() ? Value() : json_text(m.required_mma, a));
    v.add("ran", ev.ran).add("skipped", ev.skipped.empty() ? Value() : json_text(ev.skipped, a));
    v.add("search_best", id_json(o, ev.search_best, a)).add("winner", id_json(o, ev.winner, a));
    json_array checked(a);
    for (const candidate_check& c : ev.checked) checked.push(check_json(c, o, a));
    v.add("checked", checked).add("rerank_rounds", ev.rerank ? ev.rerank->rounds : 0);
    v.add("reranked", reranked_json(ev, o, a))
        .add("winner_over_runner_up", runner_up_json(ev, o, a));
    v.add("significance", ev.significance ? significance_json(*ev.significance, a) : Value());
    // The speedup to quote: the interleaved re-measure's where there is one.
    std::optional<double> headline;
    if (ev.significance)
        headline = ev.significance->speedup.geomean.ratio;
    else if (ev.winner && o.initial && *ev.winner == *o.initial)
        headline = 1.0;
    v.add("headline_speedup", headline);
    // The stage's own timed runs, summarised like the search's.
    v.add("timer", timer_json(summarize_timer(ev.timed_runs), a));
    v.add("gpu_state", gpu_state_json(summarize_gpu_state(ev.timed_runs), a));
    return v.add("sol", sol_json(ev, o, a)).add("vendor", vendor_json(ev, o, a)).take();
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
// two models), and "vendor: cublas on GPU 1 wrong_output: ..." where the library (cublas,
// cublaslt) failed there.
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
            out += "vendor: " + d.vendor.library + " on " + gpu + " " + d.vendor.verdict + ": " +
                   d.vendor.reason + "\n";
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
        for (const gate_result& g : c.gates)  // the figures an honest winner is judged by
            if (c.passed && g.ran && g.gate == "amortised_work")
                out += "  launches: " + g.detail + "\n";
        if (c.passed && c.instructions && c.instructions->ran)
            out += "  instructions: " + describe_mix(c.instructions->mix) + "\n";
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
                      "sol: %-28s floor %.4f ms (%s)  initial %.2f%%  best %.2f%%  score %s  "
                      "memory SOL %.0f%%\n",
                      name.c_str(), f.floor_ms, f.bound.c_str(),
                      100 * sol_fraction(f.floor_ms, *ti), 100 * sol_fraction(f.floor_ms, *tb),
                      score ? std::to_string(*score).substr(0, 5).c_str() : "-",
                      100 * sol_fraction(f.traffic_ms, *tb));
        out += buf;
    }
    if (ev.vendor.ran && ev.vendor.verdict != "valid")
        out += "vendor: " + ev.vendor.library + " " + ev.vendor.verdict + ": " + ev.vendor.reason +
               "\n";
    out += device_lines(ev);
    return out + timing_condition_lines(ev.timed_runs, simulated, "evidence ");
}

}  // namespace cuopt
