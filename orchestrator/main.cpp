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
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace {

namespace fs = std::filesystem;
using cuopt::optimizer_options;

std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int) {
    g_interrupted = true;
}

// The model proposer's options (--proposer llm, or auto with a key or base URL).
void define_model_options(CLI::App* app, optimizer_options& o) {
    app->add_option("--provider", o.provider, "openai (and compatible servers) | anthropic")
        ->capture_default_str()
        ->check(CLI::IsMember({"openai", "anthropic"}));
    app->add_option("--model", o.model,
                    std::string("Model name (default ") +
                        cuopt::default_model(cuopt::llm_provider::openai) + ", or " +
                        cuopt::default_model(cuopt::llm_provider::anthropic) + " for anthropic)");
    app->add_option("--reasoning-effort", o.reasoning_effort,
                    "OpenAI reasoning effort (none to omit)")
        ->capture_default_str();
    app->add_option("--base-url", o.base_url,
                    "API base URL, e.g. http://127.0.0.1:8000/v1 for vLLM (also $OPENAI_BASE_URL)");
    app->add_option("--temperature", o.temperature,
                    "Sampling temperature, for models that accept one");
    app->add_option("--max-model-calls", o.max_model_calls,
                    "Model calls per run before budget_exhausted")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    app->add_option("--max-tokens-total", o.max_tokens_total,
                    "Tokens per run before budget_exhausted")
        ->capture_default_str()
        ->check(CLI::Range(1LL, 1000000000000LL));
    app->add_flag("--use-nsight", o.use_nsight,
                  "Offer the model a profile tool (ncu on the current best)");
    app->add_option("--profile-timeout", o.profile_timeout_s,
                    "Wall-clock limit per ncu profile, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
}

// Options shared by optimize and check, each defined once with its help; the defaults
// shown are the struct's own (optimizer_options and the structs it holds).
void define_run_options(CLI::App* app, optimizer_options& o) {
    app->option_defaults()->multi_option_policy(
        CLI::MultiOptionPolicy::TakeLast);  // the last one given wins
    app->add_option("--description", o.description,
                    "What the kernel computes (recorded; shown to a model)");
    app->add_option("--signature", o.signature,
                    "The kernel's C signature; the manifest must agree with it");
    app->add_option("--reference", o.reference,
                    "Reviewed reference kernel (.cu): its outputs are the oracle");
    app->add_option("--initial-kernel", o.initial_kernel,
                    "Iteration 0 (.cu); must pass every case");
    app->add_option("--input-cases", o.input_cases, "The manifest, input_cases.json");
    app->add_option("--max-iterations", o.search.max_iterations,
                    "Proposer iterations after the initial kernel")
        ->capture_default_str()
        ->check(CLI::Range(0, 10000));
    app->add_option(
           "--proposer", o.proposer,
           "auto | llm | autotune | files (auto: the model when a key or base URL is configured)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "llm", "autotune", "files"}));
    define_model_options(app, o);
    app->add_option("--candidates", o.candidates, "Folder of .cu candidates for --proposer files");
    app->add_option("--results-dir", o.results_dir, "Where run-NNN folders go")
        ->capture_default_str();
    app->add_option("--device", o.device, "GPU index")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app->add_option("--harness", o.harness, "cuda-harness binary (default: beside cuda-optimizer)");
    app->add_option("--timeout", o.timeout_s, "Wall-clock limit per harness run, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app->add_option("--seed", o.seed, "Autotune sampling seed")->capture_default_str();
    app->add_option("--batch", o.batch, "Autotune configurations per iteration")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app->add_option("--min-gain", o.search.min_gain,
                    "A new best must be faster by more than this fraction")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    app->add_option("--max-repairs", o.search.max_repairs, "Compile-error repairs per iteration")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    app->add_option("--warmup", o.timing.warmup, "Warm-up launches per measured case")
        ->capture_default_str()
        ->check(CLI::Range(0, 100000));
    app->add_option("--iterations", o.timing.iterations, "Timed launches per measured case")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    app->add_option("--config", o.config,
                    "JSON file with the same keys (paths relative to it); flags win");
}

// Applies a --config JSON file to every option not given on the command line.
void apply_config(CLI::App* app, optimizer_options& o) {
    if (o.config.empty()) return;
    const fs::path file = fs::absolute(o.config);
    const rapidjson::Document d =
        cuopt::parse_json(cuopt::read_text_file(file), file.filename().string());
    if (!d.IsObject())
        throw cuopt::json_error(file.filename().string() + ": expected an object of option names");
    const fs::path base = file.parent_path();
    for (const auto& member : d.GetObject()) {
        const std::string key = member.name.GetString();
        std::string flag = "--" + key;
        for (char& c : flag)
            if (c == '_') c = '-';
        CLI::Option* opt = nullptr;
        if (key == "prices") {
            if (!member.value.IsObject())
                throw cuopt::json_error(file.filename().string() +
                                        ": field prices: expected {\"model\": {\"input_per_mtok\": "
                                        "x, \"output_per_mtok\": y}}");
            o.prices_json = cuopt::to_pretty_json(member.value);
            continue;
        }
        try {
            opt = app->get_option(flag);
        } catch (const CLI::OptionNotFound&) {
            throw cuopt::json_error(file.filename().string() + ": field " + key +
                                    ": unknown option");
        }
        if (opt->count() > 0 || key == "config") continue;  // the command line wins
        const rapidjson::Value& v = member.value;
        std::string value = v.IsString() ? v.GetString()
                            : v.IsBool() ? (v.GetBool() ? "true" : "false")
                                         : "";
        if (v.IsNumber())
            value = v.IsInt64() ? std::to_string(v.GetInt64()) : std::to_string(v.GetDouble());
        if (!v.IsString() && !v.IsNumber() && !v.IsBool())
            throw cuopt::json_error(file.filename().string() + ": field " + key +
                                    ": expected a string or a number");
        static const char* k_paths[] = {"reference",  "initial_kernel", "input_cases",
                                        "candidates", "results_dir",    "harness"};
        for (const char* p : k_paths)
            if (key == p && !value.empty() && fs::path(value).is_relative())
                value = (base / value).lexically_normal().string();
        opt->add_result(value);
        opt->run_callback();
    }
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
    define_run_options(optimize, options);
    optimize->add_flag("--quiet", quiet, "No progress lines on stderr");
    optimize->add_flag("--json", json, "Print summary.json on stdout at the end");
    CLI::App* check =
        app.add_subcommand("check", "Preflight: toolkit, driver, device, harness, manifest");
    define_run_options(check, options);
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
        apply_config(optimize->parsed() ? optimize : check, options);
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
