#include "orchestrator/commands/cli_options.hpp"

#include <filesystem>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace cuopt {

namespace fs = std::filesystem;

// The model proposer's options (--proposer llm, or auto with a key or base URL).
static void define_model_options(CLI::App* app, optimizer_options& o) {
    app->add_option("--provider", o.provider, "openai (and compatible servers) | anthropic")
        ->capture_default_str()
        ->check(CLI::IsMember({"openai", "anthropic"}));
    app->add_option("--model", o.model,
                    std::string("Model name (default ") + default_model(llm_provider::openai) +
                        ", or " + default_model(llm_provider::anthropic) + " for anthropic)");
    app->add_option("--reasoning-effort", o.reasoning_effort,
                    "OpenAI reasoning effort: none, minimal, low, medium, high, xhigh, or omit to "
                    "leave the field out (default: medium for OpenAI's own host, omit for any "
                    "other base URL)");
    app->add_option("--api", o.api,
                    "OpenAI API: responses, chat (Chat Completions, for OpenAI-compatible "
                    "servers) or auto (responses on OpenAI's own host, chat for any base URL)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "responses", "chat"}));
    app->add_option("--thinking-budget", o.thinking_budget,
                    "Anthropic: extended thinking's budget_tokens (at least 1024, below "
                    "--max-output-tokens); 0 leaves thinking to the model's default")
        ->capture_default_str()
        ->check(CLI::Range(0, 10000000));
    app->add_option("--max-output-tokens", o.max_output_tokens,
                    "Output tokens per model reply (a local server's context must hold them)")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000000));
    app->add_option("--max-output-tokens-retry", o.max_output_tokens_retry,
                    "A reply cut at --max-output-tokens is sent again once with this limit; 0 "
                    "never (default: twice the limit, at most 64000, on the provider's own host; "
                    "0 for any other base URL)");
    app->add_option("--request-timeout", o.request_timeout_s,
                    "Wall-clock limit per model request, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
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
    app->add_flag("--nvidia-research", o.nvidia_research,
                  "Offer the model an nvidia_docs tool: NVIDIA's CUDA guides, PTX ISA and tuning "
                  "guide, from allow-listed hosts only (more model and retrieval work)");
    app->add_option("--docs-hosts", o.docs_hosts,
                    "Comma-separated hosts nvidia_docs may read (and their subdomains)")
        ->capture_default_str();
    app->add_option("--docs-pages", o.docs_pages,
                    "Comma-separated pages a query searches (default: the Programming Guide, the "
                    "Best Practices Guide, the PTX ISA and the device's tuning guide)");
    app->add_option("--docs-cache", o.docs_cache,
                    "Folder of cached documentation pages (default ~/.cache/cuda-optimizer/docs)");
    app->add_option("--docs-max-fetches", o.docs_max_fetches,
                    "Documentation pages fetched per run (cached pages are free)")
        ->capture_default_str()
        ->check(CLI::Range(0, 10000));
    app->add_option("--docs-max-chars", o.docs_max_chars, "Characters per nvidia_docs answer")
        ->capture_default_str()
        ->check(CLI::Range(500, 1000000));
    app->add_option("--profile-timeout", o.profile_timeout_s,
                    "Wall-clock limit per ncu profile, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
}

// The gates the winner must pass after the search.
static void define_evidence_options(CLI::App* app, optimizer_options& o) {
    app->add_option("--holdout-cases", o.holdout_cases,
                    "Manifest-format cases never shown to a proposer; the winner must pass them");
    app->add_flag("--no-evidence", o.no_evidence,
                  "Skip the gates after the search (holdout, re-measure, sanitizer, ...)");
    app->add_option("--significance-runs", o.significance_runs,
                    "Interleaved harness runs per side when re-measuring the winner")
        ->capture_default_str()
        ->check(CLI::Range(2, 100));
    app->add_option("--evidence-candidates", o.evidence_candidates,
                    "Valid candidates checked in ranking order before the initial kernel")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app->add_option("--sanitizer", o.sanitizer,
                    "compute-sanitizer binary (default: PATH, then the CUDA toolkit)");
    app->add_flag("--no-sanitizer", o.no_sanitizer, "Do not run compute-sanitizer on the winner");
    app->add_flag("--allow-sanitizer-findings", o.allow_sanitizer_findings,
                  "compute-sanitizer findings warn instead of disqualifying");
    app->add_option("--sanitizer-timeout", o.sanitizer_timeout_s,
                    "Wall-clock limit per compute-sanitizer tool run, seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app->add_option("--stop-at-sol", o.search.stop_at_sol,
                    "Stop once every performance case is within this fraction of speed of light")
        ->check(CLI::Range(0.0, 1.0));
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
    define_evidence_options(app, o);
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

namespace {

// A config value as CLI11 would read it from the command line; paths relative to `base`.
std::string option_text(const std::string& source, const std::string& key,
                        const rapidjson::Value& v, const fs::path& base) {
    std::string value;
    if (v.IsString())
        value = v.GetString();
    else if (v.IsBool())
        value = v.GetBool() ? "true" : "false";
    else if (v.IsInt64())
        value = std::to_string(v.GetInt64());
    else if (v.IsUint64())
        value = std::to_string(v.GetUint64());
    else if (v.IsNumber())
        value = json_scalar_text(v);
    else
        throw json_error(source + ": field " + key + ": expected a string, a number or a boolean");
    static const char* k_paths[] = {"reference",     "initial_kernel", "input_cases",
                                    "candidates",    "results_dir",    "harness",
                                    "holdout_cases", "sanitizer",      "docs_cache"};
    for (const char* p : k_paths)
        if (key == p && !value.empty() && fs::path(value).is_relative())
            value = (base / value).lexically_normal().string();
    return value;
}

}  // namespace

void apply_config_text(CLI::App* app, optimizer_options& o, const std::string& text,
                       const fs::path& file) {
    const std::string source = file.filename().string();
    const rapidjson::Document d = parse_json(text, source);
    if (!d.IsObject()) throw json_error(source + ": expected an object of option names");
    for (const auto& member : d.GetObject()) {
        const std::string key = member.name.GetString();
        if (key == "prices") {
            if (!member.value.IsObject())
                throw json_error(source +
                                 ": field prices: expected {\"model\": {\"input_per_mtok\": x, "
                                 "\"output_per_mtok\": y}}");
            o.prices_json = to_pretty_json(member.value);
            continue;
        }
        std::string flag = "--" + key;
        for (char& c : flag)
            if (c == '_') c = '-';
        CLI::Option* opt = nullptr;
        try {
            opt = app->get_option(flag);
        } catch (const CLI::OptionNotFound&) {
            throw json_error(source + ": field " + key + ": unknown option");
        }
        if (opt->count() > 0 || key == "config") continue;  // the command line wins
        try {
            opt->add_result(option_text(source, key, member.value, file.parent_path()));
            opt->run_callback();
        } catch (const CLI::Error& e) {
            throw json_error(source + ": field " + key + ": " + e.what());
        }
    }
}

void apply_config(CLI::App* app, optimizer_options& o) {
    if (o.config.empty()) return;
    const fs::path file = fs::absolute(o.config);
    std::string text;
    try {
        text = read_text_file(file);
    } catch (const std::runtime_error& e) {
        throw json_error(e.what());
    }
    apply_config_text(app, o, text, file);
}

}  // namespace cuopt
