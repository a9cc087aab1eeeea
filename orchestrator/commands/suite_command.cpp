#include "orchestrator/commands/suite_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/commands/suite_jobs.hpp"
#include "orchestrator/commands/suite_problems.hpp"
#include "orchestrator/commands/suite_results.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;
using suite::figures_over;
using suite::find_problems;
using suite::percent;
using suite::problem_folder;
using suite::read_state;
using suite::run_problem;
using suite::self_path;
using suite::suite_problem;
using suite::suite_state;
using suite::times;
using suite::write_suite_files;

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
