#include "orchestrator/commands/cli_options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/cli_value_checks.hpp"
#include "common/device_list.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/model/docs_library.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace cuopt {

// What is wrong with the first bad entry of a --docs-hosts list; "" when none is.
static std::string docs_hosts_problem(const std::string& list) {
    for (const std::string& entry : comma_items(list))
        if (std::string why = entry.empty() ? "" : docs_host_problem(entry); !why.empty())
            return why;
    return "";
}

// The model proposer's options (--proposer llm, or auto with a key or base URL).
static void define_model_options(CLI::App* app, optimizer_options& o) {
    app->add_option("--provider", o.provider, "openai (and compatible servers) | anthropic")
        ->capture_default_str()
        ->check(CLI::IsMember({"openai", "anthropic"}));
    app->add_option("--model", o.model,
                    std::string("Model name (default ") + default_model(llm_provider::openai) +
                        ", or " + default_model(llm_provider::anthropic) + " for anthropic)");
    app->add_option("--reasoning-effort", o.reasoning_effort,
                    "Reasoning effort (OpenAI's reasoning.effort, Anthropic's "
                    "output_config.effort): a value the model takes (gpt-6.1-terra: none, low, "
                    "medium, high, xhigh, max; docs/MODELS.md lists each model's), or omit to "
                    "leave the field out (default: the model's own default on its provider's "
                    "host, omit for any other base URL)");
    app->add_option("--api", o.api,
                    "OpenAI API: responses, chat (Chat Completions, for OpenAI-compatible "
                    "servers) or auto (responses on OpenAI's own host, chat for any base URL)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "responses", "chat"}));
    app->add_option("--thinking-budget", o.thinking_budget,
                    "Anthropic: extended thinking's budget_tokens (at least 1024, below "
                    "--max-output-tokens) for models that take a budget; a model that thinks "
                    "adaptively only gets adaptive thinking instead (said on stderr); 0 leaves "
                    "thinking to the model's default")
        ->capture_default_str()
        ->check(whole_number_from(0, 10000000));
    app->add_option("--max-output-tokens", o.max_output_tokens,
                    "Output tokens per model reply (a local server's context must hold them)")
        ->capture_default_str()
        ->check(whole_number_from(1, 10000000));
    app->add_option("--max-output-tokens-retry", o.max_output_tokens_retry,
                    "A reply cut at --max-output-tokens is sent again once with this limit; 0 "
                    "never (default: twice the limit, at most 64000, on the provider's own host; "
                    "0 for any other base URL)")
        ->check(whole_number_from(-1, 10000000));  // -1: the default, auto (kept by --resume)
    app->add_option("--request-timeout", o.request_timeout_s,
                    "Wall-clock limit per model request, seconds")
        ->capture_default_str()
        ->check(duration_seconds());
    app->add_option("--base-url", o.base_url,
                    "API base URL, e.g. http://127.0.0.1:8000/v1 for vLLM (also $OPENAI_BASE_URL)");
    app->add_option("--temperature", o.temperature,
                    "Sampling temperature, for models that accept one")
        ->check(number_from(0.0, 2.0));  // nan and inf too
    app->add_option("--max-model-calls", o.max_model_calls,
                    "Model calls per run before budget_exhausted")
        ->capture_default_str()
        ->check(whole_number_from(1, 1000000));
    app->add_option("--max-tokens-total", o.max_tokens_total,
                    "Tokens per run before budget_exhausted")
        ->capture_default_str()
        ->check(whole_number_from(1LL, 1000000000000LL));
    app->add_flag("--use-nsight", o.use_nsight,
                  "Offer the model a profile tool (ncu on the current best)");
    app->add_flag("--nvidia-research", o.nvidia_research,
                  "Offer the model an nvidia_docs tool: NVIDIA's CUDA guides, PTX ISA and tuning "
                  "guide, from allow-listed hosts only (more model and retrieval work)");
    app->add_option("--docs-hosts", o.docs_hosts,
                    "Comma-separated hosts nvidia_docs may read over https on port 443 (and their "
                    "subdomains); an entry http(s)://host:port allows exactly that origin")
        ->type_name("LIST")
        ->capture_default_str()
        ->check(CLI::Validator([](std::string& v) { return docs_hosts_problem(v); }, ""));
    app->add_option("--docs-pages", o.docs_pages,
                    "Comma-separated pages a query searches (default: the Programming Guide, the "
                    "Best Practices Guide, the PTX ISA and the device's tuning guide)");
    app->add_option("--docs-cache", o.docs_cache,
                    "Folder of cached documentation pages (default ~/.cache/cuda-optimizer/docs)")
        ->type_name("DIR");
    app->add_option("--docs-max-fetches", o.docs_max_fetches,
                    "Documentation pages fetched per run (cached pages are free)")
        ->capture_default_str()
        ->check(whole_number_from(0, 10000));
    app->add_option("--docs-max-chars", o.docs_max_chars, "Characters per nvidia_docs answer")
        ->capture_default_str()
        ->check(whole_number_from(500, 1000000));
    app->add_option("--profile-timeout", o.profile_timeout_s,
                    "Wall-clock limit per ncu profile, seconds")
        ->capture_default_str()
        ->check(duration_seconds());
}

// The gates the winner must pass after the search.
static void define_evidence_options(CLI::App* app, optimizer_options& o) {
    app->add_flag("--no-evidence", o.no_evidence,
                  "Skip the gates after the search (holdout, re-measure, sanitizer, ...)");
    app->add_option("--significance-runs", o.significance_runs,
                    "Interleaved harness runs per side when re-measuring the winner")
        ->capture_default_str()
        ->check(whole_number_from(2, 100));
    app->add_option("--evidence-candidates", o.evidence_candidates,
                    "Valid candidates checked in ranking order before the initial kernel")
        ->capture_default_str()
        ->check(whole_number_from(1, 1000));
    app->add_option("--rerank", o.rerank,
                    "The best K candidates re-measured against the initial kernel before the "
                    "gates and gated in that order (0 or 1: the search's order)")
        ->capture_default_str()
        ->check(whole_number_from(0, 20));
    app->add_flag("--fail-on-no-go", o.fail_on_no_go,
                  "Exit 30 (no_go) when the verdict is no_go, not 0 (for CI and scripts)");
    app->add_flag("--allow-sanitizer-findings", o.allow_sanitizer_findings,
                  "compute-sanitizer findings warn instead of disqualifying");
    app->add_option("--sanitizer-timeout", o.sanitizer_timeout_s,
                    "Wall-clock limit per compute-sanitizer tool run, seconds")
        ->capture_default_str()
        ->check(duration_seconds());
    app->add_option("--stop-at-sol", o.search.stop_at_sol,
                    "Stop once every performance case is within this fraction of speed of light")
        ->check(number_from(0.0, 1.0));
}

namespace {

// A choice among a vocabulary's words (--timing-mode fixed|adaptive), stored as its enum; the
// default shown is the struct's own.
template <class Enum, std::size_t N>
CLI::Option* add_choice(CLI::App* app, const std::string& flag, Enum& value,
                        const name_table<Enum, N>& table, const std::string& help) {
    std::vector<std::string> names;
    for (const auto& e : table.entries) names.emplace_back(e.name);
    return app
        ->add_option_function<std::string>(
            flag, [&value, &table](const std::string& s) { value = *table.parse(s); }, help)
        ->check(CLI::IsMember(names))
        ->default_str(table.name(value));
}

}  // namespace

// How each measured case is timed: the clock and when the timed loop stops.
static void define_timing_options(CLI::App* app, optimizer_options& o) {
    app->add_option("--warmup", o.timing.warmup, "Warm-up launches per measured case")
        ->capture_default_str()
        ->check(whole_number_from(0, 100000));
    app->add_option("--iterations", o.timing.iterations,
                    "Timed launches per measured case; with --timing-mode adaptive the most it "
                    "may take (then " +
                        std::to_string(k_adaptive_iterations_cap) + " unless given)")
        ->capture_default_str()
        ->check(whole_number_from(1, 100000));
    add_choice(app, "--isolation", o.isolation, k_harness_isolations,
               "worker: persistent cuda-harness --worker processes (one per device, the "
               "reference apart from candidates, replaced after a crash, hang or sticky error); "
               "process: a fresh harness process per run");
    add_choice(app, "--timing-mode", o.timing.mode, k_timing_modes,
               "fixed: --iterations timed launches; adaptive: stop once --min-samples, "
               "--min-time-ms and --target-rse are met");
    add_choice(app, "--timer", o.timing.timer, k_timer_choices,
               "auto: CUPTI's kernel records where CUPTI loads and is free, CUDA events "
               "otherwise; events: CUDA events only");
    app->add_option("--min-samples", o.timing.min_samples,
                    "Adaptive: at least this many timed launches per case")
        ->capture_default_str()
        ->check(whole_number_from(5, 100000));
    app->add_option("--min-time-ms", o.timing.min_time_ms,
                    "Adaptive: at least this much GPU time summed over a case's samples, ms")
        ->capture_default_str()
        ->check(number_from(0.0, 600000.0, "ms"));
    app->add_option("--target-rse", o.timing.target_rse,
                    "Adaptive: stop once the median's relative standard error is at most this")
        ->capture_default_str()
        ->check(number_above_at_most(0, 1));
}

std::string settle_timing_options(const CLI::App* app, optimizer_options& o) {
    timing_config& t = o.timing;
    if (t.mode != timing_mode::adaptive) return "";
    if (app->get_option("--iterations")->count() == 0) t.iterations = k_adaptive_iterations_cap;
    if (t.min_samples > t.iterations)
        return "--min-samples " + std::to_string(t.min_samples) + " is more than --iterations " +
               std::to_string(t.iterations) +
               ", the most timed launches an adaptive case takes; give a smaller --min-samples or "
               "a larger --iterations";
    return "";
}

// The options check uses: what names a file or a place, and what the preflight runs with.
void define_check_options(CLI::App* app, optimizer_options& o) {
    app->option_defaults()->multi_option_policy(
        CLI::MultiOptionPolicy::TakeLast);  // the last one given wins
    app->add_option("--config", o.config,
                    "JSON file with the same keys (paths relative to it); flags win")
        ->type_name("FILE");
    app->add_option("--signature", o.signature,
                    "The kernel's C signature; the manifest must agree with it")
        ->type_name("\"void f(...)\"");
    app->add_option("--reference", o.reference,
                    "Reviewed reference kernel (.cu): its outputs are the oracle")
        ->type_name("FILE");
    app->add_option("--initial-kernel", o.initial_kernel, "Iteration 0 (.cu); must pass every case")
        ->type_name("FILE");
    app->add_option("--torch-reference", o.torch_reference,
                    "An imported problem's pytorch.json: its PyTorch forward is the oracle")
        ->type_name("FILE")
        ->excludes("--reference");
    app->add_option("--python", o.python,
                    "Python with torch for --torch-reference (default: python3 on PATH, then "
                    "/usr/bin/python3)")
        ->type_name("FILE");
    app->add_option("--input-cases", o.input_cases, "The manifest, input_cases.json")
        ->type_name("FILE");
    app->add_option("--holdout-cases", o.holdout_cases,
                    "Manifest-format cases never shown to a proposer; the winner must pass them")
        ->type_name("FILE");
    app->add_option("--results-dir", o.results_dir, "Where run-NNN folders go")
        ->type_name("DIR")
        ->capture_default_str();
    app->add_option("--device", o.device, "GPU index")
        ->capture_default_str()
        ->check(whole_number_from(0, k_max_device_index));
    app->add_option("--devices", o.devices,
                    "GPUs that measure a batch at once, one measurement per GPU at a time (0,1); "
                    "the first becomes --device")
        ->type_name("LIST")
        ->check(CLI::Validator([](std::string& v) { return device_list_problem(v); }, ""))
        ->each([&o](const std::string& v) { o.device = parse_device_list(v).front(); });
    app->add_option("--harness", o.harness, "cuda-harness binary (default: beside cuda-optimizer)")
        ->type_name("FILE");
    app->add_option("--timeout", o.timeout_s, "Wall-clock limit per harness run, seconds")
        ->capture_default_str()
        ->check(duration_seconds());
    app->add_option("--sanitizer", o.sanitizer,
                    "compute-sanitizer binary (default: PATH, then the CUDA toolkit)")
        ->type_name("FILE");
    app->add_flag("--no-sanitizer", o.no_sanitizer, "Do not run compute-sanitizer on the winner");
    app->add_option("--cuobjdump", o.cuobjdump,
                    "cuobjdump binary for the winner's instruction audit (default: PATH, then the "
                    "CUDA toolkit)")
        ->type_name("FILE");
    app->add_flag("--allow-unconfined", o.allow_unconfined,
                  "Run the model's or --candidates' kernels even where the harness cannot confine "
                  "itself (no Landlock): they can then read any file you can");
    app->add_flag("--daemon-job", o.daemon_job,
                  "Set by the daemon on its jobs: every kernel is untrusted")
        ->group("");  // hidden: the daemon's, never a person's
}

// Everything else optimize takes, each defined once with its help; the defaults shown are the
// struct's own (optimizer_options and the structs it holds).
void define_run_options(CLI::App* app, optimizer_options& o) {
    define_check_options(app, o);
    app->add_option("--description", o.description,
                    "What the kernel computes (recorded; shown to a model)");
    app->add_option("--max-iterations", o.search.max_iterations,
                    "Proposer iterations after the initial kernel")
        ->capture_default_str()
        ->check(whole_number_from(0, 10000));
    app->add_option(
           "--proposer", o.proposer,
           "auto | llm | autotune | files (auto: the model when a key or base URL is configured)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "llm", "autotune", "files"}));
    define_model_options(app, o);
    define_evidence_options(app, o);
    app->add_option("--candidates", o.candidates, "Folder of .cu candidates for --proposer files")
        ->type_name("DIR");
    app->add_option("--seed", o.seed, "Autotune sampling seed")
        ->capture_default_str()
        ->check(whole_number_from(0, 999'999'999'999'999));  // exact in a double; never wraps
    app->add_option("--batch", o.batch, "Autotune configurations per iteration")
        ->capture_default_str()
        ->check(whole_number_from(1, 1000));
    app->add_option("--min-gain", o.search.min_gain,
                    "A new best must be faster by more than this fraction")
        ->capture_default_str()
        ->check(number_from(0.0, 1.0));
    app->add_option("--max-repairs", o.search.max_repairs, "Compile-error repairs per iteration")
        ->capture_default_str()
        ->check(whole_number_from(0, 100));
    app->add_option("--compile-threads", o.compile_threads,
                    "CPU threads that compile a batch's next candidates while the GPUs measure "
                    "(0: hardware threads minus devices, at least 1)")
        ->capture_default_str()
        ->check(whole_number_from(0, 256));
    app->add_flag("--no-compile-ahead", o.no_compile_ahead,
                  "Compile nothing ahead: each harness run compiles its own kernel");
    define_timing_options(app, o);
}

}  // namespace cuopt
