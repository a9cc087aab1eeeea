#pragma once
/// cuda-optimizer's settings as a plain struct: each option once, with its default
/// (here or in the struct it is part of) and one sentence of help; main.cpp maps flags
/// and --config keys onto it and shows these defaults in --help.

#include <cstdint>
#include <string>

#include "common/request.hpp"
#include "orchestrator/artifacts/cost_sheet.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evaluation/harness_workers.hpp"
#include "orchestrator/model/docs_library.hpp"
#include "orchestrator/model/llm_protocol.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// With --timing-mode adaptive and no --iterations, the most timed launches a case may take.
inline constexpr int k_adaptive_iterations_cap = 1000;

struct optimizer_options {
    std::string description;        // what the kernel computes, for the record (and the model)
    std::string signature;          // the kernel's C signature; the manifest must agree with it
    std::string reference;          // reviewed reference kernel: its outputs are the oracle
    std::string torch_reference;    // an imported problem's pytorch.json: PyTorch is the oracle
    std::string python;             // the interpreter with torch (default: found)
    std::string initial_kernel;     // iteration 0; must pass every case
    std::string input_cases;        // the manifest (input_cases.json)
    search_settings search;         // max_iterations, min_gain, max_repairs
    std::string proposer = "auto";  // auto | llm | autotune | files
    std::string candidates;         // folder of .cu files for --proposer files
    std::string results_dir = "results";  // run folders go here as run-NNN
    int device = 0;                       // GPU index
    /// "0,1": measure a batch on these GPUs at once (the first is --device); "" = --device alone
    std::string devices;
    int compile_threads = 0;          // NVRTC compile-ahead threads; 0 = hardware threads - devices
    bool no_compile_ahead = false;    // every run compiles its own kernel
    bool all_configurations = false;  // check: compile every tunable configuration, not the first
    std::string harness;              // cuda-harness binary (default: beside cuda-optimizer)
    /// Run kernels nobody reviewed (the model's, --candidates', a daemon job's) even where the
    /// harness cannot confine itself (no Landlock); the user's own run unconfined regardless.
    bool allow_unconfined = false;
    /// Set by the daemon on the jobs it starts (never by a job): every kernel of the run is
    /// untrusted, the initial and reference kernels too.
    bool daemon_job = false;
    double timeout_s = k_default_harness_timeout_s;  // wall-clock limit per harness run
    /// worker: persistent cuda-harness --worker processes; process: one process per run
    harness_isolation isolation = harness_isolation::worker;
    double profile_timeout_s =
        300;                 // wall-clock limit per ncu profile (it replays the kernel per pass)
    std::uint64_t seed = 1;  // autotune's sampling seed
    int batch = 8;           // autotune configurations per iteration
    timing_config timing;    // warmup, iterations (the cap when adaptive), mode, timer, ...
    bool quiet = false;      // no progress lines
    bool json = false;       // print summary.json on stdout at the end
    std::string config;      // JSON file with the same keys; flags win
    std::string resume;      // --resume RUN_DIR: continue that run (its own settings, not these)
    // The model proposer (--proposer llm, or auto with a key or base URL configured):
    std::string provider = "openai";  // openai (and compatible servers) | anthropic
    std::string model;                // "" = default_model(provider)
    std::string reasoning_effort;     // "" = medium for OpenAI's host, omitted elsewhere; "omit"
    std::string api = "auto";  // OpenAI: responses | chat | auto (responses on OpenAI's own host)
    int max_output_tokens = llm_settings{}.max_output_tokens;  // per model reply
    int max_output_tokens_retry = -1;  // a cut reply's one retry: -1 auto (by host), 0 never
    int thinking_budget = 0;           // Anthropic extended thinking's budget_tokens; 0 = not sent
    double request_timeout_s = 600;    // per model request (both official SDKs' default)
    std::string base_url;  // API base URL (also $OPENAI_BASE_URL): a local vLLM or llama.cpp server
    double temperature = -1;    // sent only when >= 0, for models that accept it
    int max_model_calls = 200;  // per run; budget_exhausted when spent
    long long max_tokens_total =
        5000000;                   // prompt + completion per run; budget_exhausted when spent
    bool use_nsight = false;       // offer the model an ncu profile tool
    bool nvidia_research = false;  // offer the model the nvidia_docs tool
    std::string docs_hosts = k_nvidia_docs_host;  // comma-separated allow-list: see url_allowed
    std::string docs_pages;     // comma-separated pages a query searches ("" = guides)
    std::string docs_cache;     // "" = $XDG_CACHE_HOME or ~/.cache/cuda-optimizer/docs
    int docs_max_fetches = 20;  // documentation pages fetched per run
    int docs_max_chars = 8000;  // characters per nvidia_docs answer
    std::string
        prices_json;  // config "prices": {"model": {"input_per_mtok": x, "output_per_mtok": y}}
    // Evidence on the winner (orchestrator/evidence/winner_evidence.hpp):
    std::string holdout_cases;    // manifest-format cases never shown to a proposer
    bool no_evidence = false;     // skip the gates after the search (not recommended)
    int significance_runs = 5;    // interleaved harness runs per side when re-measuring
    int evidence_candidates = 5;  // valid candidates checked in ranking order at most
    int rerank = 3;         // the best this many re-measured before the gates, gated in that order
    std::string sanitizer;  // compute-sanitizer binary ("" = PATH, then the toolkit)
    bool no_sanitizer = false;  // skip compute-sanitizer even where it is found
    std::string cuobjdump;  // the instruction audit's disassembler ("" = PATH, then the toolkit)
    bool allow_sanitizer_findings = false;  // findings warn instead of disqualifying
    bool fail_on_no_go = false;             // exit 30 (no_go) when the verdict is no_go
    double sanitizer_timeout_s = 600;       // per compute-sanitizer tool run
    report_economics
        economics;  // report.html's cost sheet: invocations, GPU-hour and engineer cost
};

}  // namespace cuopt
