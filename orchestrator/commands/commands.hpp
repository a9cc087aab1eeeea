#pragma once
/// Three of cuda-optimizer's nine subcommands, each a function from settings to an exit
/// code: optimize (the gated search), replay (re-run a best-case request and compare it
/// with the run's oracle) and check (the preflight table). report, gate and the service's
/// serve/submit/status/cancel have their own headers (report_command, gate_command,
/// service/serve_command).

#include <CLI/CLI.hpp>
#include <atomic>
#include <string>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

int run_optimize(const optimizer_options& options, const std::vector<std::string>& command_line,
                 const std::atomic<bool>& interrupted);
int run_replay(const std::string& request, const std::string& harness, double timeout_s);
/// `optimize` is optimize's command: check reads the config's optimize-only keys as it would.
int run_check(const optimizer_options& options, const CLI::App* optimize);

/// cuda-harness beside this executable (or on PATH when not there).
std::string default_harness_path();

}  // namespace cuopt
