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

// run.json's gpu_busy, summed over its GPUs.
struct busy_figures {
    double busy_s = 0;
    long long kernels = 0, runs = 0, unmeasured = 0;
    std::size_t gpus = 0;
};

busy_figures busy_of(const Value& busy) {
    busy_figures f;
    for (const Value& g : array_or_empty(busy, "gpus").GetArray()) {
        f.busy_s += number_of(g, "busy_s").value_or(0);
        f.kernels += integer_of(g, "kernels").value_or(0);
        f.runs += integer_of(g, "harness_runs").value_or(0);
        f.unmeasured += integer_of(g, "unmeasured_runs").value_or(0);
        ++f.gpus;
    }
    return f;
}

// GPU busy time as run.json measured it (CUPTI's kernel spans, every harness run of the run),
// and the search's share of its wall time. A simulated run measured none and says so; a busy
// time past the wall time on every GPU is not shown as one; runs without a figure make it a
// floor, said.
std::string gpu_busy_row(const report_context& c) {
    const Value* busy = member(c.folder.run, "gpu_busy");
    const busy_figures f = busy ? busy_of(*busy) : busy_figures{};
    if (c.simulated || (busy && text_of(*busy, "source") == "simulated"))
        return row(
            "GPU busy time", "none",
            "a fake run: no GPU was used (the stand-in harness's invented busy time sums to " +
                html_escape(duration_text(f.busy_s)) + ")");
    if (!busy)
        return row("GPU busy time", "not recorded",
                   "run.json predates the measured busy time (gpu_busy)");
    const std::string source = text_of(*busy, "source");
    if (source == "none")
        return row("GPU busy time", "not measured",
                   "none of " + grouped(f.runs) +
                       " harness runs gave a figure (CUPTI missing, or held by a profiler)");
    const double limit_s = c.cost_in.wall_s * static_cast<double>(std::max<std::size_t>(1, f.gpus));
    if (c.cost_in.wall_s > 0 && f.busy_s > limit_s)
        return row("GPU busy time", "unknown",
                   "run.json's busy time, " + html_escape(duration_text(f.busy_s)) +
                       ", is more than the wall time on " + std::to_string(f.gpus) + " GPU(s)");
    std::ostringstream how;
    how << (source == "cupti" ? "CUPTI's kernel records" : "mixed sources (" + source + ")")
        << ": the union of every kernel's span, overlaps counted once, over " << grouped(f.runs)
        << " harness runs (search, evidence, reference and vendor; the harness's input "
           "generation, L2 flushes and hashes included), "
        << grouped(f.kernels) << " kernels";
    if (const auto fraction = number_of(*busy, "busy_fraction"))
        how << "; the search kept " << (f.gpus == 1 ? "the GPU" : "its GPUs") << " busy "
            << fixed(*fraction * 100, 0) << "% of its "
            << duration_text(number_of(*busy, "search_wall_s").value_or(0));
    if (f.unmeasured)
        how << "; " << grouped(f.unmeasured) << " runs gave no figure (crashed, hung or "
            << "untraced): a floor";
    return row("GPU busy time (measured)", duration_text(f.busy_s), html_escape(how.str()));
}

std::string usage_rows(const report_context& c) {
    double compile_ms = 0;
    const Value& attempts = array_or_empty(c.folder.history, "attempts");
    for (const Value& a : attempts.GetArray())
        compile_ms += number_of(object_or_empty(a, "compile"), "wall_ms").value_or(0);
    return model_rows(c) +
           row("compile time", fixed(compile_ms, 1) + " ms",
               "NVRTC wall time summed over " + std::to_string(attempts.Size()) +
                   " attempts (cache hits near 0)") +
           gpu_busy_row(c) +
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
