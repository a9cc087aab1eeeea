#include "orchestrator/gate/gate_html.hpp"

#include <sstream>

#include "common/html_text.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt {

namespace {

const char* k_style =
    R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
.verdict{padding:12px 16px;border-radius:6px;font-weight:600;border:2px solid}
.pass{background:#e8f5e9;border-color:#2e7d32}.fail{background:#fdecea;border-color:#c62828}
.cannot_judge{background:#fff8e1;border-color:#f9a825}
table{border-collapse:collapse;margin-top:8px}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}
th{background:#f6f8fa}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bad{color:#c62828;font-weight:600}.changed{background:#fff8e1}code{font-size:13px})";

// A slowdown cell: the ratio with its interval, red where it is a regression.
std::string slowdown_cell(const std::optional<slowdown_estimate>& s) {
    if (!s) return "<td>-</td>";
    return std::string("<td class=\"num") + (s->regression ? " bad" : "") + "\">" +
           html_escape(describe_slowdown(*s)) + " " + to_string(s->verdict) + "</td>";
}

void latency_table(std::ostringstream& out, const gate_record& r) {
    out << "<h2>Latency (kernel now / accepted; 95% intervals)</h2>\n";
    if (!r.latency) {
        out << "<p>No performance case was timed on both sides.</p>\n";
        return;
    }
    out << "<table><tr><th>case</th><th>accepted</th><th>kernel now</th><th>accepted now</th>"
           "<th>vs accepted figures</th><th>vs accepted now</th><th>drift (accepted now / "
           "figures)</th></tr>\n";
    for (const case_latency& c : r.latency->cases)
        out << "<tr><td>" << html_escape(c.name) << "</td><td class=\"num\">"
            << ms_text(c.accepted_ms) << "</td><td class=\"num\">" << ms_text(c.kernel_ms)
            << "</td><td class=\"num\">" << ms_text(c.accepted_now_ms) << "</td>"
            << slowdown_cell(c.vs_accepted) << slowdown_cell(c.vs_accepted_now)
            << slowdown_cell(c.drift) << "</tr>\n";
    out << "<tr><th>geomean</th><td></td><td></td><td></td>" << slowdown_cell(r.latency->geomean)
        << slowdown_cell(r.latency->geomean_vs_accepted_now)
        << slowdown_cell(r.latency->geomean_drift) << "</tr></table>\n";
}

std::string state_text(const std::optional<gpu_state_summary>& g) {
    if (!g) return "-";
    std::string s =
        g->sm_clock_max_mhz ? "SM up to " + std::to_string(*g->sm_clock_max_mhz) + " MHz; " : "";
    return s + std::to_string(g->throttled.size()) + " of " + std::to_string(g->cases) +
           " cases throttled";
}

void environment_table(std::ostringstream& out, const gate_record& r) {
    out << "<h2>Machine</h2>\n<table><tr><th></th><th>accepted figures</th><th>now</th></tr>\n";
    const device_summary &a = r.recorded.device, &b = r.now.device;
    const std::pair<const char*, std::pair<std::string, std::string>> rows[] = {
        {"GPU", {a.name, b.name}},
        {"UUID", {a.uuid, b.uuid}},
        {"driver", {a.driver_version, b.driver_version}},
        {"NVRTC (toolkit)", {a.nvrtc_version, b.nvrtc_version}},
        {"GPU state", {state_text(r.recorded.gpu_state), state_text(r.now.gpu_state)}}};
    for (const auto& [what, values] : rows) {
        const bool changed = std::string(what) != "GPU state" && !values.first.empty() &&
                             !values.second.empty() && values.first != values.second;
        out << "<tr" << (changed ? " class=\"changed\"" : "") << "><th>" << what << "</th><td>"
            << html_escape(values.first.empty() ? "-" : values.first) << "</td><td>"
            << html_escape(values.second.empty() ? "-" : values.second) << "</td></tr>\n";
    }
    out << "</table>\n";
    if (r.comparison)
        for (const std::string& line : environment_lines(*r.comparison))
            out << "<p>" << html_escape(line) << "</p>\n";
}

// The verdict box: the whole line on a pass, else the outcome, how many findings follow and
// what changed on the machine (so a failure is attributed at a glance).
std::string headline(const gate_record& r) {
    const gate_verdict& v = r.verdict;
    if (v.reasons.empty()) return v.line;
    std::string out = std::string(v.outcome == gate_outcome::fail ? "FAIL" : "CANNOT JUDGE") +
                      ": " + std::to_string(v.reasons.size()) +
                      (v.reasons.size() == 1 ? " finding" : " findings") + ", below";
    if (r.comparison)
        for (const environment_change& c : r.comparison->changes) out += "; " + describe(c);
    return out;
}

void runs_table(std::ostringstream& out, const gate_record& r) {
    out << "<h2>Harness runs</h2>\n<table><tr><th>round</th><th>kernel</th><th>verdict</th>"
           "<th>reason</th></tr>\n";
    for (const kernel_run& k : r.runs)
        out << "<tr><td class=\"num\">" << k.round << "</td><td>" << html_escape(k.role)
            << "</td><td" << (k.result.verdict == verdict::valid ? "" : " class=\"bad\"") << ">"
            << to_string(k.result.verdict) << "</td><td>" << html_escape(k.result.reason)
            << "</td></tr>\n";
    out << "</table>\n";
}

}  // namespace

std::string gate_html(const gate_record& r) {
    std::ostringstream out;
    const char* outcome = k_gate_outcomes.name(r.verdict.outcome);
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        << "<title>gate: " << outcome << "</title><style>" << k_style << "</style></head><body>\n"
        << "<h1>Regression gate</h1>\n"
        << (r.now.device.simulated || r.recorded.device.simulated ? report::fake_run_banner() : "")
        << "<div class=\"verdict " << outcome << "\">" << html_escape(headline(r)) << "</div>\n";
    if (!r.verdict.reasons.empty()) {
        out << "<ul>\n";
        for (const std::string& reason : r.verdict.reasons)
            out << "<li>" << html_escape(reason) << "</li>\n";
        out << "</ul>\n";
    }
    out << "<p>Accepted run <code>" << html_escape(r.run.string()) << "</code>; kernel <code>"
        << html_escape(r.kernel.string()) << "</code>; figures from <code>"
        << html_escape(r.figures_source) << "</code>; " << r.options.runs << " runs; threshold "
        << r.options.threshold * 100 << "%; exit " << r.exit_code << ".</p>\n";
    latency_table(out, r);
    environment_table(out, r);
    runs_table(out, r);
    out << "<p>Data: <code>gate.json</code>. " << html_escape(r.started) << " to "
        << html_escape(r.finished) << ".</p>\n</body></html>\n";
    return out.str();
}

}  // namespace cuopt
