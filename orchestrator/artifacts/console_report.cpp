#include "orchestrator/artifacts/console_report.hpp"

#include <cstdio>
#include <map>

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
    if (r.verdict != verdict::valid && !r.reason.empty())
        line += ":\n    " + wrap_text(r.reason, 96, "    ", 600);
    return line;
}

std::string verdict_line(const search_outcome& o, const evidence_report& ev,
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
    std::snprintf(head, sizeof head, " (iteration %d.%d), %.2fx geomean over the initial kernel",
                  b.iteration, b.attempt, b.speedup_vs_initial.value_or(1.0));
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

std::string closing_table(const search_outcome& o, const manifest& m,
                          const std::map<std::string, double>& vendor_ms) {
    std::string t = "case                          initial        best           speedup";
    t += vendor_ms.empty() ? "\n" : "   vendor         vs vendor\n";
    for (const manifest_case& mc : m.cases) {
        const auto a = o.median_ms(o.initial, mc.name), b = o.median_ms(o.best, mc.name);
        char row[200];
        std::snprintf(row, sizeof row, "%-29s %-14s %-14s %-9s", mc.name.c_str(),
                      format_ms(a).c_str(), format_ms(b).c_str(),
                      a && b ? (std::to_string(*a / *b).substr(0, 5) + "x").c_str() : "-");
        t += row;
        if (const auto v = vendor_ms.find(mc.name); v != vendor_ms.end()) {
            std::snprintf(row, sizeof row, "%-14s %s", format_ms(v->second).c_str(),
                          b ? (std::to_string(v->second / *b).substr(0, 5) + "x").c_str() : "-");
            t += row;
        }
        while (!t.empty() && t.back() == ' ') t.pop_back();
        t += "\n";
    }
    return t;
}

}  // namespace cuopt
