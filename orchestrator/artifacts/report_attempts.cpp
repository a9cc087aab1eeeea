// The report's attempt table: every attempt of history.json, rejected ones as visible as valid
// ones, sortable by any column and filterable by text and verdict (report_assets' script).
#include <set>
#include <sstream>

#include "common/html_text.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt::report {

using rapidjson::Value;

namespace {

// A numeric cell: the text shown and the number it sorts by ("" sorts last).
std::string number_cell(std::optional<double> x, const std::string& shown) {
    return "<td class=\"num\" data-sort=\"" + (x ? fixed(*x, 9) : std::string()) + "\">" + shown +
           "</td>";
}

std::string label_cell(const Value& a, bool winner) {
    std::string tags;
    if (winner) tags += " <span class=\"tag winner\">winner</span>";
    if (bool_of(a, "became_best").value_or(false)) tags += " <span class=\"tag\">new best</span>";
    if (integer_of(a, "repair_of")) tags += " <span class=\"tag\">repair</span>";
    return "<td title=\"" + html_escape(text_of(a, "rationale")) + "\">" +
           html_escape(text_of(a, "label")) + tags + "<div class=\"muted small\">" +
           html_escape(text_of(a, "proposer")) + "</div></td>";
}

std::string attempt_row(const Value& a, const Value* winner) {
    const std::string verdict = text_of(a, "verdict");
    const bool valid = verdict == "valid";
    const Value& compile = object_or_empty(a, "compile");
    const auto speedup = number_of(a, "speedup_vs_initial");
    const auto compile_ms = number_of(compile, "wall_ms");
    const auto registers = number_of(compile, "registers");
    const auto spills = number_of(compile, "spill_store_bytes");
    std::ostringstream o;
    o << "<tr class=\"" << (valid ? "valid" : "rejected") << (&a == winner ? " winner" : "")
      << "\" data-verdict=\"" << html_escape(verdict) << "\">"
      << number_cell(number_of(a, "iteration"), text_of(a, "iteration"))
      << number_cell(number_of(a, "attempt"), text_of(a, "attempt")) << label_cell(a, &a == winner)
      << "<td><span class=\"badge " << (valid ? "good" : "bad") << "\">" << html_escape(verdict)
      << "</span></td><td class=\"reason\">" << html_escape(text_of(a, "reason")) << "</td>"
      << number_cell(speedup, speedup ? fixed(*speedup, 3) + "&times;" : "-")
      << number_cell(compile_ms,
                     fixed(compile_ms, 1) + (bool_of(compile, "cache_hit").value_or(false)
                                                 ? " <span class=\"muted small\">cached</span>"
                                                 : ""))
      << number_cell(registers, fixed(registers, 0))
      << number_cell(spills, spills ? fixed(*spills, 0) + " B" : "-") << "</tr>\n";
    return o.str();
}

std::string filter_controls(const Value& attempts) {
    std::set<std::string> verdicts;
    for (const Value& a : attempts.GetArray()) verdicts.insert(text_of(a, "verdict"));
    std::ostringstream o;
    o << "<div class=\"controls\"><input id=\"attempt-filter\" type=\"search\" "
         "placeholder=\"Filter by any text: label, reason, verdict...\" aria-label=\"filter "
         "attempts\"><select id=\"attempt-verdict\" aria-label=\"verdict\"><option "
         "value=\"all\">every verdict</option><option value=\"valid\">valid</option><option "
         "value=\"rejected\">rejected</option>";
    for (const std::string& v : verdicts)
        if (v != "valid")
            o << "<option value=\"" << html_escape(v) << "\">" << html_escape(v) << "</option>";
    o << "</select><span id=\"attempt-count\" class=\"muted\"></span></div>\n";
    return o.str();
}

}  // namespace

std::string attempts_section(const report_context& c) {
    const Value& attempts = array_or_empty(c.folder.history, "attempts");
    std::ostringstream o;
    o << "<section id=\"attempts-section\"><h2>Every attempt</h2>\n<p class=\"muted\">"
      << attempts.Size()
      << " attempts in the order they ran; click a column to sort, type to filter. Speedup: the "
         "geomean over performance cases against the initial kernel. Compile: NVRTC's wall time; "
         "spills: bytes stored to local memory.</p>\n"
      << filter_controls(attempts)
      << "<div class=\"scroll\"><table id=\"attempts\" class=\"data sortable\"><thead><tr>"
         "<th data-type=\"num\">iteration</th><th data-type=\"num\">attempt</th><th>label</th>"
         "<th>verdict</th><th>reason</th><th data-type=\"num\">speedup</th><th "
         "data-type=\"num\">compile ms</th><th data-type=\"num\">registers</th><th "
         "data-type=\"num\">spills</th></tr></thead><tbody>\n";
    for (const Value& a : attempts.GetArray()) o << attempt_row(a, c.winner_attempt);
    o << "</tbody></table></div></section>\n";
    return o.str();
}

}  // namespace cuopt::report
