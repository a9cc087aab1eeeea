// The progress lines, the closing verdict and the lines on how the run was timed (timer, GPU
// state, GPU busy). The closing table of per-case latencies: closing_table.cpp.
#include "orchestrator/artifacts/console_report.hpp"

#include <cstdio>
#include <map>

#include "common/html_text.hpp"
#include "orchestrator/artifacts/timing_conditions.hpp"

namespace cuopt {

std::string format_ms(std::optional<double> ms) {
    if (!ms) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f ms", *ms);
    return buf;
}

std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent,
                      std::size_t max_chars) {
    std::string words = text.size() > max_chars ? text.substr(0, max_chars) : text;
    if (words.size() < text.size()) {  // cut at a word, and say so
        const auto space = words.find_last_of(" \n");
        if (space != std::string::npos && space > max_chars / 2) words.resize(space);
        words += " ...";
    }
    std::string out, line;
    std::size_t start = 0;
    while (start < words.size()) {
        std::size_t end = words.find_first_of(" \n", start);
        if (end == std::string::npos) end = words.size();
        const std::string word = words.substr(start, end - start);
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += (out.empty() ? "" : "\n" + indent) + line;
            line.clear();
        }
        if (!word.empty()) line += (line.empty() ? "" : " ") + word;
        if (end < words.size() && words[end] == '\n' && !line.empty()) {  // keep the text's lines
            out += (out.empty() ? "" : "\n" + indent) + line;
            line.clear();
        }
        start = end + 1;
    }
    if (!line.empty()) out += (out.empty() ? "" : "\n" + indent) + line;
    return out;
}

namespace {

std::string joined(const std::vector<std::string>& words, const char* separator) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
    return out;
}

// A time in microseconds: "1.3 us", "380 us".
std::string format_us(double ms) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ms < 0.01 ? "%.1f us" : "%.0f us", ms * 1e3);
    return buf;
}

// Lines about how an attempt's cases were timed: while the GPU throttled, or by two clocks
// that disagree beyond the events' known overhead. Warnings, never a verdict.
std::string timing_warnings(const attempt_result& r) {
    std::string out;
    for (const case_evaluation& ce : r.cases) {
        const response_timing_details& d = ce.timing;
        if (d.gpu_state && d.gpu_state->throttled) {
            const std::string why = joined(d.gpu_state->throttle_reasons, ", ");
            out += "\n  warning: case '" + ce.name + "' timed while throttled (" +
                   (why.empty() ? "no reason given" : why) + ")";
        }
        if (d.channels_agree == false)
            out += "\n  warning: case '" + ce.name + "': CUPTI " +
                   format_ms(d.cupti ? std::optional(d.cupti->median_ms) : std::nullopt) +
                   " and CUDA events " +
                   format_ms(d.events ? std::optional(d.events->median_ms) : std::nullopt) +
                   " disagree beyond the events' overhead";
    }
    return out;
}

// "timer: cupti (CUDA events beside: median overhead 1.3 us)"; "" when no response named one.
std::string timer_line(const std::optional<timer_use>& t) {
    if (!t) return "";
    std::string line = "timer: " + t->name;
    std::vector<std::string> notes;
    if (t->name == "mixed")
        for (const auto& [name, n] : t->cases)
            notes.push_back(name + " " + std::to_string(n) + " case" + (n == 1 ? "" : "s"));
    if (t->median_event_overhead_ms)
        notes.push_back("CUDA events beside: median overhead " +
                        format_us(*t->median_event_overhead_ms));
    if (t->channels_disagree)
        notes.push_back(std::to_string(t->channels_disagree) +
                        " case(s) where the clocks disagree");
    if (t->name != "cupti" && t->note) notes.push_back(*t->note);
    return line + (notes.empty() ? "" : " (" + joined(notes, "; ") + ")") + "\n";
}

// "gpu: SM 1410-1980 MHz, memory 3201 MHz, up to 71 C, up to 512 W of 700 W; 1 of 40 measured
// cases timed while throttled (sw_power_cap)"; "" when no response said anything about it.
std::string gpu_state_line(const std::optional<gpu_state_summary>& g) {
    if (!g) return "";
    if (g->cases == 0) return "gpu: not monitored" + (g->note ? " (" + *g->note + ")" : "") + "\n";
    auto range = [](const std::optional<int>& lo, const std::optional<int>& hi) {
        if (!lo || !hi) return std::string("?");
        return std::to_string(*lo) + (*lo == *hi ? "" : "-" + std::to_string(*hi));
    };
    char power[96] = "";
    if (g->max_power_w)
        std::snprintf(power, sizeof power, ", up to %.0f W of %.0f W", *g->max_power_w,
                      g->power_limit_w.value_or(0.0));
    std::string line =
        "gpu: SM " + range(g->sm_clock_min_mhz, g->sm_clock_max_mhz) + " MHz, memory " +
        range(g->mem_clock_min_mhz, g->mem_clock_max_mhz) + " MHz" +
        (g->max_temperature_c ? ", up to " + std::to_string(*g->max_temperature_c) + " C" : "") +
        power + "; ";
    if (g->throttled.empty()) return line + "no measured case throttled\n";
    return line + std::to_string(g->throttled.size()) + " of " + std::to_string(g->cases) +
           " measured cases timed while throttled (" + joined(g->throttle_reasons, ", ") + ")\n";
}

}  // namespace

std::string progress_line(const attempt_result& r, const search_outcome& o, int max_iterations,
                          double elapsed_s) {
    char head[96];
    std::snprintf(head, sizeof head, "[iter %d/%d #%d %6.1f s] %-8s ", r.iteration, max_iterations,
                  r.attempt, elapsed_s, to_string(r.cand.proposer));
    std::string line = head + r.cand.label + "  " + to_string(r.verdict);
    if (r.geomean_ms) line += "  geomean " + format_ms(r.geomean_ms);
    if (r.speedup_vs_initial) {
        char s[32];
        std::snprintf(s, sizeof s, "  %.2fx", *r.speedup_vs_initial);
        line += s;
    }
    if (r.became_best) {
        line += "  NEW BEST";
    } else if (o.best && o.history[*o.best].speedup_vs_initial) {
        char s[48];
        std::snprintf(s, sizeof s, "  (best %.2fx)", *o.history[*o.best].speedup_vs_initial);
        line += s;
    }
    if (!o.baselines.empty()) line += "  on GPU " + std::to_string(r.device);  // --devices
    if (r.verdict != verdict::valid && !r.reason.empty())
        line += ":\n    " + wrap_text(r.reason, 96, "    ", 600);
    return line + timing_warnings(r);
}

namespace {

// "best: ..." without the verdict: the search's best, how it was checked, the counts.
std::string best_line(const search_outcome& o, const evidence_report& ev,
                      const std::string& run_name, double wall_s) {
    const auto [valid, rejected] = o.counts();
    char tail[160];
    std::snprintf(tail, sizeof tail, "; %zu attempt%s, %d valid, %zu rejected", o.history.size(),
                  o.history.size() == 1 ? "" : "s", valid,
                  o.history.size() - static_cast<std::size_t>(valid));
    std::string counts = tail;
    if (!rejected.empty()) {
        std::string parts;
        for (const auto& [name, n] : rejected)
            parts += (parts.empty() ? "" : ", ") + name + " " + std::to_string(n);
        counts += " (" + parts + ")";
    }
    std::snprintf(tail, sizeof tail, "; %s in %.0f s", run_name.c_str(), wall_s);
    counts += tail;
    if (ev.ran && !ev.winner) return "best: none passes the evidence gates" + counts;
    if (!o.best) return "best: none (the initial kernel failed)" + counts;
    const attempt_result& b = o.history[*o.best];
    char head[200];
    const bool eager = o.initial && !o.history[*o.initial].cand.pytorch_mode.empty();
    std::snprintf(head, sizeof head, " (iteration %d, attempt %d), %.2fx geomean over %s",
                  b.iteration, b.attempt, b.speedup_vs_initial.value_or(1.0),
                  eager ? "PyTorch eager" : "the initial kernel");
    std::string line = "best: " + b.cand.label + head;
    if (ev.significance) {
        const ratio_estimate& g = ev.significance->speedup.geomean;
        std::snprintf(head, sizeof head, " (re-measured %.3fx, 95%% interval %.3f-%.3f)", g.ratio,
                      g.low, g.high);
        line += head;
    }
    if (ev.ran && !ev.skipped.empty()) line += " (unchecked: " + ev.skipped + ")";
    return line + counts;
}

}  // namespace

std::string verdict_line(const search_outcome& o, const evidence_report& ev,
                         const std::string& run_name, double wall_s, const std::string& verdict,
                         const std::vector<std::string>& reasons, bool simulated) {
    std::string out = verdict + (simulated ? " (FAKE RUN: simulated numbers)" : "") + ": " +
                      best_line(o, ev, run_name, wall_s);
    for (const std::string& r : reasons) out += "\n  why: " + r;
    return out;
}

namespace {

// "61%" of a fraction, "<1%" for a sliver.
std::string percent(double fraction) {
    if (fraction > 0 && fraction < 0.005) return "<1%";
    char text[16];
    std::snprintf(text, sizeof text, "%.0f%%", fraction * 100);
    return text;
}

// "GPU 0", or "GPUs 0, 1" with each one's share of the search ("GPU 0 61%, GPU 1 35%") added
// to `details`.
std::string gpus_text(const gpu_busy_record& g, std::vector<std::string>& details) {
    if (g.gpus.size() == 1) return "GPU " + std::to_string(g.gpus.front().device);
    std::vector<std::string> indices, shares;
    for (const gpu_busy_totals& t : g.gpus) {
        indices.push_back(std::to_string(t.device));
        shares.push_back(
            "GPU " + std::to_string(t.device) + " " +
            percent(g.search_wall_s > 0 ? t.search_busy_ms / 1000 / g.search_wall_s : 0));
    }
    details.push_back(joined(shares, ", "));
    return "GPUs " + joined(indices, ", ");
}

}  // namespace

std::string gpu_busy_line(const gpu_busy_record& g) {
    if (g.source == "simulated") return "gpu busy: simulated (the fake harness measured nothing)\n";
    int runs = 0, unmeasured = 0;
    double search_ms = 0;
    long long kernels = 0;
    for (const gpu_busy_totals& t : g.gpus) {
        runs += t.harness_runs;
        unmeasured += t.unmeasured_runs;
        search_ms += t.search_busy_ms;
        kernels += t.search_kernels;
    }
    if (g.source == "none" || !g.busy_fraction)
        return "gpu busy: not measured (" +
               (runs == 0 ? std::string("no harness run")
                          : "none of " + grouped(runs) + " harness runs gave a figure") +
               ")\n";
    std::vector<std::string> details;
    const std::string where = gpus_text(g, details);
    char figures[96];
    std::snprintf(figures, sizeof figures, ": %.1f s in %s kernels", search_ms / 1000,
                  grouped(kernels).c_str());
    details.push_back((g.source == "cupti" ? "CUPTI" : g.source) + figures);
    if (unmeasured)
        details.push_back(grouped(unmeasured) + " of " + grouped(runs) +
                          " harness runs gave no figure: a floor");
    char head[96];
    std::snprintf(head, sizeof head, "gpu busy: %s of the search's %.1f s on ",
                  percent(*g.busy_fraction).c_str(), g.search_wall_s);
    return head + where + " (" + joined(details, "; ") + ")\n";
}

std::string timing_condition_lines(const std::vector<attempt_result>& attempts, bool simulated,
                                   const std::string& prefix) {
    std::string timer = timer_line(summarize_timer(attempts));
    std::string gpu = gpu_state_line(summarize_gpu_state(attempts));
    if (simulated) {  // "timer: cupti" and "gpu: SM 1980 MHz" are the fake harness's inventions
        if (!timer.empty()) timer.insert(5, " (simulated)");
        if (!gpu.empty()) gpu.insert(3, " (simulated)");
    }
    return (timer.empty() ? "" : prefix + timer) + (gpu.empty() ? "" : prefix + gpu);
}

}  // namespace cuopt