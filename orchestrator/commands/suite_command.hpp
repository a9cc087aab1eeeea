#pragma once
/// `cuda-optimizer suite DIR`: a whole deck of problems in one command, the way KernelBench is
/// scored. Each problem folder of DIR (and each KernelBench file or FlashInfer-Trace definition,
/// imported first) runs through `optimize` in a child of this same binary, one after another; a
/// problem's failure is a record, never the end of the suite. RESULTS/suite.json (one record a
/// problem, fast_p and the geomean speedup over the deck) is rewritten after each problem, so a
/// second run of the same command skips what is done; RESULTS/suite.html shows the same. With
/// --submit SPOOL the problems become daemon jobs instead (suite_jobs.hpp), collected as they end.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

struct suite_options {
    std::string dir;
    std::string results_dir;                 // default: DIR/suite-results
    std::string python;                      // handed to import and optimize
    std::vector<std::string> optimize_args;  // the words after `--`, given to every optimize
    std::string spool;                       // --submit: the daemon's spool (suite_jobs.hpp)
    double poll_s = 5;                       // --poll: how often submitted jobs are looked at
};

/// One problem's outcome, as suite.json records it.
struct suite_record {
    std::string name, source;
    std::string verdict;  // go | no_go | no_winner | failed
    std::optional<int> exit_code;
    std::string reason;  // "" for a go
    std::optional<double> speedup, speedup_low, speedup_high;
    std::optional<double> speedup_vs_compile, sol_score;
    std::optional<long long> attempts;
    double wall_s = 0;
    std::string run;       // the run folder ("" where none was made)
    std::string baseline;  // the initial attempt's label (pytorch-eager, initial.cu, ...)
    std::string job;       // --submit: the daemon's job id ("" for a run of the suite's own)
};

/// The figures over the whole suite: KernelBench's fast_p is the share of ALL problems whose
/// verdict is go with a speedup strictly above p.
struct suite_figures {
    int problems = 0;
    double fast_0 = 0, fast_1 = 0, fast_2 = 0;
    std::optional<double> geomean_speedup;  // over the records with a speedup
};

suite_figures suite_figures_of(const std::vector<suite_record>& records);

/// A record from the optimize child's summary.json text; `verdict` failed when it is not one.
suite_record record_from_summary(const std::string& summary_text);

/// The progress line's tail: "go 2.31x over eager (compile 1.12x), 14 attempts, 42 s".
std::string describe_record(const suite_record& r);

CLI::App* add_suite_command(CLI::App& app, suite_options& o);

/// For `cuda-optimizer suite ... -- WORDS`: WORDS into o.optimize_args, untouched by the parser;
/// returns the argc the parser is to see (argc itself for any other command line).
int split_optimize_args(int argc, const char* const* argv, suite_options& o);

/// Runs the suite; 0 once every problem ran (whatever its verdict), 11 a DIR with no problems
/// (or an unreadable suite.json), 26 a results folder that cannot be written.
int run_suite(suite_options o);

}  // namespace cuopt
