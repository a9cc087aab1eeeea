// cuda-optimizer: the gated, auditable search for faster CUDA kernels. See README.md.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/tool_version.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/export_command.hpp"
#include "orchestrator/commands/gate_command.hpp"
#include "orchestrator/commands/named_files.hpp"
#include "orchestrator/commands/problem_import.hpp"
#include "orchestrator/commands/report_command.hpp"
#include "orchestrator/commands/resume_options.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/commands/suite_command.hpp"
#include "orchestrator/evaluation/python_child.hpp"
#include "orchestrator/model/llm_protocol.hpp"
#include "orchestrator/service/serve_command.hpp"

namespace {

namespace fs = std::filesystem;
using cuopt::optimizer_options;

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) {
    g_interrupted = true;
}

const char* k_optimize_footer = R"(
Example:
  cuda-optimizer optimize --config examples/matmul/config.json
  cuda-optimizer optimize --resume results/run-003    (a run that was interrupted or killed)

Exit codes: 0 the run ended with a verdict: go, no_go or no_winner (summary.json says which;
--fail-on-no-go turns no_go into 30 and no_winner into 27); 11 a manifest, config or input
file is wrong (the message names the file and field); 20 preflight failed (no harness,
toolkit, driver or GPU); 21 the initial kernel fails a case or does not compile; 22 the
reference fails; 23 interrupted; 25 the model API refused; 26 the run folder cannot be
written; 27 no candidate passes the evidence gates; 28 --resume refused (not a run folder, a
finished run, or its inputs, harness or settings changed: the message names which); 29 the
harness cannot confine itself (no Landlock) and the model's, --candidates' or a daemon job's
kernels would run in it (--allow-unconfined runs them anyway); 30 no_go with
--fail-on-no-go; 31 a file that scores the run changed during it; 64 bad command line; 70
internal error (a bug: please report it).
)";

const char* k_check_footer = R"(
Example:
  cuda-optimizer check --config examples/matmul/config.json
  cuda-optimizer check --config examples/matmul-tiled/config.json --all-configurations
      (compiles the initial kernel in each of the tunables' 32 configurations, not only the
      first; a FAIL row names each one that does not compile by its defines)

Exit codes: 0 ready; otherwise the code optimize would stop with: 11 a manifest, config,
signature or input file is wrong; 20 no harness, toolkit, driver or GPU; 21 the initial
kernel does not compile (with --all-configurations: in some configuration); 22 the
reference does not compile; 26 the results folder cannot be written; 29 the harness cannot
confine itself and the run has kernels nobody reviewed; 64 bad command line, or
--all-configurations over more than 10000 configurations.
)";

const char* k_replay_footer = R"(
Example:
  cuda-optimizer replay results/run-001/best-case-0.json

Exit codes: 0 the replay matches the run's oracle; 11 the run's summary.json is unreadable
or has no such case; 20 no CUDA driver, no such GPU, or a harness that cannot start; 24 the
outputs no longer match (or the harness failed another way); 64 bad command line or not a
best-case-N.json.
)";

// replay's own options: the request, the harness and its timeout.
CLI::App* add_replay_command(CLI::App& app, optimizer_options& options, std::string& request) {
    CLI::App* replay =
        app.add_subcommand("replay", "Re-run a run's best-case-N.json and compare with its oracle");
    replay->add_option("request", request, "A best-case-N.json inside a run folder")
        ->type_name("FILE")
        ->required();
    replay
        ->add_option("--harness", options.harness,
                     "cuda-harness binary (default: beside cuda-optimizer)")
        ->type_name("FILE");
    replay->add_option("--timeout", options.timeout_s, "Wall-clock limit, seconds")
        ->capture_default_str()
        ->check(cuopt::duration_seconds());
    replay->footer(k_replay_footer);
    return replay;
}

// After parsing: with --resume the run's own options (parsed again from its run.json), else
// --config's and the timing options settled; an exit code where they cannot be had.
std::optional<int> settle_options(CLI::App* optimize, CLI::App* check, optimizer_options& options,
                                  const std::vector<std::string>& args) {
    try {
        if (optimize->parsed() && !options.resume.empty()) {
            options = cuopt::resumed_options({args.begin() + 1, args.end()}, options.resume);
            return std::nullopt;
        }
        if (optimize->parsed()) cuopt::apply_config(optimize, options);
        if (check->parsed()) cuopt::apply_config(check, options, optimize);
    } catch (const cuopt::run_failure& f) {  // --resume refused
        std::cerr << "cuda-optimizer: " << f.what() << "\n";
        return cuopt::to_int(f.code());
    } catch (const std::exception& e) {  // the config file: named with its field
        std::cerr << "cuda-optimizer: " << e.what() << "\n";
        return cuopt::to_int(cuopt::exit_code::invalid_request);
    }
    if (optimize->parsed())
        if (const std::string bad = cuopt::settle_timing_options(optimize, options); !bad.empty()) {
            std::cerr << "cuda-optimizer: " << bad << "\n";
            return cuopt::to_int(cuopt::exit_code::usage);
        }
    return std::nullopt;
}

}  // namespace

const char* const k_app_footer =
    "\nCommands: optimize (the search), import (a PyTorch problem as a problem folder), "
    "check (the preflight as a table), suite (optimize a folder of problems, with fast_p), "
    "export (a winner as a C++ header to build in), replay "
    "(re-run a winner's case), report (rebuild a run's report.html), gate (the regression "
    "gate for CI), serve/submit/status/cancel (the daemon and its job spool).\nEach has "
    "--help; the README has the rest.";

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "__confined-python")  // the PyTorch child's shim
        return cuopt::serve_confined_python(argc, argv);
    CLI::App app{"cuda-optimizer: makes CUDA kernels faster, with evidence"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("cuda-optimizer ") + cuopt::tool_version() +
                                          " (commit " + cuopt::tool_commit() + ")");
    app.footer(k_app_footer);
    optimizer_options options;
    bool quiet = false, json = false;
    CLI::App* optimize =
        app.add_subcommand("optimize", "Run the gated search and write a run folder");
    cuopt::define_run_options(optimize, options);
    cuopt::define_cost_options(optimize, options.economics);
    cuopt::define_resume_option(optimize, options);
    optimize->add_flag("--quiet", quiet, "No progress lines on stderr");
    optimize->add_flag("--json", json, "Print summary.json on stdout at the end");
    optimize->footer(k_optimize_footer);
    // For the service's submit: the files this run would read, as JSON (named_files.hpp).
    bool list_files = false;
    std::string files_within;
    optimize->add_flag("--list-files", list_files)->group("");
    optimize->add_option("--files-within", files_within)->group("");
    CLI::App* check = app.add_subcommand(
        "check", "Preflight as a table: what optimize would reject, with a fix for each");
    cuopt::define_check_options(check, options);
    check->add_flag("--all-configurations", options.all_configurations,
                    "Compile the initial kernel in every configuration of the tunables (at most "
                    "10000), not only the first: a row names each that fails by its defines");
    check->footer(k_check_footer);
    std::string replay_request;
    CLI::App* replay = add_replay_command(app, options, replay_request);
    cuopt::report_options report_options;
    CLI::App* report = cuopt::add_report_command(app, report_options);
    cuopt::gate_options gate_options;
    CLI::App* gate = cuopt::add_gate_command(app, gate_options);
    cuopt::import_options import_options;
    CLI::App* import = nullptr;
    cuopt::add_import_command(app, import_options, import);
    cuopt::suite_options suite_options;
    CLI::App* suite = cuopt::add_suite_command(app, suite_options);
    cuopt::export_options export_options;
    CLI::App* exporter = cuopt::add_export_command(app, export_options);
    const int parsed_argc = cuopt::split_optimize_args(argc, argv, suite_options);
    cuopt::daemon_cli daemon;
    cuopt::add_daemon_commands(app, daemon);
    if (const std::string bad =
            cuopt::unknown_word(app, std::vector<std::string>(argv + 1, argv + parsed_argc));
        !bad.empty()) {
        std::cerr << "cuda-optimizer: " << bad << "\n";
        return cuopt::to_int(cuopt::exit_code::usage);
    }
    if (const auto done = cuopt::parse_command_line(app, parsed_argc, argv)) return *done;
    if (const std::optional<int> code = settle_options(
            optimize, check, options, std::vector<std::string>(argv + 1, argv + argc)))
        return *code;
    if (optimize->parsed() && list_files) return cuopt::run_list_files(options, files_within);
    if (const std::optional<int> code = cuopt::run_daemon_command(daemon)) return *code;
    options.quiet = quiet;
    options.json = json;
    if (options.harness.empty()) options.harness = cuopt::default_harness_path();
    try {
        if (import->parsed()) return cuopt::run_import(import_options);
        if (suite->parsed()) return cuopt::run_suite(suite_options);
        if (exporter->parsed()) return cuopt::run_export(export_options);
        if (replay->parsed())
            return cuopt::run_replay(replay_request, options.harness, options.timeout_s);
        if (check->parsed()) return cuopt::run_check(options, optimize);
        if (report->parsed()) return cuopt::run_report(report_options);
        if (gate->parsed()) return cuopt::run_gate(gate_options);
        std::signal(SIGINT, on_signal);
        std::signal(SIGTERM, on_signal);
        return cuopt::run_optimize(options, std::vector<std::string>(argv, argv + argc),
                                   g_interrupted);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: " << e.what() << "\n";
        return cuopt::to_int(cuopt::exit_code::internal_error);
    }
}
