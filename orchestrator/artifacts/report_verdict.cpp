#include "orchestrator/artifacts/report_verdict.hpp"

#include <cstdio>

#include "common/json_fields.hpp"

namespace cuopt {

using rapidjson::Value;

std::string_view to_string(condition_state s) {
    switch (s) {
        case condition_state::met:
            return "met";
        case condition_state::not_met:
            return "not met";
        case condition_state::not_run:
            return "not run";
    }
    return "not run";
}

std::string format_ratio(const ratio_interval& r) {
    char text[96];
    std::snprintf(text, sizeof text, "%.3fx [%.3f, %.3f]", r.ratio, r.low, r.high);
    return text;
}

namespace {

std::optional<ratio_interval> ratio_of(const Value& v, const char* key) {
    const Value* e = member(v, key);
    if (!e || !number_of(*e, "ratio")) return std::nullopt;
    return ratio_interval{*number_of(*e, "ratio"), number_of(*e, "low").value_or(0),
                          number_of(*e, "high").value_or(0), text_of(*e, "verdict")};
}

// The evidence block's entry for the declared winner, or null.
const Value* winner_entry(const Value& evidence) {
    const std::string winner = text_of(evidence, "winner");
    for (const Value& c : array_or_empty(evidence, "checked").GetArray())
        if (!winner.empty() && text_of(c, "attempt") == winner) return &c;
    return nullptr;
}

const Value* gate_of(const Value* entry, const char* name) {
    if (!entry) return nullptr;
    for (const Value& g : array_or_empty(*entry, "gates").GetArray())
        if (text_of(g, "gate") == name) return &g;
    return nullptr;
}

go_condition holdout_condition(const Value* entry, const std::string& no_evidence) {
    go_condition c{"passes the holdout", condition_state::not_run, no_evidence};
    if (const Value* g = gate_of(entry, "holdout")) {
        c.detail = text_of(*g, "detail");
        if (bool_of(*g, "ran").value_or(false))
            c.state = bool_of(*g, "passed").value_or(false) ? condition_state::met
                                                            : condition_state::not_met;
    }
    return c;
}

constexpr const char* k_significance_title =
    "faster than the initial kernel beyond the practical margin (A/A equivalent)";

go_condition significance_condition(const go_verdict& v, const std::string& no_evidence) {
    go_condition c{k_significance_title, condition_state::not_run, no_evidence};
    if (v.winner_is_initial) c.detail = "the winner is the initial kernel: nothing to compare";
    if (!v.speedup || !v.aa) return c;
    const bool faster = v.speedup->verdict == "faster";
    c.state = faster && v.reliable ? condition_state::met : condition_state::not_met;
    char margin[48] = "";
    if (v.margin) std::snprintf(margin, sizeof margin, " at a margin of ±%.2f%%", 100 * *v.margin);
    c.detail = format_ratio(*v.speedup) + " " + v.speedup->verdict + margin + "; A/A " +
               format_ratio(*v.aa) + " " + (v.aa_class.empty() ? "" : v.aa_class + ", ") +
               (v.reliable ? "verdicts reliable" : "verdicts not reliable: the GPU was too noisy");
    return c;
}

go_condition sanitizer_condition(const Value* entry, const std::string& no_evidence) {
    go_condition c{"sanitizer clean", condition_state::not_run, no_evidence};
    const Value* g = gate_of(entry, "sanitizer");
    if (!g) return c;
    c.detail = text_of(*g, "detail");
    if (!bool_of(*g, "ran").value_or(false)) return c;
    bool clean = bool_of(*g, "passed").value_or(false);
    for (const Value& tool : array_or_empty(*entry, "sanitizer").GetArray())
        clean = clean && bool_of(tool, "completed").value_or(false) &&
                integer_of(tool, "errors").value_or(1) == 0;
    c.state = clean ? condition_state::met : condition_state::not_met;
    return c;
}

// Only where the manifest requires an MMA class: the winner's SASS holds it. An audit that did
// not run (no cuobjdump, no cubin) proves nothing and keeps the run from a go.
go_condition instructions_condition(const Value* entry, const std::string& required,
                                    const std::string& no_evidence) {
    go_condition c{"holds the required MMA path (requires.mma " + required + ")",
                   condition_state::not_run, no_evidence};
    const Value* g = gate_of(entry, "instructions");
    if (!g) return c;
    c.detail = text_of(*g, "detail");
    if (!bool_of(*g, "ran").value_or(false)) return c;
    c.state =
        bool_of(*g, "passed").value_or(false) ? condition_state::met : condition_state::not_met;
    return c;
}

go_condition sol_condition(const Value& evidence, const std::string& no_evidence) {
    go_condition c{"not below the speed-of-light floor", condition_state::not_run, no_evidence};
    double worst = -1;
    std::string worst_case;
    for (const Value& s : array_or_empty(evidence, "sol").GetArray())
        if (const auto f = number_of(s, "best_fraction"); f && *f > worst) {
            worst = *f;
            worst_case = text_of(s, "name");
        }
    if (worst < 0) return c;
    char text[160];
    std::snprintf(text, sizeof text, "at most %.2f%% of speed of light (%s)", 100 * worst,
                  worst_case.c_str());
    c.state = worst <= 1.0 ? condition_state::met : condition_state::not_met;
    c.detail = worst <= 1.0 ? text : std::string(text) + ": faster than physics allows";
    return c;
}

// Why there is no evidence on the winner, for the conditions' detail.
std::string no_evidence_reason(const Value& evidence) {
    if (!member(evidence, "ran")) return "no evidence block in summary.json";
    if (!bool_of(evidence, "ran").value_or(false)) {
        const std::string why = text_of(evidence, "skipped");
        return "the evidence stage did not run" + (why.empty() ? "" : ": " + why);
    }
    return "the gate did not run on the winner";
}

std::string headline_of(const go_verdict& v) {
    if (v.go)
        return "GO: " + v.winner + " is " + format_ratio(*v.speedup) +
               " faster than the initial kernel and meets every condition";
    std::string failed, not_run;
    for (const go_condition& c : v.conditions) {
        if (c.state == condition_state::not_met) failed += ", " + c.name;
        if (c.state == condition_state::not_run) not_run += ", " + c.name;
    }
    std::string why = v.winner_is_initial ? "nothing beat the initial kernel" : "";
    if (!failed.empty()) why += (why.empty() ? "not met: " : "; not met: ") + failed.substr(2);
    if (!not_run.empty()) why += (why.empty() ? "not run: " : "; not run: ") + not_run.substr(2);
    return "NO-GO: " + why;
}

}  // namespace

std::string verdict_word(const go_verdict& v) {
    if (v.go) return "go";
    return v.winner.empty() || v.winner_is_initial ? "no_winner" : "no_go";
}

std::vector<std::string> verdict_reasons(const go_verdict& v) {
    if (v.go) return {};
    if (v.winner.empty()) return {v.headline.substr(v.headline.find(": ") + 2)};
    std::vector<std::string> out;
    if (v.winner_is_initial) out.emplace_back("nothing beat the initial kernel");
    for (const go_condition& c : v.conditions)
        if (c.state != condition_state::met &&
            !(v.winner_is_initial && c.name.rfind("signif", 0) == 0))
            out.push_back(std::string(to_string(c.state)) + ": " + c.name +
                          (c.detail.empty() ? "" : " (" + c.detail + ")"));
    return out;
}

go_verdict decide_go(const Value& summary, const Value& run) {
    go_verdict v;
    const Value* best = member(summary, "best");
    if (!best) {
        const Value& ev = object_or_empty(summary, "evidence");
        std::string why = summary.IsObject() ? text_of(summary, "error") : text_of(run, "error");
        if (why.empty() && bool_of(ev, "ran").value_or(false))
            why = "no candidate passes the evidence gates, the initial kernel included";
        v.headline = "NO-GO: no declared winner" + (why.empty() ? "" : ": " + why);
        for (const char* name : {"passes the holdout", k_significance_title, "sanitizer clean",
                                 "not below the speed-of-light floor"})
            v.conditions.push_back({name, condition_state::not_run, "no declared winner"});
        return v;
    }
    v.winner = text_of(*best, "label") + " (iteration " + text_of(*best, "iteration") +
               ", attempt " + text_of(*best, "attempt") + ")";
    v.winner_is_initial = text_of(*best, "proposer") == "initial";
    v.search_speedup = number_of(*best, "speedup_vs_initial");
    const Value& ev = object_or_empty(summary, "evidence");
    const Value& sig = object_or_empty(ev, "significance");
    v.speedup = ratio_of(sig, "speedup");
    v.aa = ratio_of(sig, "aa");
    v.aa_class = text_of(sig, "aa_class");
    v.margin = number_of(sig, "margin");
    // Older runs have no class: their A/A was clean when its interval held 1.
    v.reliable =
        bool_of(sig, "reliable").value_or(v.aa && v.aa->verdict == "no_significant_difference");
    const Value* entry = winner_entry(ev);
    const std::string none = no_evidence_reason(ev);
    v.conditions = {holdout_condition(entry, none), significance_condition(v, none),
                    sanitizer_condition(entry, none), sol_condition(ev, none)};
    if (const std::string required = text_of(ev, "requires_mma"); !required.empty())
        v.conditions.push_back(instructions_condition(entry, required, none));
    v.go = !v.winner_is_initial;
    for (const go_condition& c : v.conditions) v.go = v.go && c.state == condition_state::met;
    v.headline = headline_of(v);
    return v;
}

}  // namespace cuopt
