// The report's first half: the verdict, per-case latencies, the charts and every attempt.
#include "orchestrator/artifacts/report_sections.hpp"

#include <map>
#include <sstream>

#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/confinement_record.hpp"

namespace cuopt::report {

using rapidjson::Value;

std::string key_value_rows(const std::vector<std::pair<std::string, std::string>>& rows,
                           bool code) {
    std::string out;
    for (const auto& [key, value] : rows)
        out += "<tr><th>" + html_escape(key) + "</th><td>" + (code ? "<code>" : "") +
               html_escape(value) + (code ? "</code>" : "") + "</td></tr>\n";
    return out;
}

namespace {

std::string class_of(condition_state s) {
    return s == condition_state::met       ? "met"
           : s == condition_state::not_met ? "not-met"
                                           : "not-run";
}

// "5 attempts, 3 valid, 2 rejected (compile_error 1, wrong_output 1); stop: ...; 3.7 s".
std::string counts_line(const report_context& c) {
    const Value& counts = object_or_empty(c.folder.summary, "counts");
    std::string rejected;
    long long total_rejected = 0;
    const Value& by_verdict = object_or_empty(counts, "rejected");
    for (const auto& r : by_verdict.GetObject()) {
        rejected += (rejected.empty() ? "" : ", ") + name_of(r) + " " + text_of(r.value);
        total_rejected += integer_of(r.value).value_or(0);
    }
    std::ostringstream o;
    o << integer_of(counts, "attempts").value_or(0) << " attempts, "
      << integer_of(counts, "valid").value_or(0) << " valid, " << total_rejected << " rejected"
      << (rejected.empty() ? "" : " (" + rejected + ")")
      << "; stop: " << text_of(c.folder.run, "stop_reason") << "; wall time "
      << duration_text(number_of(c.folder.run, "wall_s").value_or(0));
    return o.str();
}

// How the attempts were confined, one line for the verdict's text (runs from before the
// confinement block say nothing).
std::string confinement_text(const report_context& c) {
    const auto r = read_confinement_record(c.folder.run);
    return r ? "<br><span id=\"confinement\">Confinement: " + html_escape(confinement_line(*r)) +
                   "</span>"
             : "";
}

// The warning under the verdict when a kernel ran unconfined or --allow-unconfined was given.
std::string confinement_warning_html(const report_context& c) {
    const auto r = read_confinement_record(c.folder.run);
    const std::string w = r ? confinement_warning(*r) : "";
    return w.empty() ? ""
                     : "<p class=\"note warn\" id=\"confinement-warning\"><strong>Warning: "
                       "unconfined kernels.</strong> " +
                           html_escape(w) + "</p>\n";
}

std::string speedup_figure(const report_context& c) {
    const go_verdict& v = c.verdict;
    std::ostringstream o;
    o << "<div class=\"figure\">";
    if (v.speedup) {
        const auto rounds = integer_of(
            object_or_empty(object_or_empty(c.folder.summary, "evidence"), "significance"), "runs");
        o << "<span class=\"big\">" << fixed(v.speedup->ratio, 3) << "&times;</span>"
          << "<span class=\"sub\">95% interval " << fixed(v.speedup->low, 3) << " &ndash; "
          << fixed(v.speedup->high, 3) << "<br>re-measured over " << rounds.value_or(0)
          << " interleaved rounds</span>";
    } else if (v.search_speedup) {
        o << "<span class=\"big\">" << fixed(*v.search_speedup, 3) << "&times;</span>"
          << "<span class=\"sub\">in the search<br>not re-measured: no interval</span>";
    } else {
        o << "<span class=\"big\">&ndash;</span><span class=\"sub\">no winner</span>";
    }
    return o.str() + "</div>";
}

}  // namespace

std::string verdict_section(const report_context& c) {
    const go_verdict& v = c.verdict;
    const std::string word = v.go ? "GO" : "NO-GO";
    const std::string headline = v.headline.substr(v.headline.find(':') + 2);
    std::ostringstream o;
    o << "<section id=\"verdict\" class=\"verdict " << (v.go ? "go" : "no-go")
      << "\" data-verdict=\"" << (v.go ? "go" : "no-go") << "\">\n<div class=\"verdict-head\">"
      << "<div class=\"verdict-word\">" << word << "</div><div class=\"verdict-text\"><h2>"
      << html_escape(headline) << "</h2><p>"
      << (v.winner.empty() ? "No declared winner." : "Declared winner: " + html_escape(v.winner))
      << "<br>" << html_escape(counts_line(c)) << confinement_text(c) << "</p></div>"
      << speedup_figure(c) << "</div>\n"
      << confinement_warning_html(c) << "<ul class=\"conditions\">\n";
    for (const go_condition& k : v.conditions)
        o << "<li class=\"" << class_of(k.state) << "\"><span class=\"state\">"
          << to_string(k.state) << "</span><span class=\"name\">" << html_escape(k.name)
          << "</span><span class=\"detail\">" << html_escape(k.detail) << "</span></li>\n";
    o << "</ul>\n<p class=\"rule\">The rule: GO only when the declared winner passes the "
         "holdout, is faster than the initial kernel beyond the practical margin with an "
         "equivalent A/A control, is "
         "sanitizer clean and is not below the speed-of-light floor (and, where the manifest "
         "requires an MMA class, its SASS holds it). A condition that was not run "
         "proves nothing and counts against.</p>\n</section>\n";
    return o.str();
}

namespace {

// The entries of `block`'s "cases" by their name.
std::map<std::string, const Value*> cases_by_name(const Value& block) {
    std::map<std::string, const Value*> out;
    for (const Value& v : array_or_empty(block, "cases").GetArray()) out[text_of(v, "name")] = &v;
    return out;
}

const Value& at(const std::map<std::string, const Value*>& m, const std::string& name) {
    static const Value k_empty(rapidjson::kObjectType);
    const auto it = m.find(name);
    return it == m.end() ? k_empty : *it->second;
}

std::string remeasured_cell(const Value& sig_case) {
    const Value& s = object_or_empty(sig_case, "speedup");
    if (!number_of(s, "ratio")) return "<td class=\"num\">-</td>";
    const std::string verdict = text_of(s, "verdict");
    return "<td class=\"num\">" + fixed(number_of(s, "ratio"), 3) +
           "&times; <span class=\"muted\">[" + fixed(number_of(s, "low"), 3) + ", " +
           fixed(number_of(s, "high"), 3) + "]</span> <span class=\"tag " +
           (verdict == "faster" ? "good" : "warn") + "\">" + html_escape(verdict) + "</span></td>";
}

// The A/A control of a case at its margin δ; "-" where there is none (or an older run).
std::string aa_cell(const Value& sig_case) {
    const Value& aa = object_or_empty(sig_case, "aa");
    const std::string cls = text_of(sig_case, "aa_class");
    const auto margin = number_of(sig_case, "margin");
    if (!number_of(aa, "ratio") || cls.empty() || !margin) return "<td class=\"num\">-</td>";
    return "<td class=\"num\">" + fixed(number_of(aa, "ratio"), 4) + " <span class=\"muted\">[" +
           fixed(number_of(aa, "low"), 4) + ", " + fixed(number_of(aa, "high"), 4) + "] &plusmn;" +
           fixed(100 * *margin, 2) + "%</span> <span class=\"tag " +
           (cls == "equivalent" ? "good" : "warn") + "\">" + html_escape(cls) + "</span></td>";
}

std::string latency_row(const Value& k, const Value& sig, const Value& vendor) {
    std::ostringstream o;
    const std::string kind = text_of(k, "kind");
    o << "<tr><td>" << html_escape(text_of(k, "name")) << "</td><td>" << html_escape(kind)
      << "</td><td class=\"num\">" << ms_text(number_of(k, "initial_median_ms"))
      << "</td><td class=\"num\">" << ms_text(number_of(k, "best_median_ms"))
      << "</td><td class=\"num\">" << fixed(number_of(k, "speedup"), 3, "-")
      << (number_of(k, "speedup") ? "&times;" : "") << "</td>"
      << "<td class=\"num\">" << ms_text(number_of(sig, "initial_median_ms")) << "</td>"
      << "<td class=\"num\">" << ms_text(number_of(sig, "winner_median_ms")) << "</td>"
      << remeasured_cell(sig) << aa_cell(sig) << "<td class=\"num\">"
      << ms_text(number_of(vendor, "median_ms")) << "</td><td class=\"num\">"
      << fixed(number_of(vendor, "vendor_over_best"), 3) << "</td></tr>\n";
    return o.str();
}

std::string sol_rows(const Value& evidence) {
    std::ostringstream o;
    for (const Value& s : array_or_empty(evidence, "sol").GetArray()) {
        const auto pct = [](std::optional<double> f) {
            return f ? fixed(100 * *f, 3) + "%" : std::string("-");
        };
        o << "<tr><td>" << html_escape(text_of(s, "name")) << "</td><td class=\"num\">"
          << ms_text(number_of(s, "floor_ms")) << "</td><td>" << html_escape(text_of(s, "bound"))
          << "</td><td class=\"num\">" << pct(number_of(s, "initial_fraction"))
          << "</td><td class=\"num\">" << pct(number_of(s, "best_fraction"))
          << "</td><td class=\"num\">" << fixed(number_of(s, "sol_score"), 3)
          << "</td><td class=\"num\">" << pct(number_of(s, "best_memory_sol")) << "</td></tr>\n";
    }
    return o.str();
}

// "QGMMA.64x8x32.F32.E4M3.E4M3 16, ..." of an object of counts.
std::string counts_of(const Value& counts) {
    std::string out;
    if (!counts.IsObject()) return out;
    for (const auto& m : counts.GetObject())
        if (m.value.IsInt())
            out += (out.empty() ? "" : ", ") + std::string(m.name.GetString()) + " " +
                   std::to_string(m.value.GetInt());
    return out;
}

// The declared winner's instruction audit (the instructions gate), as a small table.
std::string instruction_mix_html(const Value& ev) {
    const Value* audit = nullptr;
    for (const Value& c : array_or_empty(ev, "checked").GetArray())
        if (!text_of(ev, "winner").empty() && text_of(c, "attempt") == text_of(ev, "winner"))
            audit = member(c, "instructions");
    const std::string required = text_of(ev, "requires_mma");
    std::ostringstream o;
    o << "<h3>Instruction mix (the winner's SASS)</h3>\n";
    if (!audit || !audit->IsObject())
        return o.str() + "<p class=\"note\">No instruction audit of the winner recorded.</p>\n";
    if (!bool_of(*audit, "ran").value_or(false))
        return o.str() + "<p class=\"note\">Not run: " + html_escape(text_of(*audit, "reason")) +
               (required.empty() ? ""
                                 : " (the manifest requires an MMA of class " +
                                       html_escape(required) + ": no go without it)") +
               ".</p>\n";
    std::string regs;
    for (const Value& r : array_or_empty(*audit, "clock_registers").GetArray())
        regs += (regs.empty() ? "" : ", ") + std::string(r.IsString() ? r.GetString() : "");
    std::string externs;
    for (const Value& e : array_or_empty(*audit, "externs").GetArray())
        externs += (externs.empty() ? "" : ", ") + std::string(e.IsString() ? e.GetString() : "");
    const auto row = [&o](const char* name, const std::string& value) {
        o << "<tr><th>" << name << "</th><td>" << html_escape(value.empty() ? "none" : value)
          << "</td></tr>\n";
    };
    o << "<table class=\"data\"><tbody>\n";
    row("target", text_of(*audit, "arch") + " (" + text_of(*audit, "tool") + ")");
    row("instructions", text_of(*audit, "total"));
    row("MMA by input class", counts_of(object_or_empty(*audit, "mma")) +
                                  (required.empty() ? "" : " (requires.mma: " + required + ")"));
    row("MMA opcodes", counts_of(object_or_empty(*audit, "mma_opcodes")));
    row("FP64 instructions", text_of(*audit, "fp64"));
    row("atomics and reductions", counts_of(object_or_empty(*audit, "atomic_opcodes")));
    row("clock reads", regs.empty() ? "" : text_of(*audit, "clock_reads") + " (" + regs + ")");
    row("external calls", externs);
    return o.str() + "</tbody></table>\n";
}

// An imported problem's PyTorch rows: eager (the baseline), the user's own kernel when given,
// torch.compile (timed once beside it by the same rules), the winner, and the winner against
// compile; "" for a CUDA baseline.
std::string pytorch_rows(const Value& summary) {
    const Value* compile = member(summary, "pytorch_compile");
    const Value* own = member(summary, "initial_kernel");
    if (!compile) return "";
    std::ostringstream o;
    o << "<h3>PyTorch</h3>\n<p class=\"muted\">The baseline is the problem's own forward, PyTorch "
         "eager; torch.compile was timed once beside it by the same rules";
    if (const std::string why = text_of(*compile, "reason"); !why.empty())
        o << " (" << html_escape(text_of(*compile, "verdict")) << ": " << html_escape(why) << ")";
    if (own)
        o << ". Yours: the initial kernel " << html_escape(text_of(*own, "label"))
          << ", the search's starting point, "
          << fixed(number_of(*own, "speedup_vs_initial").value_or(0), 3) << "&times; over eager";
    o << ".</p>\n<table class=\"data\"><thead><tr><th>case</th><th>eager</th>"
      << (own ? "<th>yours</th>" : "")
      << "<th>torch.compile</th><th>winner</th><th>compile / winner</th></tr></thead><tbody>\n";
    const Value& medians = object_or_empty(*compile, "median_ms");
    for (const Value& k : array_or_empty(summary, "cases").GetArray()) {
        const std::string name = text_of(k, "name");
        const auto compiled = number_of(medians, name.c_str());
        const auto winner = number_of(k, "best_median_ms");
        if (!number_of(k, "initial_median_ms")) continue;  // a correctness case
        o << "<tr><td>" << html_escape(name) << "</td><td class=\"num\">"
          << ms_text(number_of(k, "initial_median_ms")) << "</td>";
        if (own)
            o << "<td class=\"num\">"
              << ms_text(number_of(object_or_empty(*own, "median_ms"), name.c_str())) << "</td>";
        o << "<td class=\"num\">" << ms_text(compiled) << "</td><td class=\"num\">"
          << ms_text(winner) << "</td><td class=\"num\">"
          << (compiled && winner && *winner > 0 ? fixed(*compiled / *winner, 3) + "&times;" : "-")
          << "</td></tr>\n";
    }
    return o.str() + "</tbody></table>\n";
}

// `export --verify`'s figures: the exported op timed through PyTorch beside the run's medians;
// "" when it did not run.
std::string export_rows(const Value& summary) {
    const Value* e = member(summary, "export");
    if (!e) return "";
    std::ostringstream o;
    const bool built = e->HasMember("built") && (*e)["built"].IsBool() && (*e)["built"].GetBool();
    const bool passed = e->HasMember("test_passed") && (*e)["test_passed"].IsBool() &&
                        (*e)["test_passed"].GetBool();
    o << "<h3>Exported op, measured in place</h3>\n<p class=\"muted\">"
      << html_escape(text_of(*e, "op")) << " from " << html_escape(text_of(*e, "package"))
      << ", PyTorch " << html_escape(text_of(*e, "torch")) << " on "
      << html_escape(text_of(*e, "gpu")) << ": built " << (built ? "yes" : "no") << ", its test "
      << (passed ? "passed" : "failed");
    if (const std::string why = text_of(*e, "failure"); !why.empty())
        o << " (" << html_escape(why) << ")";
    o << ". Timed as the run timed it (the L2 cache flushed before each call, CUDA events "
         "around the call) against the run's median: within 10% or why not; its kernel is the "
         "kernel alone by the run's clock (CUPTI), back to back the op in a loop, warm cache; "
         "neither is compared.</p>\n<table class=\"data\"><thead><tr>"
         "<th>case</th><th>run</th><th>op</th><th>op / run</th><th>its kernel</th>"
         "<th>torch.compile</th><th>back to back</th><th></th></tr></thead><tbody>\n";
    for (const Value& k : array_or_empty(*e, "cases").GetArray()) {
        const bool within = k.HasMember("within") && k["within"].IsBool() && k["within"].GetBool();
        o << "<tr><td>" << html_escape(text_of(k, "name")) << "</td><td class=\"num\">"
          << ms_text(number_of(k, "run_median_ms")) << "</td><td class=\"num\">"
          << ms_text(number_of(k, "op_median_ms")) << "</td><td class=\"num\">"
          << fixed(number_of(k, "ratio"), 3) << "&times;</td><td class=\"num\">"
          << ms_text(number_of(k, "kernel_median_ms")) << "</td><td class=\"num\">"
          << ms_text(number_of(k, "compiled_median_ms")) << "</td><td class=\"num\">"
          << ms_text(number_of(k, "back_to_back_median_ms")) << "</td><td>"
          << (within ? std::string("within 10%") : html_escape(text_of(k, "why")))
          << "</td></tr>\n";
    }
    return o.str() + "</tbody></table>\n";
}

}  // namespace

std::string latency_section(const report_context& c) {
    const Value& ev = object_or_empty(c.folder.summary, "evidence");
    const auto sig = cases_by_name(object_or_empty(ev, "significance"));
    const auto vendor = cases_by_name(object_or_empty(ev, "vendor"));
    const Value& timer = object_or_empty(c.folder.run, "timer");
    std::ostringstream o;
    o << "<section id=\"latency\"><h2>Latency per case</h2>\n<p class=\"muted\">Medians. Search: "
         "the attempt as timed in the search. Re-measured: interleaved rounds of initial, winner "
         "and winner again, speedup with its 95% bootstrap interval, faster only beyond the "
         "margin &delta; (3x the spread between processes, at least 0.5%); A/A: the winner "
         "against itself, equivalent when its interval lies inside 1&plusmn;&delta;. Vendor: the "
         "library "
         "baseline, timed once before the search; vendor / winner above 1 means the winner beats "
         "it. Clock: "
      << html_escape(text_of(timer, "name").empty() ? "not recorded" : text_of(timer, "name"))
      << ".</p>\n<div class=\"scroll-x\"><table class=\"data\"><thead><tr><th>case</th>"
         "<th>kind</th><th>initial</th>"
         "<th>winner</th><th>speedup</th><th>initial (re-measured)</th><th>winner "
         "(re-measured)</th><th>speedup [95% interval]</th><th>A/A &plusmn; "
         "margin</th><th>vendor</th><th>vendor / "
         "winner</th></tr></thead><tbody>\n";
    for (const Value& k : array_or_empty(c.folder.summary, "cases").GetArray())
        o << latency_row(k, at(sig, text_of(k, "name")), at(vendor, text_of(k, "name")));
    o << "</tbody></table></div>\n"
      << pytorch_rows(c.folder.summary) << export_rows(c.folder.summary)
      << "<h3>Speed of light</h3>\n";
    const std::string sol = sol_rows(ev);
    if (sol.empty())
        o << "<p class=\"note\">No speed-of-light floor recorded (the evidence stage did not "
             "run, or no case has one).</p>\n";
    else
        o << "<table class=\"data\"><thead><tr><th>case</th><th>floor</th><th>bound</th>"
             "<th>initial, % of SOL</th><th>winner, % of SOL</th><th>score (0.5 initial, 1 "
             "SOL)</th><th title=\"every input read and every output written once, at the "
             "measured DRAM bandwidth, with no L2 credit\">winner, % of memory "
             "SOL</th></tr></thead><tbody>\n"
          << sol << "</tbody></table>\n";
    return o.str() + instruction_mix_html(ev) + "</section>\n";
}

namespace {

std::string chart(const run_folder& f, const std::string& stem, const std::string& caption) {
    if (const auto svg = f.text_file(stem + ".svg"))
        return "<figure><img alt=\"" + html_escape(caption) + "\" src=\"" +
               data_uri("image/svg+xml", *svg) + "\"><figcaption>" + html_escape(caption) +
               "</figcaption></figure>\n";
    if (const auto png = f.text_file(stem + ".png"))
        return "<figure><img alt=\"" + html_escape(caption) + "\" src=\"" +
               data_uri("image/png", *png) + "\"><figcaption>" + html_escape(caption) +
               "</figcaption></figure>\n";
    return "<p class=\"note\">" + html_escape(stem) + ".svg is not in the run folder.</p>\n";
}

}  // namespace

std::string charts_section(const report_context& c) {
    return "<section id=\"charts\"><h2>Charts</h2>\n<div class=\"charts\">" +
           chart(c.folder, "heatmap",
                 "Speedup over the initial kernel per attempt (rows) and performance case "
                 "(columns); rejected attempts grey with their reason class") +
           chart(c.folder, "best-so-far",
                 "Best so far: each valid attempt's geomean speedup against attempt number; the "
                 "declared winner ringed") +
           "</div></section>\n";
}

}  // namespace cuopt::report
