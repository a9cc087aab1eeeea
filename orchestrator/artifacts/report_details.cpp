// The report's source diffs (the winner against the initial kernel and against its parent) and
// its environment: tool, device, clock, GPU state, settings and hashes.
#include <cstdio>
#include <map>
#include <sstream>

#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/line_diff.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt::report {

using rapidjson::Value;

namespace {

// "iteration 1, attempt 0", as the console names an attempt ("1.0" would read as a number).
std::string attempt_words(const Value& attempt) {
    return "iteration " + text_of(attempt, "iteration") + ", attempt " +
           text_of(attempt, "attempt");
}

// The -D defines an attempt was compiled with, as attempt_evaluator::make_request passes them:
// its tunables' values, and its own defines (which win over a tunable of the same name).
std::map<std::string, std::string> compiled_defines(const Value& attempt) {
    std::map<std::string, std::string> out;
    const Value& candidate = object_or_empty(attempt, "candidate");
    for (const char* key : {"tunables", "defines"}) {
        const Value& values = object_or_empty(candidate, key);
        for (const auto& m : values.GetObject()) out[name_of(m)] = text_of(m.value);
    }
    return out;
}

// "-DBLOCK_X: 16 -> 32" per define (a tunable's value or the candidate's own) that differs, then
// the compile options when they differ.
std::vector<std::string> setting_changes(const Value& from, const Value& to) {
    std::vector<std::string> out;
    const auto a = compiled_defines(from), b = compiled_defines(to);
    for (const auto& [name, now] : b) {
        const auto before = a.find(name);
        if (before == a.end() || before->second != now)
            out.push_back("-D" + name + ": " + (before == a.end() ? "(unset)" : before->second) +
                          " -> " + now);
    }
    for (const auto& [name, before] : a)
        if (!b.count(name)) out.push_back("-D" + name + ": " + before + " -> (unset)");
    const auto options = [](const Value& attempt) {
        std::string text;
        for (const Value& o :
             array_or_empty(object_or_empty(attempt, "candidate"), "compile_options").GetArray())
            text += (text.empty() ? "" : " ") + text_of(o);
        return text.empty() ? std::string("(none)") : text;
    };
    if (options(from) != options(to))
        out.push_back("compile options: " + options(from) + " -> " + options(to));
    return out;
}

std::string hunk_rows(const std::vector<diff_hunk>& hunks) {
    std::ostringstream o;
    for (const diff_hunk& h : hunks) {
        o << "<tr class=\"hunk\"><td class=\"ln\"></td><td class=\"ln\"></td><td>@@ -"
          << h.before_start << "," << h.before_count << " +" << h.after_start << ","
          << h.after_count << " @@</td></tr>\n";
        for (const diff_line& l : h.lines) {
            const char* cls = l.kind == diff_kind::same    ? "ctx"
                              : l.kind == diff_kind::added ? "add"
                                                           : "del";
            const char* mark = l.kind == diff_kind::same    ? " "
                               : l.kind == diff_kind::added ? "+"
                                                            : "-";
            o << "<tr class=\"" << cls << "\"><td class=\"ln\">"
              << (l.before_line ? std::to_string(l.before_line) : "") << "</td><td class=\"ln\">"
              << (l.after_line ? std::to_string(l.after_line) : "") << "</td><td class=\"code\">"
              << mark << html_escape(l.text) << "</td></tr>\n";
        }
    }
    return o.str();
}

std::string diff_block(const run_folder& f, const Value& from, const std::string& what,
                       const Value& to) {
    const auto source = [&f](const Value& a) {
        return f.text_file(text_of(object_or_empty(a, "candidate"), "source_file"));
    };
    const auto before = source(from), after = source(to);
    std::ostringstream o;
    o << "<h3>Against " << html_escape(what) << " <span class=\"muted\">("
      << html_escape(text_of(from, "label")) << ", " << attempt_words(from) << ")</span></h3>\n";
    if (!before || !after)
        return o.str() +
               "<p class=\"note\">A kernel.cu of these attempts is missing from the run "
               "folder.</p>\n";
    const std::vector<diff_line> lines = diff_lines(*before, *after);
    int added = 0, removed = 0;
    for (const diff_line& l : lines) {
        added += l.kind == diff_kind::added;
        removed += l.kind == diff_kind::removed;
    }
    const std::vector<std::string> settings = setting_changes(from, to);
    std::string shown;  // the settings that differ, each as code
    for (const std::string& s : settings)
        shown += (shown.empty() ? "" : ", ") + ("<code>" + html_escape(s) + "</code>");
    o << "<p><span class=\"tag good\">+" << added << "</span> <span class=\"tag bad\">&minus;"
      << removed << "</span> source lines";
    if (!shown.empty()) o << "; settings: " << shown;
    o << "</p>\n";
    if (added + removed == 0)
        return o.str() + "<p class=\"note\">The sources are identical; " +
               (shown.empty() ? std::string("so are the settings (defines, NVRTC options).")
                              : "the kernels differ only in these settings: " + shown + ".") +
               "</p>\n";
    return o.str() + "<div class=\"scroll\"><table class=\"diff\"><tbody>\n" +
           hunk_rows(diff_hunks(lines, 3)) + "</tbody></table></div>\n";
}

}  // namespace

std::string diff_section(const report_context& c) {
    std::ostringstream o;
    o << "<section id=\"diff\"><h2>The winner's source</h2>\n";
    if (!c.winner_attempt || !c.initial_attempt)
        return o.str() +
               "<p class=\"note\">No declared winner: nothing to compare.</p></section>\n";
    if (c.winner_attempt == c.initial_attempt)
        return o.str() +
               "<p class=\"note\">The winner is the initial kernel: no diff.</p></section>\n";
    o << "<p class=\"muted\">" << html_escape(text_of(*c.winner_attempt, "label")) << " ("
      << attempt_words(*c.winner_attempt)
      << "), as the harness compiled it (defines are passed as options, "
      << "never added to the source).</p>\n"
      << diff_block(c.folder, *c.initial_attempt, "the initial kernel", *c.winner_attempt);
    if (!c.parent_attempt || c.parent_attempt == c.initial_attempt)
        o << "<p class=\"note\">Its parent is the initial kernel (or none was recorded): the diff "
             "above.</p>\n";
    else
        o << diff_block(c.folder, *c.parent_attempt, "its parent", *c.winner_attempt);
    return o.str() + "</section>\n";
}

namespace {

// A scalar as a reader wants it: "yes"/"no", 6 significant digits, "-" for null or "".
std::string display_text(const Value& v) {
    if (v.IsBool()) return v.GetBool() ? "yes" : "no";
    if (v.IsDouble()) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", v.GetDouble());
        return text;
    }
    const std::string text = text_of(v);
    return text.empty() ? "-" : text;
}

// Every scalar member of an object (object_or_empty's), in order ("name", "arch", ...); nested
// ones left out.
std::vector<std::pair<std::string, std::string>> scalars(const Value& v) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& m : v.GetObject())
        if (!m.value.IsObject() && !m.value.IsArray())
            out.emplace_back(m.name.GetString(), display_text(m.value));
    return out;
}

// Many short settings side by side.
std::string settings_grid(const Value& settings) {
    std::string out =
        "<div class=\"card wide\"><h3>Settings of record</h3><div class=\"kv-grid\">\n";
    for (const auto& [key, value] : scalars(settings))
        out += "<div><span class=\"k\">" + html_escape(key) + "</span><span class=\"v\">" +
               html_escape(value) + "</span></div>\n";
    return out + "</div></div>\n";
}

std::string card(const std::string& title, const std::string& rows) {
    return "<div class=\"card\"><h3>" + html_escape(title) + "</h3><table class=\"kv\"><tbody>\n" +
           (rows.empty() ? "<tr><td class=\"muted\">not recorded</td></tr>" : rows) +
           "</tbody></table></div>\n";
}

// `g`: an object (object_or_empty's).
std::string gpu_state_rows(const Value& g) {
    if (g.ObjectEmpty()) return "";
    const auto range = [&g](const char* lo, const char* hi, const char* unit) {
        const std::string a = fixed(number_of(g, lo), 0), b = fixed(number_of(g, hi), 0);
        return (a == b ? a : a + " - " + b) + unit;
    };
    std::string reasons;
    for (const Value& r : array_or_empty(g, "throttle_reasons").GetArray())
        reasons += (reasons.empty() ? "" : ", ") + text_of(r);
    return key_value_rows(
        {{"source", text_of(g, "source").empty() ? text_of(g, "note") : text_of(g, "source")},
         {"cases read", text_of(g, "cases")},
         {"SM clock", range("sm_clock_min_mhz", "sm_clock_max_mhz", " MHz")},
         {"memory clock", range("mem_clock_min_mhz", "mem_clock_max_mhz", " MHz")},
         {"max temperature", fixed(number_of(g, "max_temperature_c"), 0) + " C"},
         {"max power", fixed(number_of(g, "max_power_w"), 1) + " W of " +
                           fixed(number_of(g, "power_limit_w"), 0) + " W"},
         {"throttled cases", text_of(g, "throttled_cases")},
         {"throttle reasons", reasons.empty() ? "none" : reasons}});
}

// "no", or how many times the run was resumed (optimize --resume), the last one, and the attempts
// that were in flight and evaluated again.
std::string resumes_text(const Value& run) {
    const Value& resumes = array_or_empty(run, "resumes");
    if (resumes.Empty()) return "no";
    std::size_t in_flight = 0;
    for (const Value& r : resumes.GetArray()) in_flight += array_or_empty(r, "in_flight").Size();
    return std::to_string(resumes.Size()) + (resumes.Size() == 1 ? " time" : " times") +
           " (the last " + text_of(resumes[resumes.Size() - 1], "resumed") + "; " +
           std::to_string(in_flight) + " attempt(s) in flight evaluated again)";
}

}  // namespace

std::string environment_section(const report_context& c) {
    const Value& run = c.folder.run;
    const Value& tool = object_or_empty(run, "tool");
    const Value& device = object_or_empty(run, "device");
    std::string command;
    for (const Value& w : array_or_empty(run, "command_line").GetArray())
        command += (command.empty() ? "" : " ") + text_of(w);
    std::vector<std::pair<std::string, std::string>> hashes,
        peaks = scalars(object_or_empty(device, "peak_tflops"));
    const Value& sha256 = object_or_empty(run, "sha256");
    for (const auto& m : sha256.GetObject()) hashes.emplace_back(name_of(m), text_of(m.value));
    const std::string run_rows = key_value_rows(
        {{"tool", text_of(tool, "name") + " " + text_of(tool, "version")},
         {"commit", text_of(tool, "commit")},
         {"started", text_of(run, "started")},
         {"finished", text_of(run, "finished")},
         {"resumed", resumes_text(run)},
         {"wall time", duration_text(number_of(run, "wall_s").value_or(0))},
         {"inside the harness", duration_text(number_of(run, "harness_wall_s").value_or(0))}});
    std::ostringstream o;
    o << "<section id=\"environment\"><h2>Environment and hashes</h2>\n<div class=\"cards\">"
      << card("Run", run_rows) << card("Device", key_value_rows(scalars(device)))
      << card(c.simulated ? "Measured bandwidth and peaks (TFLOPS, simulated)"
                          : "Measured bandwidth and peaks (TFLOPS)",
              key_value_rows(scalars(object_or_empty(device, "measured"))) + key_value_rows(peaks))
      << card(c.simulated ? "Clock (simulated)" : "Clock",
              key_value_rows(scalars(object_or_empty(run, "timer"))))
      << card(c.simulated ? "GPU state over the search (simulated)" : "GPU state over the search",
              gpu_state_rows(object_or_empty(run, "gpu_state")))
      << settings_grid(object_or_empty(run, "settings"))
      << "</div>\n<h3>Command line</h3><pre class=\"code\">" << html_escape(command) << "</pre>\n"
      << "<h3>sha256</h3><table class=\"kv hashes\"><tbody>\n"
      << key_value_rows(hashes, true) << "</tbody></table></section>\n";
    return o.str();
}

}  // namespace cuopt::report
