#include "orchestrator/gate/gate_verdict.hpp"

#include "common/html_text.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace {

// The evidence stage's estimate (baseline / candidate) turned round: candidate / baseline.
slowdown_estimate as_slowdown(const ratio_estimate& e, double threshold) {
    slowdown_estimate s;
    s.ratio = 1 / e.ratio;
    s.low = 1 / e.high;
    s.high = 1 / e.low;
    s.verdict = e.verdict;  // "faster" stays the candidate's
    s.regression = s.low > 1 + threshold;
    return s;
}

// Each named case's runs, in the names' order.
std::vector<run_samples> in_order(const case_samples& all, const std::vector<std::string>& names) {
    std::vector<run_samples> out;
    for (const std::string& n : names) out.push_back(all.at(n));
    return out;
}

bool has_samples(const case_samples& all, const std::string& name) {
    const auto it = all.find(name);
    return it != all.end() && !it->second.empty() && !it->second.front().empty();
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
    return out;
}

// One case's (or the geometric mean's, `what`) regression as one reason, if it has one.
void add_regressions(std::vector<std::string>& reasons, const std::string& what,
                     const slowdown_estimate& vs_accepted,
                     const std::optional<slowdown_estimate>& vs_now,
                     const std::optional<slowdown_estimate>& drift, double threshold) {
    std::vector<std::string> parts;
    if (vs_accepted.regression) {
        std::string p = describe_slowdown(vs_accepted) + " slower than the accepted figures";
        if (drift && drift->verdict == significance::slower)
            p += " (the accepted kernel is " + describe_slowdown(*drift) +
                 " slower now too: the machine drifted)";
        parts.push_back(p);
    }
    if (vs_now && vs_now->regression)
        parts.push_back(describe_slowdown(*vs_now) +
                        " slower than the accepted kernel timed beside it");
    if (!parts.empty())
        reasons.push_back(what + " is " + joined(parts, " and ") + " (limit " +
                          fixed(1 + threshold, 3) + "x)");
}

}  // namespace

std::string describe_slowdown(const slowdown_estimate& e) {
    return fixed(e.ratio, 3) + "x [" + fixed(e.low, 3) + ", " + fixed(e.high, 3) + "]";
}

std::optional<latency_report> compare_latency(const latency_inputs& in) {
    std::vector<std::string> names;
    for (const auto& [name, runs] : in.accepted)
        if (has_samples(in.accepted, name) && has_samples(in.kernel, name)) names.push_back(name);
    if (names.empty()) return std::nullopt;
    bool beside = true;
    for (const std::string& n : names) beside &= has_samples(in.accepted_now, n);
    const bootstrap_settings unpaired{2000, 1, false};
    const auto accepted = in_order(in.accepted, names), kernel = in_order(in.kernel, names);
    const multi_case_estimate vs = compare_cases(accepted, kernel, unpaired);
    std::optional<multi_case_estimate> now, drift;
    if (beside) {
        const auto accepted_now = in_order(in.accepted_now, names);
        now = compare_cases(accepted_now, kernel, {2000, 2});
        drift = compare_cases(accepted, accepted_now, {2000, 3, false});
    }
    latency_report out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        case_latency& c = out.cases.emplace_back();
        c.name = names[i];
        c.accepted_ms = pooled_median(accepted[i]);
        c.kernel_ms = pooled_median(kernel[i]);
        c.vs_accepted = as_slowdown(vs.cases[i], in.threshold);
        if (!beside) continue;
        c.accepted_now_ms = pooled_median(in.accepted_now.at(names[i]));
        c.vs_accepted_now = as_slowdown(now->cases[i], in.threshold);
        c.drift = as_slowdown(drift->cases[i], in.threshold);
    }
    out.geomean = as_slowdown(vs.geomean, in.threshold);
    if (beside) {
        out.geomean_vs_accepted_now = as_slowdown(now->geomean, in.threshold);
        out.geomean_drift = as_slowdown(drift->geomean, in.threshold);
    }
    return out;
}

gate_verdict judge(const gate_findings& f) {
    gate_verdict v;
    const std::string environment =
        f.environment.empty() ? "" : "; environment: " + joined(f.environment, "; ");
    if (!f.cannot_judge.empty()) {
        v.outcome = gate_outcome::cannot_judge;
        v.reasons = f.cannot_judge;
        v.line = "CANNOT JUDGE: " + joined(v.reasons, "; ");
        return v;
    }
    v.reasons = f.kernel_failed;
    v.reasons.insert(v.reasons.end(), f.wrong_outputs.begin(), f.wrong_outputs.end());
    if (f.latency) {
        for (const case_latency& c : f.latency->cases)
            add_regressions(v.reasons, "case " + quote_value(c.name), c.vs_accepted,
                            c.vs_accepted_now, c.drift, f.threshold);
        add_regressions(v.reasons, "the geometric mean", f.latency->geomean,
                        f.latency->geomean_vs_accepted_now, f.latency->geomean_drift, f.threshold);
    }
    if (!v.reasons.empty()) {
        v.outcome = gate_outcome::fail;
        v.line = "FAIL: " + joined(v.reasons, "; ") + environment;
    } else if (!f.latency) {
        v.outcome = gate_outcome::cannot_judge;
        v.reasons = {"no performance case was timed on both sides"};
        v.line = "CANNOT JUDGE: " + v.reasons.front();
    } else {
        v.line = "PASS: every output matches the oracle; geomean " +
                 describe_slowdown(f.latency->geomean) + " of the accepted figures (limit " +
                 fixed(1 + f.threshold, 3) + "x)" + environment;
    }
    return v;
}

}  // namespace cuopt
