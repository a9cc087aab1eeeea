#include "orchestrator/artifacts/report_html.hpp"

#include <sstream>

#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;
using report::report_context;

report_economics recorded_economics(const Value& run_json, const report_economics& flags) {
    const Value& s = object_or_empty(run_json, "settings");
    report_economics e;
    e.invocations_per_month = flags.invocations_per_month ? flags.invocations_per_month
                                                          : number_of(s, "invocations_per_month");
    e.gpu_hour_cost_usd =
        flags.gpu_hour_cost_usd ? flags.gpu_hour_cost_usd : number_of(s, "gpu_hour_cost_usd");
    e.engineer_hours = flags.engineer_hours ? flags.engineer_hours : number_of(s, "engineer_hours");
    e.engineer_rate_usd =
        flags.engineer_rate_usd ? flags.engineer_rate_usd : number_of(s, "engineer_rate_usd");
    return e;
}

namespace {

const Value* find_attempt(const Value& history, long long iteration, long long attempt) {
    for (const Value& a : array_or_empty(history, "attempts").GetArray())
        if (integer_of(a, "iteration") == iteration && integer_of(a, "attempt") == attempt)
            return &a;
    return nullptr;
}

// The best the proposer built on: in the parent iteration, the last attempt that became the best
// (the proposer saw the best so far), else its first valid one, else its first.
const Value* parent_of(const Value& history, const Value& winner) {
    const auto parent = integer_of(winner, "parent_iteration");
    if (!parent) return nullptr;
    const Value *became_best = nullptr, *valid = nullptr, *first = nullptr;
    for (const Value& a : array_or_empty(history, "attempts").GetArray()) {
        if (integer_of(a, "iteration") != parent) continue;
        if (!first) first = &a;
        if (!valid && text_of(a, "verdict") == "valid") valid = &a;
        if (bool_of(a, "became_best").value_or(false)) became_best = &a;
    }
    return became_best ? became_best : valid ? valid : first;
}

// Saved time per invocation from the re-measured medians (interleaved with the initial kernel)
// where the evidence stage measured them, else from the search's medians.
void fill_cost_inputs(report_context& c) {
    const run_folder& f = c.folder;
    const Value* model = member(f.run, "model");
    c.cost_in.model_used = model != nullptr;
    if (model) c.cost_in.model_cost_usd = number_of(*model, "estimated_cost_usd");
    c.cost_in.wall_s = number_of(f.run, "wall_s").value_or(0);
    if (!member(f.summary, "best")) return;
    const Value& sig = object_or_empty(object_or_empty(f.summary, "evidence"), "significance");
    for (const Value& k : array_or_empty(sig, "cases").GetArray())
        if (const auto i = number_of(k, "initial_median_ms"), w = number_of(k, "winner_median_ms");
            i && w)
            c.cost_in.performance_cases.push_back({*i, *w});
    c.saved_basis = "the re-measured medians (interleaved rounds of the evidence stage)";
    if (!c.cost_in.performance_cases.empty()) return;
    for (const Value& k : array_or_empty(f.summary, "cases").GetArray())
        if (const auto i = number_of(k, "initial_median_ms"), w = number_of(k, "best_median_ms");
            i && w && text_of(k, "kind") == "performance")
            c.cost_in.performance_cases.push_back({*i, *w});
    c.saved_basis = "the search's medians (not re-measured)";
}

void fill_context(report_context& c, const report_economics& flags) {
    const run_folder& f = c.folder;
    c.verdict = decide_go(f.summary, f.run);
    c.simulated = bool_of(f.summary, "simulated").value_or(false) ||
                  bool_of(object_or_empty(f.run, "device"), "simulated").value_or(false);
    c.initial_attempt = find_attempt(f.history, 0, 0);
    if (const Value* best = member(f.summary, "best"))
        c.winner_attempt = find_attempt(f.history, integer_of(*best, "iteration").value_or(-1),
                                        integer_of(*best, "attempt").value_or(-1));
    if (c.winner_attempt) c.parent_attempt = parent_of(f.history, *c.winner_attempt);
    c.economics = recorded_economics(f.run, flags);
    fill_cost_inputs(c);
    c.costs = compute_costs(c.cost_in, c.economics);
}

std::string page_head(const report_context& c, const std::string& run_name) {
    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src "
         "data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << (c.simulated ? "FAKE RUN " : "") << html_escape(run_name) << ": "
      << (c.verdict.go ? "GO" : "NO-GO") << " - cuda-optimizer report</title>\n<script>"
      << report::error_catcher_js() << "</script>\n<style>" << report::report_css()
      << "</style>\n</head>\n";
    return o.str();
}

std::string page_header(const report_context& c, const std::string& run_name) {
    const Value& run = c.folder.run;
    const Value& tool = object_or_empty(run, "tool");
    std::ostringstream o;
    o << "<header class=\"page\"><div><h1>" << html_escape(run_name)
      << " <span class=\"muted\">cuda-optimizer report</span></h1><p class=\"muted\">"
      << html_escape(text_of(object_or_empty(run, "device"), "name")) << " &middot; proposer "
      << html_escape(text_of(run, "proposer")) << " &middot; started "
      << html_escape(text_of(run, "started")) << " &middot; stop "
      << html_escape(text_of(run, "stop_reason")) << " &middot; "
      << html_escape(text_of(tool, "name")) << " " << html_escape(text_of(tool, "version"))
      << " (commit " << html_escape(text_of(tool, "commit")) << ")</p></div>\n<nav>";
    const std::pair<const char*, const char*> links[] = {
        {"verdict", "Verdict"}, {"latency", "Latency"},
        {"charts", "Charts"},   {"attempts-section", "Attempts"},
        {"diff", "Diff"},       {"environment", "Environment"},
        {"model", "Model"},     {"cost", "Cost"}};
    for (const auto& [id, name] : links) o << "<a href=\"#" << id << "\">" << name << "</a>";
    o << "</nav></header>\n";
    if (c.simulated) o << report::fake_run_banner();
    return o.str();
}

}  // namespace

std::string render_report(const fs::path& run_dir, const report_economics& flags) {
    const run_folder folder = read_run_folder(run_dir);
    report_context c(folder);
    fill_context(c, flags);
    fs::path absolute = fs::absolute(run_dir).lexically_normal();
    if (absolute.filename().empty()) absolute = absolute.parent_path();  // "run-001/"
    const std::string run_name = absolute.filename().string();
    std::string page = page_head(c, run_name);
    page += "<body>\n" + page_header(c, run_name) + "<main>\n";
    for (auto* section : {report::verdict_section, report::latency_section, report::charts_section,
                          report::attempts_section, report::diff_section,
                          report::environment_section, report::model_section, report::cost_section})
        page += section(c);
    page +=
        "</main>\n<footer class=\"muted\">Written by cuda-optimizer from the files of " +
        html_escape(run_name) +
        " alone; regenerate with <code>cuda-optimizer report RUN_DIR</code>.</footer>\n<script>" +
        std::string(report::report_js()) + "</script>\n</body>\n</html>\n";
    return page;
}

fs::path write_report(const fs::path& run_dir, const report_economics& flags, const fs::path& out) {
    const fs::path target = out.empty() ? run_dir / "report.html" : out;
    write_file_atomic(target, render_report(run_dir, flags));
    return target;
}

}  // namespace cuopt
