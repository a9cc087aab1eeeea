// The suite's results: a record from optimize's summary.json, the figures over the deck (fast_p,
// geomean), and suite.json and suite.html, written after each problem and read back on a rerun.
#include "orchestrator/commands/suite_results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

suite_record record_from_summary(const std::string& summary_text) {
    suite_record r;
    rapidjson::Document s;
    r.verdict = "failed";
    if (summary_text.empty() || !try_parse_json(s, summary_text, true).empty() || !s.IsObject())
        return r;
    const std::optional<std::string> verdict = string_of(s, "verdict");
    if (!verdict || (*verdict != "go" && *verdict != "no_go" && *verdict != "no_winner")) return r;
    r.verdict = *verdict;
    if (const rapidjson::Value* reasons = member(s, "verdict_reasons");
        reasons && reasons->IsArray())
        for (const rapidjson::Value& line : reasons->GetArray())
            if (line.IsString()) r.reason += (r.reason.empty() ? "" : "; ") + text_of(line);
    r.run = string_of(s, "run_dir").value_or("");
    if (const rapidjson::Value* counts = member(s, "counts"))
        r.attempts = integer_of(*counts, "attempts");
    if (const rapidjson::Value* initial = member(s, "initial"))
        r.baseline = string_of(*initial, "label").value_or("");
    const rapidjson::Value* best = member(s, "best");
    const rapidjson::Value* evidence = member(s, "evidence");
    const rapidjson::Value* significance = evidence ? member(*evidence, "significance") : nullptr;
    if (const rapidjson::Value* estimate =
            significance ? member(*significance, "speedup") : nullptr) {
        r.speedup = number_of(*estimate, "ratio");
        r.speedup_low = number_of(*estimate, "low");
        r.speedup_high = number_of(*estimate, "high");
    }
    if (!r.speedup && evidence) r.speedup = number_of(*evidence, "headline_speedup");
    if (!r.speedup && best) r.speedup = number_of(*best, "speedup_vs_initial");
    const rapidjson::Value* compile = member(s, "pytorch_compile");
    const std::optional<double> compile_ms =
        compile ? number_of(*compile, "geomean_ms") : std::nullopt;
    const std::optional<double> best_ms = best ? number_of(*best, "geomean_ms") : std::nullopt;
    if (compile_ms && best_ms && *best_ms > 0) r.speedup_vs_compile = *compile_ms / *best_ms;
    r.sol_score = number_of(s, "sol_score");
    const rapidjson::Value* sol = evidence ? member(*evidence, "sol") : nullptr;
    if (!r.sol_score && sol && sol->IsArray()) {  // the mean over the performance cases
        double sum = 0;
        int n = 0;
        for (const rapidjson::Value& c : sol->GetArray())
            if (const auto score = number_of(c, "sol_score")) sum += *score, ++n;
        if (n) r.sol_score = sum / n;
    }
    return r;
}

suite_figures suite_figures_of(const std::vector<suite_record>& records) {
    suite_figures f;
    f.problems = static_cast<int>(records.size());
    if (records.empty()) return f;
    int fast[3] = {0, 0, 0};
    double log_sum = 0;
    int with_speedup = 0;
    for (const suite_record& r : records) {
        if (r.speedup && *r.speedup > 0) log_sum += std::log(*r.speedup), ++with_speedup;
        for (int p = 0; p < 3; ++p)
            if (r.verdict == "go" && r.speedup && *r.speedup > p) ++fast[p];
    }
    f.fast_0 = static_cast<double>(fast[0]) / f.problems;
    f.fast_1 = static_cast<double>(fast[1]) / f.problems;
    f.fast_2 = static_cast<double>(fast[2]) / f.problems;
    if (with_speedup) f.geomean_speedup = std::exp(log_sum / with_speedup);
    return f;
}

std::string describe_record(const suite_record& r) {
    char buf[64];
    if (r.verdict == "failed")
        return "failed (" + (r.exit_code ? "exit " + std::to_string(*r.exit_code) : "not started") +
               "): " + r.reason;
    std::string out = r.verdict;
    if (r.speedup) {
        std::snprintf(buf, sizeof buf, " %.2fx over ", *r.speedup);
        out += buf + std::string(r.baseline == "pytorch-eager" ? "eager" : "the initial kernel");
    }
    if (r.speedup_vs_compile) {
        std::snprintf(buf, sizeof buf, " (compile %.2fx)", *r.speedup_vs_compile);
        out += buf;
    }
    if (r.attempts) out += ", " + std::to_string(*r.attempts) + " attempts";
    out += ", " + duration_text(r.wall_s);
    return r.reason.empty() ? out : out + ": " + r.reason;
}

namespace suite {

namespace fs = std::filesystem;

namespace {

rapidjson::Value record_json(const suite_record& r, json_allocator& a) {
    json_object o(a);
    o.add("name", r.name).add("source", r.source).add("verdict", r.verdict);
    o.add("exit_code", r.exit_code).add("reason", r.reason);
    o.add("speedup", r.speedup).add("speedup_low", r.speedup_low);
    o.add("speedup_high", r.speedup_high).add("speedup_vs_compile", r.speedup_vs_compile);
    o.add("sol_score", r.sol_score).add("attempts", r.attempts).add("wall_s", r.wall_s);
    o.add("run", r.run).add("baseline", r.baseline).add_if(!r.job.empty(), "job", r.job);
    return o.take();
}

suite_record record_of(const json_field& j) {
    suite_record r;
    r.name = j.optional_text("name").value_or("");
    r.source = j.optional_text("source").value_or("");
    r.verdict = j.optional_text("verdict").value_or("failed");
    r.exit_code = j.optional_integer<int>("exit_code");
    r.reason = j.optional_text("reason").value_or("");
    r.speedup = j.optional_number("speedup");
    r.speedup_low = j.optional_number("speedup_low");
    r.speedup_high = j.optional_number("speedup_high");
    r.speedup_vs_compile = j.optional_number("speedup_vs_compile");
    r.sol_score = j.optional_number("sol_score");
    r.attempts = j.optional_integer<long long>("attempts");
    r.wall_s = j.optional_number("wall_s").value_or(0);
    r.run = j.optional_text("run").value_or("");
    r.baseline = j.optional_text("baseline").value_or("");
    r.job = j.optional_text("job").value_or("");
    return r;
}

}  // namespace

suite_state read_state(const fs::path& file) {
    suite_state out;
    if (!fs::exists(file)) return out;
    const rapidjson::Document doc = parse_record_json(read_text_file(file), file.string());
    validate_json(doc, embedded_schema("suite"), file.string());
    const json_field root(doc, file.string());
    for (const json_field& j : root["results"].items()) {
        suite_record r = record_of(j);
        out.finished[r.name] = std::move(r);
    }
    if (const rapidjson::Value* pending = member(doc, "pending"))
        for (const auto& m : pending->GetObject()) out.pending[text_of(m.name)] = text_of(m.value);
    out.spool = text_of(doc, "spool");
    return out;
}

// The figures over all `problems`: one not finished yet counts as not fast.
suite_figures figures_over(const std::vector<suite_record>& records, int problems) {
    std::vector<suite_record> all = records;
    all.resize(std::max<std::size_t>(records.size(), static_cast<std::size_t>(problems)));
    suite_figures f = suite_figures_of(all);
    f.geomean_speedup = suite_figures_of(records).geomean_speedup;
    return f;
}

namespace {

std::string suite_json(const suite_options& o, const std::vector<suite_record>& records,
                       int problems, const std::map<std::string, std::string>& pending) {
    const suite_figures f = figures_over(records, problems);
    rapidjson::Document doc;
    doc.SetObject();
    add_document_header(doc, "cuda-optimizer");
    json_array results(doc.GetAllocator());
    for (const suite_record& r : records) results.push(record_json(r, doc.GetAllocator()));
    json_object(doc)
        .add("dir", resolved_path(o.dir).string())
        .add("results_dir", resolved_path(o.results_dir).string())
        .add("optimize_args", o.optimize_args)
        .add("problems", problems)
        .add("finished", static_cast<int>(records.size()))
        .add("fast_0", f.fast_0)
        .add("fast_1", f.fast_1)
        .add("fast_2", f.fast_2)
        .add("geomean_speedup", f.geomean_speedup)
        .add("results", std::move(results));
    if (!o.spool.empty())
        json_object(doc).add("spool", resolved_path(o.spool).string()).add("pending", pending);
    validate_json(doc, embedded_schema("suite"), "suite.json");
    return to_pretty_json(doc);
}

const char* k_suite_css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}.go{color:#080;font-weight:bold}"
    ".no_go,.no_winner{color:#a60}.failed{color:#c00;font-weight:bold}";

}  // namespace

std::string percent(double share) {
    return fixed(100 * share, 1) + "%";
}

// "1.112x", or "-".
std::string times(std::optional<double> ratio) {
    return ratio ? fixed(ratio, 3) + "x" : "-";
}

namespace {

std::string speedup_cell(const suite_record& r) {
    if (!r.speedup) return "-";
    std::string s = times(r.speedup);
    if (r.speedup_low && r.speedup_high)
        s += " [" + fixed(r.speedup_low, 3) + ", " + fixed(r.speedup_high, 3) + "]";
    return s;
}

std::string record_row(const suite_record& r) {
    std::ostringstream h;
    h << "<tr><td>" << html_escape(r.name) << "</td><td class=\"" << html_escape(r.verdict) << "\">"
      << html_escape(r.verdict) << "</td><td class=\"num\">" << html_escape(speedup_cell(r))
      << "</td><td class=\"num\">" << html_escape(times(r.speedup_vs_compile))
      << "</td><td class=\"num\">" << html_escape(fixed(r.sol_score, 3))
      << "</td><td class=\"num\">" << (r.attempts ? grouped(*r.attempts) : "-")
      << "</td><td class=\"num\">" << html_escape(duration_text(r.wall_s))
      << "</td><td class=\"num\">" << (r.exit_code ? std::to_string(*r.exit_code) : "-")
      << "</td><td>" << html_escape(r.reason) << "</td><td>" << html_escape(r.run)
      << "</td></tr>\n";
    return h.str();
}

std::string suite_html(const suite_options& o, const std::vector<suite_record>& records,
                       int problems) {
    const suite_figures f = figures_over(records, problems);
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>suite: "
      << html_escape(o.dir) << "</title><style>" << k_suite_css << "</style></head><body>\n"
      << "<h1>suite: " << html_escape(o.dir) << "</h1>\n<p>" << records.size() << " of " << problems
      << " problems finished. fast_0 " << percent(f.fast_0) << ", fast_1 " << percent(f.fast_1)
      << ", fast_2 " << percent(f.fast_2)
      << " (the share of all problems with a go verdict and a speedup above p); geomean "
         "speedup "
      << html_escape(times(f.geomean_speedup)) << "</p>\n"
      << "<table><tr><th>problem</th><th>verdict</th><th>speedup [95% interval]</th>"
         "<th>vs torch.compile</th><th>SOL score</th><th>attempts</th><th>wall</th>"
         "<th>exit</th><th>reason</th><th>run</th></tr>\n";
    for (const suite_record& r : records) h << record_row(r);
    h << "</table>\n</body></html>\n";
    return h.str();
}

}  // namespace

void write_suite_files(const suite_options& o, const std::vector<suite_record>& records,
                       int problems, const std::map<std::string, std::string>& pending) {
    write_file_atomic(fs::path(o.results_dir) / "suite.json",
                      suite_json(o, records, problems, pending));
    write_file_atomic(fs::path(o.results_dir) / "suite.html", suite_html(o, records, problems));
}

}  // namespace suite

}  // namespace cuopt
