// The closing table: per case the initial kernel's (or PyTorch eager's) median, the best's and
// the speedup, with the user's kernel, torch.compile and the vendor library's columns beside.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "orchestrator/artifacts/console_report.hpp"

namespace cuopt {

namespace {

// Two GPUs' figures for one case that a reader should see apart: more than 2% apart (GPUs of
// one model differ by about that much, run to run).
bool differ(double a, double b) {
    return std::fabs(a - b) > 0.02 * std::max(std::fabs(a), std::fabs(b));
}

// The GPUs whose vendor medians get a column: every one that ran the vendor where two of them
// differ (a case apart, or a figure one has and another lacks), else the first alone.
std::vector<const device_reference*> vendor_columns(const std::vector<device_reference>& devices) {
    std::vector<const device_reference*> ran;
    for (const device_reference& d : devices)
        if (d.vendor.ran) ran.push_back(&d);
    if (ran.empty()) return ran;
    const auto& first = ran.front()->vendor.median_ms;
    for (const device_reference* d : ran) {
        const auto& other = d->vendor.median_ms;
        bool apart = other.size() != first.size();
        for (const auto& [name, ms] : first)
            if (const auto it = other.find(name); it == other.end() || differ(ms, it->second))
                apart = true;
        if (apart) return ran;
    }
    if (first.empty()) return {};
    return {ran.front()};
}

// The column that "vs vendor" reads: the GPU that measured the best, else the first column.
std::size_t vendor_column_of_best(const std::vector<const device_reference*>& columns,
                                  const search_outcome& o) {
    for (std::size_t i = 0; o.best && i < columns.size(); ++i)
        if (columns[i]->index == o.history[*o.best].device) return i;
    return 0;
}

// A case's vendor columns and "vs vendor" (`best_ms`: the best's median); "" where no column
// has the case.
std::string vendor_cells(const std::vector<const device_reference*>& columns, std::size_t against,
                         const std::string& name, std::optional<double> best_ms) {
    std::string out;
    bool any = false;
    std::optional<double> versus;
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const auto& medians = columns[i]->vendor.median_ms;
        const auto v = medians.find(name);
        const std::optional<double> ms =
            v == medians.end() ? std::nullopt : std::optional<double>(v->second);
        any |= ms.has_value();
        if (i == against) versus = ms;
        char cell[32];
        std::snprintf(cell, sizeof cell, "%-14s ", format_ms(ms).c_str());
        out += cell;
    }
    if (!any) return "";
    return out + (versus && best_ms ? std::to_string(*versus / *best_ms).substr(0, 5) + "x" : "-");
}

// An imported problem's columns before the vendor's: the user's own kernel (when given beside
// PyTorch eager) and torch.compile with the best against it; "" for a CUDA baseline.
struct pytorch_columns {
    std::optional<std::size_t> own;  // the user's kernel's attempt
    const attempt_result* compile = nullptr;

    std::string head_before_best() const { return own ? "yours          " : ""; }
    std::string head_after_speedup() const {
        return compile ? "     compile        vs compile" : "";
    }
    std::string before_best(const search_outcome& o, const std::string& name) const {
        return own ? cell(o.median_ms(own, name), 15) : "";
    }
    std::string after_speedup(const std::string& name, std::optional<double> best_ms) const {
        if (!compile) return "";
        std::optional<double> ms;
        for (const case_evaluation& ce : compile->cases)
            if (ce.name == name) ms = ce.median_ms;
        return cell(ms, 15) + cell_text(ms && best_ms ? ratio_text(*ms / *best_ms) : "-", 11);
    }
    static std::string ratio_text(double r) { return std::to_string(r).substr(0, 5) + "x"; }
    static std::string cell_text(const std::string& text, int width) {
        return text + std::string(text.size() < static_cast<std::size_t>(width)
                                      ? static_cast<std::size_t>(width) - text.size()
                                      : 1,
                                  ' ');
    }
    static std::string cell(std::optional<double> ms, int width) {
        return cell_text(format_ms(ms), width);
    }
};

// The best's fraction of each performance case's speed-of-light floor (floor / median: 100%
// would be the floor itself), where the floor is known, and of its memory SOL (every byte
// moved once at the measured bandwidth) where the GPU that measured the best has one; "" where
// no floor is known.
std::string speed_of_light_line(const search_outcome& o, const manifest& m,
                                const std::vector<device_reference>& devices) {
    if (!o.best) return "";
    const auto device = std::find_if(devices.begin(), devices.end(), [&](const auto& d) {
        return d.index == o.history[*o.best].device;
    });
    std::string cases;
    for (const manifest_case& mc : m.cases)
        for (const case_evaluation& ce : o.history[*o.best].cases)
            if (ce.name == mc.name && ce.floor_ms && ce.median_ms && *ce.median_ms > 0) {
                char text[200];
                std::snprintf(text, sizeof text, "%s%s %.0f%%", cases.empty() ? "" : ", ",
                              mc.name.c_str(), 100 * *ce.floor_ms / *ce.median_ms);
                cases += text;
                const auto f = device == devices.end() ? nullptr : &device->floors;
                if (f && f->count(mc.name) && f->at(mc.name).traffic_ms > 0) {
                    std::snprintf(text, sizeof text, " (memory SOL %.0f%%)",
                                  100 * f->at(mc.name).traffic_ms / *ce.median_ms);
                    cases += text;
                }
            }
    if (cases.empty()) return "";
    return "speed of light (the best against each case's floor: its bytes over the measured DRAM "
           "bandwidth, or its flops over the peak, whichever is longer; memory SOL: every input "
           "read and output written once at that bandwidth, no L2 credit): " +
           cases + "\n";
}

}  // namespace

std::string closing_table(const search_outcome& o, const manifest& m,
                          const std::vector<device_reference>& devices, bool simulated,
                          const attempt_result* pytorch_compile) {
    const std::vector<const device_reference*> columns = vendor_columns(devices);
    const std::size_t against = vendor_column_of_best(columns, o);
    const bool eager = o.initial && !o.history[*o.initial].cand.pytorch_mode.empty();
    const pytorch_columns py{o.own_kernel(), pytorch_compile};
    std::string t = std::string("case                          ") +
                    (eager ? "eager          " : "initial        ") + py.head_before_best() +
                    "best           speedup" + py.head_after_speedup();
    if (columns.size() == 1) t += "   vendor         vs vendor";
    if (columns.size() > 1) {
        t += "  ";
        for (const device_reference* d : columns) {
            char head[32];
            std::snprintf(head, sizeof head, "%-15s",
                          ("vendor GPU " + std::to_string(d->index)).c_str());
            t += head;
        }
        t += "vs vendor";
    }
    t += "\n";
    for (const manifest_case& mc : m.cases) {
        const auto a = o.median_ms(o.initial, mc.name), b = o.median_ms(o.best, mc.name);
        char row[200];
        std::snprintf(row, sizeof row, "%-29s %-14s ", mc.name.c_str(), format_ms(a).c_str());
        t += row + py.before_best(o, mc.name);
        std::snprintf(row, sizeof row, "%-14s %-9s", format_ms(b).c_str(),
                      a && b ? pytorch_columns::ratio_text(*a / *b).c_str() : "-");
        t += row;
        if (py.compile) t += "   " + py.after_speedup(mc.name, b);
        t += vendor_cells(columns, against, mc.name, b);
        while (!t.empty() && t.back() == ' ') t.pop_back();
        t += "\n";
    }
    if (columns.size() > 1 && o.best)
        t += "vs vendor: against the vendor on GPU " + std::to_string(columns[against]->index) +
             (columns[against]->index == o.history[*o.best].device
                  ? ", the GPU that measured the best"
                  : "") +
             "\n";
    return t + speed_of_light_line(o, m, devices) + timing_condition_lines(o.history, simulated);
}

}  // namespace cuopt
