#pragma once
/// One `optimize` run: what its phases build (run_context) and the phases run_optimize calls in
/// turn, each defined in the file named for it (run_proposer, run_opening, run_scoring,
/// run_baselines, run_evidence, run_closing; the rest in optimize_command.cpp). Each phase
/// either fills in the run's context or throws run_failure with the exit code and a one-line
/// reason.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/commands/model_settings.hpp"
#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/commands/oracle.hpp"
#include "orchestrator/commands/resume_run.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/evaluation/ncu_profile.hpp"
#include "orchestrator/evidence/scorer_pin.hpp"
#include "orchestrator/evidence/winner_evidence.hpp"
#include "orchestrator/proposers/llm_proposer.hpp"

namespace cuopt {

/// The harness runner --isolation asks for: a process per request, or the workers.
std::unique_ptr<process_runner> make_runner(const optimizer_options& o);

/// Everything the phases build, in the order they build it.
struct run_context {
    explicit run_context(const optimizer_options& options) : o(options) {}
    const optimizer_options& o;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // RUN/.lock, held until the run ends; before the runner, so that it outlives every program
    // it is handed down to (none starts once it has gone).
    run_lock lock;
    std::unique_ptr<process_runner> runner = make_runner(o);
    // Every harness run's GPU busy time, per GPU of --devices (the evaluator adds to it).
    std::shared_ptr<gpu_busy_meter> busy = std::make_shared<gpu_busy_meter>(devices_of(o));
    run_info info;
    model_config model;
    proposer_kind kind = proposer_kind::autotune;
    std::optional<manifest> contract;
    std::optional<kernel_signature> signature;
    candidate initial;
    std::filesystem::path run;
    std::unique_ptr<attempt_evaluator> evaluator;
    oracle_files oracle;
    std::unique_ptr<http_transport> transport;
    std::unique_ptr<llm_client> client;
    std::unique_ptr<ncu_profiler> profiler;
    std::unique_ptr<docs_library> docs;
    std::unique_ptr<proposer> prop;
    std::map<std::string, sol_floor> floors;                        // the first device's
    std::map<int, std::map<std::string, sol_floor>> device_floors;  // every device's, by index
    std::optional<manifest> holdout;
    oracle_files holdout_oracle;
    scorer_pin pin;  // what decides the verdict, hashed before the search and again after
    std::optional<candidate> reference;
    std::optional<torch_reference> torch;  // an imported problem's PyTorch oracle
    std::optional<candidate> own;  // the user's initial_kernel beside PyTorch eager (start_from)
    std::optional<attempt_result> vendor;           // the vendor library on the declaring cases
    std::optional<attempt_result> pytorch_compile;  // an imported problem's torch.compile row
    std::map<int, attempt_result> device_vendors;   // the same on every other device of --devices
    std::optional<recorded_run> recorded;           // --resume: what run.json said
    std::optional<search_record> record;            // --resume: the attempts and candidates so far
};

// optimize_command.cpp

/// The kernel's name: the signature's, else the first __global__ function in the source.
std::string entry_of(const std::string& source, const std::optional<kernel_signature>& sig);

/// A device's --device-info facts, by its index in --devices (the defaults when none was read).
const device_facts& device_of(const run_context& c, int device);

double seconds_since(std::chrono::steady_clock::time_point start);

// run_proposer.cpp

/// Auto means the model when a key or a base URL is configured, else the autotuner.
void choose_proposer(run_context& c);

/// Proposers that need no run folder are made before one is created (their errors are usage
/// errors).
void make_offline_proposer(run_context& c);

/// The model proposer talks to its API and records every exchange in the run folder.
void make_model_proposer(run_context& c);

/// --resume: the model calls, tokens and documentation fetches the run spent before count toward
/// its budgets, and its model-NNN.json records are numbered on after them.
void restore_spending(run_context& c);

// run_opening.cpp

/// run.json while the run is under way (no stop reason yet): what --resume reads back.
void write_progress(run_context& c, const search_outcome& so_far);

/// The run folder, the evaluator, the manifest copy, the hashes and the settings of record.
void open_run(run_context& c);

// run_scoring.cpp

std::optional<candidate> reference_candidate(const run_context& c);

/// The holdout's cases and their oracle, before the search: a holdout without an oracle is an
/// error now, not after an hour of searching.
void prepare_holdout(run_context& c);

/// Pins what scores the run once its oracle and holdout are ready (scorer_pin.hpp).
void pin_scorer(run_context& c);

/// Before the verdict: a pinned file that changed ends the run in harness_error, never a verdict.
void check_scorer(const run_context& c);

// run_baselines.cpp

/// The vendor library on the cases that declare it, before the search, so every progress line
/// can be read against it; its outputs are checked against the oracle like any candidate's.
/// With --devices, on every GPU (RUN/vendor on the first, RUN/vendor-device-N on GPU N): each
/// attempt is measured on one of them, and is read against the library on the same GPU.
void measure_vendor(run_context& c);

/// An imported problem's torch.compile, once, beside the eager baseline: a row of the closing
/// table's story (and summary.json's pytorch_compile), never the verdict's baseline.
void measure_pytorch_compile(run_context& c);

// run_evidence.cpp

/// The cases whose inputs are not all files: their values depend on seeds and launch indices.
std::set<std::string> cases_with_generated_inputs(const manifest& m);

/// The gates on the winner; it may move the best to a candidate that passes them.
evidence_report evidence(run_context& c, search_outcome& outcome);

// run_closing.cpp

/// The closing lines (the table, the confinement, the verdict last) and the exit code the
/// outcome calls for, once summary.json, run.json and the report (`reported`) are written.
int close_run(const run_context& c, const search_outcome& outcome, const evidence_report& ev,
              const std::string& summary, bool reported);

}  // namespace cuopt
