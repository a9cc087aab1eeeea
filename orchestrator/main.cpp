// cuda-optimizer: the gated, auditable search for faster CUDA kernels. See README.md.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/tool_version.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace {

namespace fs = std::filesystem;
using cuopt::optimizer_options;

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) {
    g_interrupted = true;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"cuda-optimizer: makes CUDA kernels faster, with evidence"};
    app.require_subcommand(1);
    app.set_version_flag("--version", cuopt::tool_version());
    optimizer_options options;
    bool quiet = false, json = false;
    CLI::App* optimize =
        app.add_subcommand("optimize", "Run the gated search and write a run folder");
    cuopt::define_run_options(optimize, options);
    optimize->add_flag("--quiet", quiet, "No progress lines on stderr");
    optimize->add_flag("--json", json, "Print summary.json on stdout at the end");
    CLI::App* check =
        app.add_subcommand("check", "Preflight: toolkit, driver, device, harness, manifest");
    cuopt::define_run_options(check, options);
    std::string replay_request;
    CLI::App* replay =
        app.add_subcommand("replay", "Re-run a run's best-case-N.json and compare with its oracle");
    replay->add_option("request", replay_request, "A best-case-N.json inside a run folder")
        ->required();
    replay->add_option("--harness", options.harness,
                       "cuda-harness binary (default: beside cuda-optimizer)");
    replay->add_option("--timeout", options.timeout_s, "Wall-clock limit, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    try {
        app.parse(argc, argv);
        cuopt::apply_config(optimize->parsed() ? optimize : check, options);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return cuopt::to_int(cuopt::exit_code::usage);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: " << e.what() << "\n";
        return cuopt::to_int(cuopt::exit_code::usage);
    }
    options.quiet = quiet;
    options.json = json;
    if (options.harness.empty()) options.harness = cuopt::default_harness_path();
    try {
        if (replay->parsed())
            return cuopt::run_replay(replay_request, options.harness, options.timeout_s);
        if (check->parsed()) return cuopt::run_check(options);
        std::signal(SIGINT, on_signal);
        std::signal(SIGTERM, on_signal);
        return cuopt::run_optimize(options, std::vector<std::string>(argv, argv + argc),
                                   g_interrupted);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: " << e.what() << "\n";
        return cuopt::to_int(cuopt::exit_code::internal_error);
    }
}
