#include "orchestrator/artifacts/console_report.hpp"

#include <cstdio>

namespace cuopt {

std::string format_ms(std::optional<double> ms) {
    if (!ms) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f ms", *ms);
    return buf;
}

std::string progress_line(const attempt_result& r, const search_outcome& o) {
    char head[64];
    std::snprintf(head, sizeof head, "[iter %d.%d] %-8s ", r.iteration, r.attempt,
                  to_string(r.cand.proposer));
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
    if (r.verdict != verdict::valid && !r.reason.empty()) line += ": " + r.reason.substr(0, 160);
    return line;
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
