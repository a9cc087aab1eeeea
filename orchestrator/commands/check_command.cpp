#include <filesystem>
#include <iostream>

#include "common/exit_codes.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/preflight.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

// check compiles through the real cuda-harness (the one beside cuda-optimizer, as optimize's
// default --harness), whatever --harness names: a stand-in harness compiles nothing. Without it
// the rows say why nothing was compiled.
preflight_compiler check_compiler(const optimizer_options& o) {
    const std::string real = default_harness_path();
    std::error_code ec;
    if (fs::is_regular_file(real, ec)) return {real, ""};
    if (o.harness == real) return {};  // cuda-harness from PATH: the run's own, and real
    return {"", "no cuda-harness beside cuda-optimizer to compile with (--harness " + o.harness +
                    " is not it: a stand-in harness compiles nothing)"};
}

// The config's keys that only optimize reads, checked as optimize checks them: a row.
preflight_check config_row(const optimizer_options& o, const CLI::App* optimize) {
    exit_code code = exit_code::ok;
    const std::string problem = optimize_config_problem(o, optimize, code);
    if (problem.empty())
        return {"config", true, o.config + ": optimize takes every key", "", exit_code::ok};
    return {"config", false, problem, "correct the field named above (optimize reads it)", code};
}

}  // namespace

// The preflight as a table: what passed, and a one-line fix for what did not.
int run_check(const optimizer_options& options, const CLI::App* optimize) {
    const auto runner = make_child_process_runner();
    preflight_report r = run_preflight(options, *runner, check_compiler(options));
    if (!options.config.empty()) r.checks.insert(r.checks.begin(), config_row(options, optimize));
    std::cout << "cuda-optimizer check\n" << r.table();
    std::cout << (r.passed() ? "ready\n" : "not ready\n");
    const preflight_check* f = r.first_failure();
    return f ? to_int(f->code) : 0;  // the code optimize would stop with
}

}  // namespace cuopt
