// The report's cost sheet: what the run consumed (model calls and tokens, compile time, GPU time
// the harness measured, wall time) and, given the economics flags, the pilot's cost, the monthly
// saving and the payback, each saving marked as a kernel-only upper bound.
#include <algorithm>
#include <sstream>

#include "common/html_text.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt::report {

using rapidjson::Value;

namespace {

const char* const k_upper_bound =
    "kernel-only upper bound: measure the end-to-end workload before believing it";

std::string row(const std::string& what, const std::string& value, const std::string& how) {
    return "<tr><th>" + html_escape(what) + "</th><td class=\"num\">" + value +
           "</td><td class=\"muted\">" + how + "</td></tr>\n";
}

std::string tokens(const Value& model, const char* key) {
    const auto n = integer_of(model, key);
    return n ? grouped(*n) : std::string("not reported");
}

std::string model_rows(const report_context& c) {
    const Value* model = member(c.folder.run, "model");
    if (!model) return row("model calls", "0", "no model was used");
    const std::string cost = c.cost_in.model_cost_usd ? usd(c.cost_in.model_cost_usd) : "unknown";
    return row("model calls", grouped(integer_of(*model, "calls").value_or(0)),
               html_escape(text_of(*model, "provider") + " " + text_of(*model, "model"))) +
           row("input tokens", tokens(*model, "prompt_tokens"),
               "every prompt token, cached ones included") +
           row("cached input tokens", tokens(*model, "cached_tokens"), "read from a prompt cache") +
           row("output tokens", tokens(*model, "completion_tokens"), "every billed output token") +
           row("reasoning tokens", tokens(*model, "reasoning_tokens"),
               "the part of output the API reports as reasoning") +
           row("estimated model cost", cost,
               c.cost_in.model_cost_usd ? "from the config's price table"
                                        : "no price for this model in the config's price table");
}

// GPU busy time, never more than the wall time on each GPU: a simulated run measured none, and
// timings that sum past the wall clock are not the GPU's time (said, not shown as busy time).
std::string gpu_busy_row(const report_context& c, const std::string& how) {
    const double busy_s = c.gpu.total_ms() / 1000;
    if (c.simulated)
        return row("GPU busy time", "none",
                   "a fake run: no GPU was used (the stand-in harness's invented timings sum to " +
                       html_escape(duration_text(busy_s)) + ")");
    const std::size_t gpus =
        std::max<std::size_t>(1, array_or_empty(c.folder.summary, "devices").Size());
    const double limit_s = c.cost_in.wall_s * static_cast<double>(gpus);
    if (c.cost_in.wall_s > 0 && busy_s > limit_s)
        return row("GPU busy time", "unknown",
                   "the responses' timings sum to " + html_escape(duration_text(busy_s)) +
                       ", more than the wall time on " + std::to_string(gpus) +
                       " GPU(s): they are not the GPU's time");
    return row("GPU busy time (measured)", duration_text(busy_s), html_escape(how));
}

std::string usage_rows(const report_context& c) {
    double compile_ms = 0;
    const Value& attempts = array_or_empty(c.folder.history, "attempts");
    for (const Value& a : attempts.GetArray())
        compile_ms += number_of(object_or_empty(a, "compile"), "wall_ms").value_or(0);
    const measured_gpu_time& g = c.gpu;
    std::ostringstream how;
    how << "the sum of gpu_time_ms (a measured case's timed samples on the primary clock) over "
        << g.responses << " response.json files of the run folder: search " << fixed(g.search_ms, 1)
        << " ms, evidence gates " << fixed(g.evidence_ms, 1) << " ms, oracle and vendor runs "
        << fixed(g.other_ms, 1) << " ms; " << grouped(g.timed_launches)
        << " timed launches. Warm-up and checked launches, L2 flushes and input refreshes are not "
           "in it"
        << (g.unreadable
                ? "; " + std::to_string(g.unreadable) + " unreadable response files left out"
                : "");
    return model_rows(c) +
           row("compile time", fixed(compile_ms, 1) + " ms",
               "NVRTC wall time summed over " + std::to_string(attempts.Size()) +
                   " attempts (cache hits near 0)") +
           gpu_busy_row(c, how.str()) +
           row("time inside the harness",
               duration_text(number_of(c.folder.run, "harness_wall_s").value_or(0)),
               "the harness processes' wall time") +
           row("wall time", duration_text(c.cost_in.wall_s), "the run, start to end");
}

std::string needs(const std::string& flags) {
    return "<span class=\"muted\">needs " + flags + "</span>";
}

std::string pilot_rows(const report_context& c) {
    const report_economics& e = c.economics;
    const cost_figures& f = c.costs;
    return row("engineer time",
               f.engineer_cost_usd ? usd(f.engineer_cost_usd)
                                   : needs("--engineer-hours, --engineer-rate"),
               e.engineer_hours && e.engineer_rate_usd
                   ? fixed(e.engineer_hours, 2) + " h &times; " + usd(e.engineer_rate_usd) +
                         " per hour"
                   : "") +
           row("model charges", f.model_cost_usd ? usd(f.model_cost_usd) : "unknown",
               c.cost_in.model_used ? "the estimate above" : "no model was used") +
           row("GPU wall-clock cost",
               f.gpu_cost_usd ? usd(f.gpu_cost_usd) : needs("--gpu-hour-cost"),
               e.gpu_hour_cost_usd
                   ? fixed(c.cost_in.wall_s / 3600, 4) + " h of wall time &times; " +
                         usd(e.gpu_hour_cost_usd) + " per GPU hour"
                   : "the GPU is held for the whole run") +
           "<tr class=\"total\"><th>pilot cost</th><td class=\"num\">" +
           (f.pilot_cost_usd ? usd(f.pilot_cost_usd) : "-") +
           "</td><td class=\"muted\">engineer time + model charges + GPU wall-clock "
           "cost</td></tr>\n";
}

std::string saving_rows(const report_context& c) {
    const report_economics& e = c.economics;
    const cost_figures& f = c.costs;
    const std::string bound = "<br><span class=\"bound\">" + std::string(k_upper_bound) + "</span>";
    const std::string payback = f.payback_months    ? fixed(f.payback_months, 2) + " months"
                                : f.never_pays_back ? "never (no saving)"
                                                    : "-";
    return row("saved time per invocation", ms_text(f.saved_ms_per_invocation),
               "the mean over " + std::to_string(c.cost_in.performance_cases.size()) +
                   " performance cases of (initial median &minus; winner median), from " +
                   html_escape(c.saved_basis.empty() ? "no winner" : c.saved_basis) +
                   ": one invocation is one launch, the cases equally likely shapes") +
           row("invocations per month",
               e.invocations_per_month ? grouped(static_cast<long long>(*e.invocations_per_month))
                                       : needs("--invocations-per-month"),
               "") +
           row("saved GPU hours per month", fixed(f.saved_gpu_hours_per_month, 3),
               "saved ms per invocation &times; invocations &divide; 3,600,000" + bound) +
           row("monthly saving", usd(f.monthly_saving_usd),
               "saved GPU hours &times; GPU-hour cost" + bound) +
           "<tr class=\"total\"><th>payback</th><td class=\"num\">" + payback +
           "</td><td class=\"muted\">pilot cost &divide; monthly saving" + bound + "</td></tr>\n";
}

}  // namespace

std::string cost_section(const report_context& c) {
    std::string missing;
    for (const std::string& flag : c.costs.missing) missing += (missing.empty() ? "" : ", ") + flag;
    std::ostringstream o;
    o << "<section id=\"cost\"><h2>Cost sheet</h2>\n<h3>What the run used</h3>\n"
      << "<table class=\"data cost\"><tbody>\n"
      << usage_rows(c) << "</tbody></table>\n"
      << "<h3>Pilot cost and payback</h3>\n<table class=\"data cost\"><tbody>\n"
      << pilot_rows(c) << saving_rows(c) << "</tbody></table>\n";
    if (!missing.empty())
        o << "<p class=\"note\">Not given: " << html_escape(missing)
          << ". Give them to <code>cuda-optimizer report RUN_DIR</code> (or to optimize, which "
             "records them in run.json) to fill in the figures.</p>\n";
    return o.str() + "</section>\n";
}

}  // namespace cuopt::report
