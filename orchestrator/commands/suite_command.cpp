#include "orchestrator/commands/suite_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/commands/suite_jobs.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

// One problem of the deck: a problem folder, or a file `import` turns into one.
struct suite_problem {
    std::string name;
    fs::path source;
    bool imported = false;
};

// A child runs as long as it needs: an optimize of a real deck takes hours.
constexpr std::chrono::milliseconds k_no_limit = std::chrono::hours(24 * 30);

fs::path self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? fs::path(std::string(buf, static_cast<std::size_t>(n))) : fs::path();
}

// DIR's problems, sorted by name: each subfolder with a config.json, each .py and .json file.
// A file whose stem a folder already took keeps its whole file name.
std::vector<suite_problem> find_problems(const fs::path& dir, const fs::path& results) {
    std::vector<suite_problem> folders, files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        const fs::path p = e.path();
        if (e.is_directory() && fs::is_regular_file(p / "config.json") &&
            resolved_path(p) != resolved_path(results))
            folders.push_back({p.filename().string(), p, false});
        else if (e.is_regular_file() && (p.extension() == ".py" || p.extension() == ".json"))
            files.push_back({p.stem().string(), p, true});
    }
    std::set<std::string> taken;
    for (const suite_problem& f : folders) taken.insert(f.name);
    std::sort(files.begin(), files.end(),
              [](const suite_problem& a, const suite_problem& b) { return a.source < b.source; });
    for (suite_problem& f : files) {
        if (taken.count(f.name)) f.name = f.source.filename().string();
        taken.insert(f.name);
        folders.push_back(std::move(f));
    }
    std::sort(folders.begin(), folders.end(),
              [](const suite_problem& a, const suite_problem& b) { return a.name < b.name; });
    return folders;
}

std::string first_line(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            return line.size() > 300 ? line.substr(0, 300) + "..." : line;
    return "";
}

// The newest run-NNN of a problem's results folder ("" when there is none).
std::string newest_run(const fs::path& runs) {
    std::string newest;
    std::error_code ec;
    if (!fs::is_directory(runs, ec)) return "";
    for (const fs::directory_entry& e : fs::directory_iterator(runs, ec))
        if (e.path().filename().string().rfind("run-", 0) == 0 && e.path().string() > newest)
            newest = e.path().string();
    return newest;
}

// A failed child as a record: its exit code (128 + the signal) and the first line it said.
void mark_failed(suite_record& r, const process_result& p, const std::string& step) {
    r.verdict = "failed";
    if (p.failed_to_start)
        r.exit_code.reset();
    else
        r.exit_code = p.signal ? 128 + p.signal : p.exit_code;
    std::string said = first_line(p.stderr_text);
    if (said.rfind("cuda-optimizer: ", 0) == 0) said.erase(0, 16);
    if (said.empty()) said = p.describe();
    r.reason = said.rfind(step, 0) == 0 ? said : step + said;
}

std::vector<std::string> with_python(std::vector<std::string> argv, const suite_options& o) {
    if (!o.python.empty()) argv.insert(argv.end(), {"--python", o.python});
    return argv;
}

// The problem's folder: DIR/NAME, or R/problems/NAME made by import (kept from an earlier
// suite run when its config.json is there). nullopt, with `r` failed, when import fails.
std::optional<fs::path> problem_folder(const suite_problem& p, const suite_options& o,
                                       process_runner& runner, suite_record& r) {
    if (!p.imported) return p.source;
    const fs::path out = fs::path(o.results_dir) / "problems" / p.name;
    if (fs::is_regular_file(out / "config.json")) return out;
    std::error_code ec;
    fs::remove_all(out, ec);  // what an interrupted import left
    const process_result imported = runner.run(
        with_python({self_path().string(), "import", p.source.string(), "--out", out.string()}, o),
        k_no_limit);
    r.wall_s += imported.wall_ms / 1000;
    if (!imported.failed_to_start && !imported.signal && !imported.timed_out &&
        imported.exit_code == 0)
        return out;
    mark_failed(r, imported, "import: ");
    return std::nullopt;
}

suite_record run_problem(const suite_problem& p, const suite_options& o, process_runner& runner) {
    suite_record r;
    const auto folder = problem_folder(p, o, runner, r);
    if (folder) {
        const fs::path runs = fs::path(o.results_dir) / "runs" / p.name;
        std::vector<std::string> argv = with_python(
            {self_path().string(), "optimize", "--config", (*folder / "config.json").string(),
             "--results-dir", runs.string(), "--json", "--quiet"},
            o);
        argv.insert(argv.end(), o.optimize_args.begin(), o.optimize_args.end());
        const process_result done = runner.run(argv, k_no_limit);
        const double wall_s = r.wall_s + done.wall_ms / 1000;
        r = record_from_summary(done.stdout_text);
        r.wall_s = wall_s;
        r.exit_code = done.signal ? 128 + done.signal : done.exit_code;
        if (r.verdict == "failed") mark_failed(r, done, "");
        if (r.run.empty()) r.run = newest_run(runs);
    }
    r.name = p.name;
    r.source = p.source.string();
    return r;
}

}  // namespace

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

// What an earlier run of the suite left: its records by name, and the jobs it submitted that
// had not ended (by name). Throws json_error naming the file when it is not a suite.json.
struct suite_state {
    std::map<std::string, suite_record> finished;
    std::map<std::string, std::string> pending;
    std::string spool;  // the spool `pending` lies in
};

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

std::string percent(double share) {
    return fixed(100 * share, 1) + "%";
}

// "1.112x", or "-".
std::string times(std::optional<double> ratio) {
    return ratio ? fixed(ratio, 3) + "x" : "-";
}

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

void write_suite_files(const suite_options& o, const std::vector<suite_record>& records,
                       int problems, const std::map<std::string, std::string>& pending = {}) {
    write_file_atomic(fs::path(o.results_dir) / "suite.json",
                      suite_json(o, records, problems, pending));
    write_file_atomic(fs::path(o.results_dir) / "suite.html", suite_html(o, records, problems));
}

// "" when this run may go on from `earlier`; else why not: its pending jobs lie in another spool
// (job ids are a spool's own), or this run would not collect them.
std::string pending_problem(const suite_options& o, const suite_state& earlier) {
    if (earlier.pending.empty()) return "";
    const std::string file = (fs::path(o.results_dir) / "suite.json").string();
    if (o.spool.empty())
        return file + " has " + std::to_string(earlier.pending.size()) + " job(s) queued on " +
               earlier.spool + ": collect them with --submit " + earlier.spool;
    if (resolved_path(o.spool).string() != earlier.spool)
        return file + "'s pending jobs are in " + earlier.spool + ", not " +
               resolved_path(o.spool).string() + ": give that spool (job ids are a spool's own)";
    return "";
}

// "suite [2/5] beta: ".
std::string head_of(std::size_t i, std::size_t n, const std::string& name) {
    return "suite [" + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + name + ": ";
}

// A problem an earlier run of the suite recorded: said, and kept; false for any other.
bool kept(const suite_problem& p, const std::string& head, const suite_state& earlier,
          std::vector<suite_record>& records) {
    const auto done = earlier.finished.find(p.name);
    if (done == earlier.finished.end()) return false;
    std::cerr << head << "already in suite.json (" << describe_record(done->second)
              << "), skipped\n";
    records.push_back(done->second);
    return true;
}

int say_totals(const suite_options& o, const std::vector<suite_record>& records, int n) {
    write_suite_files(o, records, n);
    const suite_figures f = figures_over(records, n);
    std::cerr << "suite: " << n << " problems, fast_0 " << percent(f.fast_0) << ", fast_1 "
              << percent(f.fast_1) << ", fast_2 " << percent(f.fast_2) << ", geomean speedup "
              << times(f.geomean_speedup) << "; "
              << (fs::path(o.results_dir) / "suite.json").string() << "\n";
    return to_int(exit_code::ok);
}

int run_problems(const suite_options& o, const std::vector<suite_problem>& problems,
                 const suite_state& earlier) {
    const auto runner = make_child_process_runner(child_environment_kind::inherited);
    std::vector<suite_record> records;
    const int n = static_cast<int>(problems.size());
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const suite_problem& p = problems[i];
        const std::string head = head_of(i, problems.size(), p.name);
        if (kept(p, head, earlier, records)) continue;
        std::cerr << head << std::flush;  // the line ends when the problem does
        records.push_back(run_problem(p, o, *runner));
        std::cerr << describe_record(records.back()) << "\n";
        write_suite_files(o, records, n);
    }
    return say_totals(o, records, n);
}

// --submit: the problem as a job (imported here first where it is a source); its job id, or
// nullopt with `r` failed.
std::optional<std::string> submitted(const suite_problem& p, const suite_options& o,
                                     process_runner& runner, suite_record& r) {
    const auto folder = problem_folder(p, o, runner, r);
    if (!folder) return std::nullopt;
    try {
        return submit_problem(self_path(), o.spool, *folder / "config.json", o.optimize_args,
                              runner);
    } catch (const suite_job_error& e) {
        r.verdict = "failed";
        r.reason = e.what();
        return std::nullopt;
    }
}

// The submitted jobs, looked at every poll_s until each has ended, each recorded as it does;
// a job whose status cannot be read three times in a row is recorded as failed.
void collect(const suite_options& o, const std::vector<suite_problem>& problems,
             std::map<std::string, std::string>& pending, std::vector<suite_record>& records,
             process_runner& runner) {
    std::map<std::string, int> misses;
    for (;;) {
        for (auto job = pending.begin(); job != pending.end();) {
            std::optional<suite_record> r;
            try {
                r = ended_job(self_path(), o.spool, job->second, runner);
                misses.erase(job->first);  // three failed looks in a row, not three in all
            } catch (const suite_job_error& e) {
                if (++misses[job->first] >= 3) {
                    r.emplace().verdict = "failed";
                    r->reason = e.what();
                }
            }
            if (!r) {
                ++job;
                continue;
            }
            const auto p =
                std::find_if(problems.begin(), problems.end(),
                             [&](const suite_problem& q) { return q.name == job->first; });
            r->name = job->first;
            r->source = p == problems.end() ? "" : p->source.string();
            r->job = job->second;
            std::cerr << head_of(static_cast<std::size_t>(p - problems.begin()), problems.size(),
                                 r->name)
                      << job->second << " " << describe_record(*r) << "\n";
            records.push_back(std::move(*r));
            job = pending.erase(job);
            write_suite_files(o, records, static_cast<int>(problems.size()), pending);
        }
        if (pending.empty()) return;
        std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
    }
}

int run_submitted(const suite_options& o, const std::vector<suite_problem>& problems,
                  suite_state earlier) {
    const auto runner = make_child_process_runner(child_environment_kind::inherited);
    std::vector<suite_record> records;
    std::map<std::string, std::string>& pending = earlier.pending;
    const int n = static_cast<int>(problems.size());
    for (std::size_t i = 0; i < problems.size(); ++i) {
        const suite_problem& p = problems[i];
        const std::string head = head_of(i, problems.size(), p.name);
        if (kept(p, head, earlier, records)) continue;
        if (const auto job = pending.find(p.name); job != pending.end()) {
            std::cerr << head << job->second << ", submitted before\n";
            continue;
        }
        suite_record r;
        if (const std::optional<std::string> job = submitted(p, o, *runner, r)) {
            pending[p.name] = *job;
            std::cerr << head << "queued as " << *job << "\n";
        } else {
            r.name = p.name;
            r.source = p.source.string();
            records.push_back(r);
            std::cerr << head << describe_record(r) << "\n";
        }
        write_suite_files(o, records, n, pending);
    }
    collect(o, problems, pending, records, *runner);
    return say_totals(o, records, n);
}

}  // namespace

CLI::App* add_suite_command(CLI::App& app, suite_options& o) {
    CLI::App* s = app.add_subcommand(
        "suite", "Run optimize on every problem of a folder; suite.json with fast_p, resumable");
    s->add_option("dir", o.dir,
                  "Problem folders (each with config.json), KernelBench .py files and "
                  "FlashInfer-Trace definitions")
        ->required()
        ->type_name("DIR");
    s->add_option("--results-dir", o.results_dir,
                  "Where suite.json, suite.html, runs/ and problems/ go (default: "
                  "DIR/suite-results)")
        ->type_name("DIR");
    s->add_option("--python", o.python, "Python with torch, for import and optimize")
        ->type_name("FILE");
    s->add_option("--submit", o.spool,
                  "Queue each problem as a job of the daemon serving this spool (its GPUs or "
                  "Slurm) and collect each as it ends, instead of running them here")
        ->type_name("SPOOL");
    s->add_option("--poll", o.poll_s, "With --submit: seconds between looks at the jobs")
        ->check(number_from(0.05, 3600.0, "s"))
        ->default_val(5);
    s->footer(
        "\nExample:\n  cuda-optimizer suite KernelBench/level1 -- --max-iterations 10\n"
        "  (the words after -- go to every optimize; the same command again resumes)\n"
        "  cuda-optimizer suite KernelBench/level1 --submit /srv/cuopt-spool\n"
        "  (each problem a daemon job, on its GPUs or Slurm; the same command again collects\n"
        "  what ended without submitting anything twice)\n"
        "\nExit codes: 0 every problem ran, whatever its verdict (suite.json records each, a\n"
        "failed one with its exit code and first line); 11 DIR is no folder, holds no problem,\n"
        "or its suite.json is unreadable; 26 the results folder cannot be written; 64 bad\n"
        "command line.\n");
    return s;
}

int split_optimize_args(int argc, const char* const* argv, suite_options& o) {
    if (argc < 2 || std::string(argv[1]) != "suite") return argc;
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--") {
            o.optimize_args.assign(argv + i + 1, argv + argc);
            return i;
        }
    return argc;
}

int run_suite(suite_options o) {
    std::error_code ec;
    if (!fs::is_directory(o.dir, ec)) {
        std::cerr << "cuda-optimizer: suite: " << o.dir << " is not a folder\n";
        return to_int(exit_code::invalid_request);
    }
    if (o.results_dir.empty()) o.results_dir = (fs::path(o.dir) / "suite-results").string();
    const std::vector<suite_problem> problems = find_problems(o.dir, o.results_dir);
    if (problems.empty()) {
        std::cerr << "cuda-optimizer: suite: " << o.dir
                  << " holds no problem (a folder with config.json, a .py or a .json)\n";
        return to_int(exit_code::invalid_request);
    }
    try {
        const suite_state earlier = read_state(fs::path(o.results_dir) / "suite.json");
        if (const std::string why = pending_problem(o, earlier); !why.empty()) {
            std::cerr << "cuda-optimizer: suite: " << why << "\n";
            return to_int(exit_code::invalid_request);
        }
        return o.spool.empty() ? run_problems(o, problems, earlier)
                               : run_submitted(o, problems, earlier);
    } catch (const json_error& e) {
        std::cerr << "cuda-optimizer: suite: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    } catch (const file_write_error& e) {
        std::cerr << "cuda-optimizer: suite: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
}

}  // namespace cuopt
