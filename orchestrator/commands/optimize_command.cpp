// cuda-optimizer optimize: the gated search, as phases. Each phase either fills in the
// run's context or throws run_failure with the exit code and a one-line reason.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <iostream>
#include <set>

#include "common/cli_value_checks.hpp"
#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/artifacts/heatmap.hpp"
#include "orchestrator/artifacts/report_html.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/artifacts/winner_files.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/confinement_policy.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/commands/model_settings.hpp"
#include "orchestrator/commands/oracle.hpp"
#include "orchestrator/commands/preflight.hpp"
#include "orchestrator/commands/resume_run.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/evaluation/ncu_profile.hpp"
#include "orchestrator/evaluation/python_child.hpp"
#include "orchestrator/evaluation/torch_baseline.hpp"
#include "orchestrator/evidence/scorer_pin.hpp"
#include "orchestrator/evidence/winner_evidence.hpp"
#include "orchestrator/proposers/llm_proposer.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::unique_ptr<process_runner> make_runner(const optimizer_options& o) {
    if (o.isolation == harness_isolation::process) return make_child_process_runner();
    return harness_workers::make(o.harness, make_child_process_runner());
}

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
    std::string device_json = "null";
    std::optional<manifest> contract;
    std::optional<kernel_signature> signature;
    candidate initial;
    fs::path run;
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

// The kernel's name: the signature's, else the first __global__ function in the source.
std::string entry_of(const std::string& source, const std::optional<kernel_signature>& sig) {
    return sig ? sig->entry : first_kernel_name(source);
}

// From cuda-harness --device-info: "sm_90", or "" when unknown.
std::string device_arch(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    return text_of(d, "arch");
}

// From cuda-harness --device-info: "NVIDIA H200", or "unknown".
std::string device_name(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    const std::string name = text_of(d, "name");
    return name.empty() ? "unknown" : name;
}

// A device's --device-info, by its index in --devices ("null" when none was read).
std::string device_json_of(const run_context& c, int device) {
    const auto info = c.info.devices_json.find(device);
    if (info != c.info.devices_json.end()) return info->second;
    return device == devices_of(c.o).front() ? c.device_json : "null";
}

// "0,1".
std::string device_list_text(const std::vector<int>& devices) {
    std::string out;
    for (const int d : devices) out += (out.empty() ? "" : ",") + std::to_string(d);
    return out;
}

// From cuda-harness --device-info; 0 when unknown.
// The harness's --device-info says "simulated": true (fake-harness).
bool device_simulated(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    return bool_of(d, "simulated").value_or(false);
}

int max_threads_per_block(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    const std::optional<long long> n = integer_of(d, "max_threads_per_block");
    return n && *n >= INT_MIN && *n <= INT_MAX ? static_cast<int>(*n) : 0;
}

// Auto means the model when a key or a base URL is configured, else the autotuner.
void choose_proposer(run_context& c) {
    c.model = read_model_config(c.o);
    const bool configured = c.model.configured;
    const std::string& p = c.o.proposer;
    if (p == "auto")
        c.kind = configured ? proposer_kind::llm : proposer_kind::autotune;
    else if (const auto k = k_proposer_kinds.parse(p);
             k && *k != proposer_kind::initial && *k != proposer_kind::reference)
        c.kind = *k;
    else
        throw run_failure(
            exit_code::usage,
            "--proposer: expected auto, llm, autotune or files, got " + quote_value(p));
    if (c.kind == proposer_kind::llm && !configured)
        throw run_failure(exit_code::usage,
                          "--proposer llm needs a key: set " + c.model.key_name +
                              " (or put it in ./.env), or give --base-url for a local server");
    c.info.proposer = c.kind;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --torch-reference: its problem and the interpreter that runs it (on the GPU when the real
// harness measures and the interpreter's torch sees one).
std::optional<torch_reference> torch_reference_of(const run_context& c) {
    if (c.o.torch_reference.empty()) return std::nullopt;
    if (c.o.signature.empty())
        throw run_failure(exit_code::invalid_request,
                          "--torch-reference needs the kernel's --signature (import writes it)");
    torch_reference t;
    try {
        t.problem = read_torch_problem(c.o.torch_reference, *c.contract);
        const auto runner = make_child_process_runner();
        t.python = find_python(c.o.python, *runner);
    } catch (const python_error& e) {
        throw run_failure(exit_code::preflight_failed, e.what());
    } catch (const json_error& e) {
        throw run_failure(exit_code::invalid_request, e.what());
    }
    t.gpu = t.python.cuda;
    if (!c.o.quiet)
        std::cerr << "cuda-optimizer: the oracle is PyTorch " << t.python.torch_version << " ("
                  << t.python.path << ", on the " << (t.gpu ? "GPU" : "CPU")
                  << "): " << t.problem.source.filename().string() << "'s " << t.problem.entry
                  << "\n";
    return t;
}

// The preflight (it checks everything below), then the manifest, the signature and the initial
// kernel.
void check_inputs(run_context& c) {
    const preflight_report pre = run_preflight(c.o, *c.runner);
    if (const preflight_check* f = pre.first_failure()) {
        const bool own_words =
            f->name == "manifest valid" || f->name == "holdout valid" || f->name == "confinement";
        throw run_failure(f->code, own_words ? f->detail
                                             : f->name + ": " + f->detail +
                                                   (f->fix.empty() ? "" : "; fix: " + f->fix));
    }
    c.info.simulated = device_simulated(pre.device_json);
    if (c.info.simulated)  // before anything else, --quiet or not: no figure below is a GPU's
        std::cerr << "cuda-optimizer: FAKE RUN: " << c.o.harness << " simulates a GPU ("
                  << device_name(pre.device_json)
                  << "); no time, clock, power or speedup in this run was measured on one\n";
    c.info.confinement = confinement_record{pre.harness_confinement, c.o.allow_unconfined};
    if (const std::string w = unconfined_warning(pre.harness_confinement, c.o); !w.empty())
        std::cerr << "cuda-optimizer: warning: " << w << "\n";
    c.device_json = c.info.device_json = pre.device_json;
    const std::vector<int> devices = devices_of(c.o);
    for (std::size_t i = 0; i < devices.size() && i < pre.devices_json.size(); ++i)
        c.info.devices_json[devices[i]] = pre.devices_json[i];
    c.contract = read_manifest(c.o.input_cases);
    if (!c.o.signature.empty()) c.signature = parse_kernel_signature(c.o.signature);
    c.torch = torch_reference_of(c);
    if (c.torch && c.o.initial_kernel.empty() && c.kind == proposer_kind::autotune)
        throw run_failure(exit_code::usage,
                          "an imported problem without an initial_kernel gives the autotuner "
                          "nothing to tune: use --proposer llm (or files), or give an "
                          "initial_kernel");
    if (c.torch)  // PyTorch eager is the baseline; the user's own kernel, if any, one more row
        c.initial = pytorch_candidate(*c.torch, "eager", c.signature->entry);
    if (c.o.initial_kernel.empty()) return;
    candidate& k = c.torch ? c.own.emplace() : c.initial;
    k.source = read_text_file(c.o.initial_kernel);
    k.entry = entry_of(k.source, c.signature);
    k.proposer = proposer_kind::initial;
    k.label = fs::path(c.o.initial_kernel).filename().string();
    k.rationale = "the initial kernel";
    k.tunables = c.contract->default_tunables();
}

// Proposers that need no run folder are made before one is created (their errors are usage errors).
void make_offline_proposer(run_context& c) {
    if (c.kind == proposer_kind::files && c.o.candidates.empty())
        throw run_failure(exit_code::usage, "--proposer files needs --candidates DIR");
    c.model.prices = read_price_table(c.o);
    try {
        if (c.kind == proposer_kind::autotune)
            c.prop = make_autotune_proposer(*c.contract, c.o.seed, c.o.batch,
                                            max_threads_per_block(c.device_json));
        else if (c.kind == proposer_kind::files)
            c.prop = make_files_proposer(c.o.candidates);
    } catch (const std::exception& e) {
        throw run_failure(exit_code::usage, e.what());
    }
    // Warnings about the model's flags are printed even with --quiet, as every warning is.
    if (c.kind == proposer_kind::llm)
        for (const std::string& note : c.model.notes)
            std::cerr << "cuda-optimizer: warning: " << note << "\n";
    if (c.o.quiet) return;
    std::cerr << "cuda-optimizer: proposer " << to_string(c.kind);
    const llm_settings& m = c.model.settings;
    if (c.kind == proposer_kind::llm)
        std::cerr << " (" << k_llm_providers.name(m.provider) << ", " << m.model << ", "
                  << api_name(m) << " API at " << api_url(m)
                  << (m.reasoning_effort.empty() ? "" : ", effort " + m.reasoning_effort)
                  << (m.thinking_budget > 0
                          ? ", thinking budget " + std::to_string(m.thinking_budget)
                      : m.adaptive_thinking ? ", adaptive thinking"
                                            : "")
                  << ")";
    else if (c.o.proposer == "auto")
        std::cerr << " (auto: no model is configured)";
    std::cerr << "\n";
}

// The cost sheet's economics, where given, among the settings of record: `report RUN_DIR` then
// shows the same figures without the flags.
void record_economics(const report_economics& e, run_info& info) {
    const std::pair<const char*, std::optional<double>> economics[] = {
        {"invocations_per_month", e.invocations_per_month},
        {"gpu_hour_cost_usd", e.gpu_hour_cost_usd},
        {"engineer_hours", e.engineer_hours},
        {"engineer_rate_usd", e.engineer_rate_usd}};
    for (const auto& [key, value] : economics)
        if (value) info.settings[key] = *value;
}

// The run folder, the evaluator, the manifest copy, the hashes and the settings of record.
// run.json while the run is under way (no stop reason yet): what --resume reads back.
void write_progress(run_context& c, const search_outcome& so_far) {
    c.info.wall_s = seconds_since(c.started);
    c.info.gpu_busy = c.busy->record();
    write_file_durable(c.run / "run.json", run_json(c.info, so_far));
}

// The hashes an imported problem adds to hashes_before_oracle's: the user's own kernel beside
// eager, the PyTorch source (the reference) and its mapping.
void add_problem_hashes(const run_context& c, std::map<std::string, std::string>& h) {
    if (c.own) h["initial_kernel"] = sha256_hex(c.own->source);
    if (!c.torch) return;
    h["reference"] = sha256_file_hex(c.torch->problem.source);
    h["torch_reference"] = sha256_file_hex(c.o.torch_reference);
}

// --resume: the run's record against what goes in now (refused at the first difference, before
// anything in the folder changes), then its attempts and candidates read back, the attempt
// folders that were in flight and the evidence stage's partial work cleared.
void reopen_run(run_context& c) {
    c.recorded = read_recorded_run(c.run);
    c.lock = run_lock(c.run);  // before anything in the folder changes
    check_same_device(*c.recorded, fingerprint_of(c.device_json));
    run_info now = c.info;
    now.sha256 = hashes_before_oracle(c.o, *c.contract, c.initial);
    add_problem_hashes(c, now.sha256);
    check_unchanged(*c.recorded, now, c.o, hash_stage::before_oracle);
    c.record = read_search_record(c.run, *c.contract, c.initial);
    // The last refusal is behind: from here the folder changes.
    if (const int partial = remove_partial_writes(c.run); partial > 0 && !c.o.quiet)
        std::cerr << "cuda-optimizer: removed " << partial
                  << " partial file(s) the stopped run was writing (*.tmp-*)\n";
    resume_entry entry{
        utc_now(), c.info.command_line, static_cast<int>(c.record->history.size()), {}};
    for (const fs::path& f : in_flight_folders(c.run, *c.record)) {
        entry.in_flight.push_back(f.lexically_relative(c.run).generic_string());
        fs::remove_all(f);
    }
    fs::remove_all(c.run / "evidence");
    for (attempt_result& r : c.record->history) {  // the evaluator notes each valid case's floor
        const auto own = c.device_floors.find(r.device);  // the floors of the GPU that measured it
        const auto& floors = own == c.device_floors.end() ? c.floors : own->second;
        for (case_evaluation& ce : r.cases)
            if (const auto f = floors.find(ce.name);
                f != floors.end() &&
                (r.verdict == verdict::valid || r.verdict == verdict::impossible_time))
                ce.floor_ms = f->second.floor_ms;
    }
    c.info.command_line = c.recorded->command_line;
    c.info.started_utc = c.recorded->started_utc;
    c.info.resumes = c.recorded->resumes;
    c.info.resumes.push_back(entry);
    c.started -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(c.recorded->wall_s));  // times count from the run's start
    if (!c.o.quiet)
        std::cerr << "cuda-optimizer: " << entry.attempts_kept
                  << " attempt(s) kept from history.json, " << entry.in_flight.size()
                  << " in flight evaluated again\n";
}

std::set<std::string> cases_with_generated_inputs(const manifest& m);

// A case whose expected files were made from generated inputs: those must stay the public
// generator's, so such a run is not keyed. "" when there is none.
std::string case_with_expected_generated(const manifest& m) {
    const std::set<std::string> generated = cases_with_generated_inputs(m);
    for (const manifest_case& mc : m.cases)
        if (!mc.expected.empty() && generated.count(mc.name)) return mc.name;
    return "";
}

// The run's secret for its generated inputs: drawn for a new run, read back on --resume (a run
// from before keys has none and keeps the public generator). Every request then names it.
void key_inputs(run_context& c) {
    const fs::path file = fs::absolute(c.run / k_inputs_key_file).lexically_normal();
    if (const std::string public_case = case_with_expected_generated(*c.contract);
        !public_case.empty()) {
        if (!c.o.quiet)
            std::cerr << "cuda-optimizer: warning: case " << quote_value(public_case)
                      << " gives expected outputs for generated inputs, which were computed from "
                         "the public generator: the run's inputs are not keyed, and a kernel can "
                         "predict them; give file inputs, or a reference kernel instead of "
                         "expected files, for inputs no kernel can predict\n";
        return;
    }
    const std::string recorded = c.recorded ? c.recorded->inputs_key_id : "";
    if (c.o.resume.empty())
        write_inputs_key(file, draw_inputs_key());
    else if (recorded.empty())
        return;  // a run from before keys: its inputs stay the public generator's
    try {
        c.info.inputs_key_id = inputs_key_id(read_inputs_key(file));
    } catch (const std::runtime_error& e) {
        if (recorded.empty()) throw;
        throw run_failure(exit_code::resume_refused,
                          std::string(e.what()) + ": run.json names inputs key " + recorded +
                              "; without it the run's inputs cannot be made again");
    }
    if (!recorded.empty() && recorded != c.info.inputs_key_id)
        throw run_failure(exit_code::resume_refused, file.string() + " holds key " +
                                                         c.info.inputs_key_id +
                                                         ", but run.json names " + recorded +
                                                         ": the run's inputs cannot be made again");
    evaluator_settings es = c.evaluator->settings();
    es.inputs_key = inputs_key_ref{file, 0};
    c.evaluator = std::make_unique<attempt_evaluator>(*c.contract, es, *c.runner);
}

void open_run(run_context& c) {
    const optimizer_options& o = c.o;
    c.info.working_directory = fs::current_path().string();
    evaluator_settings es;
    es.harness = o.harness;
    es.timeout = milliseconds_of(o.timeout_s);
    es.device = devices_of(o).front();
    es.timing = o.timing;
    es.timing.fresh_inputs = true;
    es.initial_file_name = fs::path(o.initial_kernel).filename().string();
    es.arch = device_arch(c.device_json);
    es.gpu_checks = o.isolation == harness_isolation::worker;
    for (const int d : devices_of(o))
        c.device_floors[d] = floors_for(*c.contract, read_device_peaks(device_json_of(c, d)));
    c.floors = c.device_floors[es.device];
    for (const auto& [name, f] : c.floors) es.floors_ms[name] = f.floor_ms;
    es.gpu_busy = c.busy;
    if (c.torch) es.torch = std::make_shared<const torch_reference>(*c.torch);
    c.evaluator = std::make_unique<attempt_evaluator>(*c.contract, es, *c.runner);
    c.info.sha256["manifest"] = sha256_file_hex(o.input_cases);
    c.info.sha256["initial"] = sha256_hex(c.initial.source);
    c.info.sha256["harness"] = sha256_file_hex(o.harness);
    add_problem_hashes(c, c.info.sha256);
    // On record from the first run.json, so a run killed before its oracle or holdout still
    // says it had them: --resume holds the hashes against run.json both ways.
    if (!o.reference.empty()) c.info.sha256["reference"] = sha256_hex(read_text_file(o.reference));
    if (!o.holdout_cases.empty()) c.info.sha256["holdout"] = sha256_file_hex(o.holdout_cases);
    c.info.settings = {{"max_iterations", std::int64_t{o.search.max_iterations}},
                       {"min_gain", o.search.min_gain},
                       {"max_repairs", std::int64_t{o.search.max_repairs}},
                       {"timeout_s", o.timeout_s},
                       {"isolation", std::string(k_harness_isolations.name(o.isolation))},
                       {"seed", o.seed},
                       {"batch", std::int64_t{o.batch}},
                       {"device", std::int64_t{es.device}},
                       {"devices", device_list_text(devices_of(o))},
                       {"compile_threads", std::int64_t{compile_threads_of(o)}},
                       {"warmup", std::int64_t{o.timing.warmup}},
                       {"iterations", std::int64_t{o.timing.iterations}},
                       {"timing_mode", std::string(k_timing_modes.name(o.timing.mode))},
                       {"timer", std::string(k_timer_choices.name(o.timing.timer))},
                       {"min_samples", std::int64_t{o.timing.min_samples}},
                       {"min_time_ms", o.timing.min_time_ms},
                       {"target_rse", o.timing.target_rse},
                       {"profile_timeout_s", o.profile_timeout_s},
                       {"use_nsight", o.use_nsight},
                       {"nvidia_research", o.nvidia_research},
                       {"description", o.description},
                       {"signature", o.signature},
                       {"holdout_cases", o.holdout_cases},
                       {"evidence", !o.no_evidence},
                       {"significance_runs", std::int64_t{o.significance_runs}},
                       {"rerank", std::int64_t{o.rerank}},
                       {"stop_at_sol", o.search.stop_at_sol}};
    record_economics(o.economics, c.info);
    // The folder last, and run.json in it at once: a run killed from here on can be resumed.
    c.run = o.resume.empty() ? create_run_folder(o.results_dir) : fs::path(o.resume);
    if (o.resume.empty()) c.lock = run_lock(c.run);
    // Every request of the run lies in its folder: the workers are confined to it.
    if (auto* workers = dynamic_cast<harness_workers*>(c.runner.get())) workers->serve_under(c.run);
    if (!o.quiet)
        std::cerr << "cuda-optimizer: " << (o.resume.empty() ? "run folder " : "resuming ")
                  << c.run.string() << "\n";
    if (!o.resume.empty()) reopen_run(c);
    key_inputs(c);
    copy_file_atomic(o.input_cases, c.run / "input_cases.json");
    if (c.torch) {  // the problem's PyTorch side, for `export --torch` (its test and replace())
        fs::create_directories(c.run / "pytorch");
        copy_file_atomic(o.torch_reference, c.run / "pytorch" / "pytorch.json");
        copy_file_atomic(c.torch->problem.source,
                         c.run / "pytorch" / c.torch->problem.source.filename());
    }
    search_outcome so_far;
    if (c.record) so_far.history = c.record->history;
    write_progress(c, so_far);
}

// An imported problem's: a kernel that takes the signature's arguments and does nothing, so
// that the harness dumps the inputs its launch saw for PyTorch's forward.
candidate inputs_only_candidate(const run_context& c) {
    candidate ref = c.initial;
    ref.source = inputs_only_kernel(c.o.signature);
    ref.pytorch_mode.clear();
    ref.entry = entry_of(ref.source, c.signature);
    ref.proposer = proposer_kind::reference;
    ref.label = "pytorch-inputs.cu";
    ref.compile_options.clear();
    ref.tunables.clear();
    ref.defines.clear();
    ref.launch = c.contract->reference_launch;
    return ref;
}

std::optional<candidate> reference_candidate(const run_context& c) {
    if (c.torch) return inputs_only_candidate(c);
    if (c.o.reference.empty()) return std::nullopt;
    candidate ref = c.initial;
    ref.source = read_text_file(c.o.reference);
    ref.entry = entry_of(ref.source, c.signature);
    ref.proposer = proposer_kind::reference;
    ref.label = fs::path(c.o.reference).filename().string();
    ref.compile_options.clear();
    ref.launch = c.contract->reference_launch;
    return ref;
}

// The holdout's cases and their oracle, before the search: a holdout without an oracle is an
// error now, not after an hour of searching.
void prepare_holdout(run_context& c) {
    if (c.o.holdout_cases.empty()) return;
    try {
        c.holdout = read_holdout_manifest(c.o.holdout_cases, *c.contract);
    } catch (const json_error& e) {
        throw run_failure(exit_code::invalid_request, std::string("--holdout-cases: ") + e.what());
    }
    c.info.sha256["holdout"] = sha256_file_hex(c.o.holdout_cases);
    evaluator_settings es = c.evaluator->settings();
    es.correctness_only = true;
    es.floors_ms.clear();
    const attempt_evaluator e = c.evaluator->with(es).with(*c.holdout);
    std::map<std::string, std::string> unused;
    try {
        c.holdout_oracle = prepare_oracle({*c.holdout, e, c.reference, c.run, "holdout-reference",
                                           false, false, c.torch ? &*c.torch : nullptr},
                                          unused);
    } catch (const run_failure& f) {
        throw run_failure(f.code(), "--holdout-cases " + c.o.holdout_cases + ": " + f.what());
    }
    if (!c.o.quiet)
        std::cerr << "cuda-optimizer: holdout " << c.holdout->cases.size()
                  << " case(s), never shown to the proposer\n";
}

// "cuda-optimizer: vendor baseline cublas[ on GPU 1]: valid  perf-256 0.0123 ms ..." (the
// library's name, the run's label: cublas, cublaslt).
void say_vendor(const attempt_result& v, const std::string& where) {
    std::cerr << "cuda-optimizer: vendor baseline " << v.cand.label << where << ": "
              << to_string(v.verdict);
    for (const case_evaluation& ce : v.cases)
        if (ce.median_ms) std::cerr << "  " << ce.name << " " << format_ms(ce.median_ms);
    std::cerr << (v.reason.empty() ? "" : ": " + v.reason) << "\n";
}

// The vendor library on the cases that declare it, before the search, so every progress line
// can be read against it; its outputs are checked against the oracle like any candidate's.
// With --devices, on every GPU (RUN/vendor on the first, RUN/vendor-device-N on GPU N): each
// attempt is measured on one of them, and is read against the library on the same GPU.
void measure_vendor(run_context& c) {
    const std::vector<int> devices = devices_of(c.o);
    c.vendor = c.evaluator->evaluate_vendor(c.initial, c.run / "vendor", c.oracle);
    if (!c.vendor) return;
    if (!c.o.quiet)
        say_vendor(*c.vendor, devices.size() > 1 ? " on GPU " + std::to_string(devices[0]) : "");
    for (std::size_t i = 1; i < devices.size(); ++i) {
        evaluator_settings es = c.evaluator->settings();
        es.device = devices[i];
        if (const std::string arch = device_arch(device_json_of(c, devices[i])); !arch.empty())
            es.arch = arch;
        const fs::path folder = c.run / ("vendor-device-" + std::to_string(devices[i]));
        auto v = c.evaluator->with(es).evaluate_vendor(c.initial, folder, c.oracle);
        if (!v) continue;
        if (!c.o.quiet) say_vendor(*v, " on GPU " + std::to_string(devices[i]));
        c.device_vendors.emplace(devices[i], std::move(*v));
    }
}

// An imported problem's torch.compile, once, beside the eager baseline: a row of the closing
// table's story (and summary.json's pytorch_compile), never the verdict's baseline.
void measure_pytorch_compile(run_context& c) {
    if (!c.torch) return;
    const std::string entry = c.signature ? c.signature->entry : c.initial.entry;
    c.pytorch_compile = c.evaluator->evaluate(pytorch_candidate(*c.torch, "compile", entry),
                                              c.run / "pytorch-compile", &c.oracle);
    if (c.o.quiet) return;
    std::cerr << "cuda-optimizer: torch.compile baseline: "
              << to_string(c.pytorch_compile->verdict);
    for (const case_evaluation& ce : c.pytorch_compile->cases)
        if (ce.median_ms) std::cerr << "  " << ce.name << " " << format_ms(ce.median_ms);
    const std::string& why = c.pytorch_compile->reason;
    std::cerr << (why.empty() ? "" : ": " + why.substr(0, 300)) << "\n";
}

// Every GPU of --devices with its vendor run and floors, the first's being c.vendor and c.floors.
std::vector<device_reference> device_references(const run_context& c) {
    std::vector<device_reference> out;
    for (const int d : devices_of(c.o)) {
        device_reference r;
        r.index = d;
        r.name = device_name(device_json_of(c, d));
        const auto v = c.device_vendors.find(d);
        r.vendor = vendor_outcome_of(out.empty() ? (c.vendor ? &*c.vendor : nullptr)
                                     : v == c.device_vendors.end() ? nullptr
                                                                   : &v->second);
        if (const auto f = c.device_floors.find(d); f != c.device_floors.end())
            r.floors = f->second;
        out.push_back(std::move(r));
    }
    return out;
}

evidence_settings evidence_settings_of(const optimizer_options& o) {
    evidence_settings s;
    s.enabled = !o.no_evidence;
    s.significance_runs = o.significance_runs;
    s.max_candidates = o.evidence_candidates;
    s.rerank = o.rerank;
    if (!o.no_sanitizer) s.sanitizer = find_compute_sanitizer(o.sanitizer);
    if (o.no_sanitizer) s.sanitizer_skipped = "--no-sanitizer";
    s.allow_sanitizer_findings = o.allow_sanitizer_findings;
    s.sanitizer_timeout_s = o.sanitizer_timeout_s;
    s.disassembler = find_disassembler(o.cuobjdump);
    s.min_gain = o.search.min_gain;
    return s;
}

// The cases whose inputs are not all files: their values depend on seeds and launch indices.
std::set<std::string> cases_with_generated_inputs(const manifest& m) {
    std::set<std::string> out;
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_input() && !m.init_for(mc, a).file) out.insert(mc.name);
    return out;
}

// The provided cases' oracle for another evaluator's seeds and launch counts: the search's
// where every input is a file (the checked launch sees the files exactly), else a reference
// run on the new inputs; a case with generated inputs and only an expected file cannot be
// re-checked and is left out (named in `note`).
std::optional<oracle_files> oracle_for(const run_context& c, const attempt_evaluator& e,
                                       const std::string& folder, std::string* note) {
    const std::set<std::string> generated = cases_with_generated_inputs(*c.contract);
    if (generated.empty()) return c.oracle;
    if (!c.reference) {
        *note = "generated inputs and no reference kernel: nothing to re-check them against";
        return std::nullopt;
    }
    std::map<std::string, std::string> unused;
    oracle_setup setup{
        *c.contract, e, c.reference, c.run, fs::path(folder).lexically_relative(c.run).string(),
        false};
    setup.expected_for_fixed_inputs_only = true;
    setup.torch = c.torch ? &*c.torch : nullptr;
    try {
        return prepare_oracle(setup, unused);
    } catch (const run_failure& f) {
        *note = std::string("the reference run for it failed: ") + f.what();
        std::cerr << "cuda-optimizer: " << *note << "\n";
    }
    return std::nullopt;
}

// Pins what scores the run once its oracle and holdout are ready (scorer_pin.hpp).
void pin_scorer(run_context& c) {
    // Against the digests run.json took when the run began, before the reference ran.
    c.pin.add("harness binary", c.o.harness, c.info.sha256["harness"]);
    c.pin.add("manifest", c.o.input_cases, c.info.sha256["manifest"]);
    if (!c.o.holdout_cases.empty())
        c.pin.add("holdout", c.o.holdout_cases, c.info.sha256["holdout"]);
    if (!c.o.reference.empty()) c.pin.add("reference kernel", c.o.reference);
    if (c.torch) {
        c.pin.add("PyTorch problem", c.o.torch_reference);
        c.pin.add("PyTorch source", c.torch->problem.source);
    }
    if (!c.info.inputs_key_id.empty()) c.pin.add("inputs key", c.run / k_inputs_key_file);
    for (const oracle_files* oracle : {&c.oracle, &c.holdout_oracle})
        for (const auto& [output, file] : *oracle)
            c.pin.add("oracle file of " + output.first + " " + output.second, file);
}

// Before the verdict: a pinned file that changed ends the run in harness_error, never a verdict.
void check_scorer(const run_context& c) {
    const std::vector<std::string> changed = c.pin.changes();
    if (changed.empty()) return;
    for (std::size_t i = 1; i < changed.size(); ++i)
        std::cerr << "cuda-optimizer: " << changed[i] << "\n";
    throw run_failure(exit_code::scorer_changed, changed.front());
}

// The gates on the winner; it may move the best to a candidate that passes them.
evidence_report evidence(run_context& c, search_outcome& outcome) {
    // The winner's evidence runs each in a fresh harness process, whatever --isolation says:
    // a few seconds more, and run-to-run differences (a race) come from separate processes.
    evaluator_settings own = c.evaluator->settings();
    own.own_process = true;
    const attempt_evaluator evaluator = c.evaluator->with(own);
    evidence_inputs in(evaluator, c.oracle);
    if (c.holdout) {
        in.holdout = &*c.holdout;
        in.holdout_oracle = &c.holdout_oracle;
    }
    in.oracle_for = [&c](const attempt_evaluator& e, const std::string& folder, std::string* note) {
        return oracle_for(c, e, folder, note);
    };
    if (c.vendor) in.vendor = &*c.vendor;
    in.floors = c.floors;
    in.devices = device_references(c);
    in.run = c.run;
    if (!c.o.quiet) in.progress = [](const std::string& line) { std::cerr << line << "\n"; };
    return gather_evidence(outcome, in, evidence_settings_of(c.o));
}

std::vector<std::string> comma_list(const std::string& text) {
    std::vector<std::string> out = comma_items(text);
    out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
    return out;
}

// --nvidia-research's settings; the guide pages follow the device's architecture.
docs_settings docs_settings_of(const optimizer_options& o, const std::string& device_json) {
    docs_settings d;
    d.allowed_hosts = comma_list(o.docs_hosts);
    rapidjson::Document dev;
    try_parse_json(dev, device_json);
    const std::string cc = text_of(dev, "compute_capability");
    d.guide_pages = o.docs_pages.empty() ? default_guide_pages(cc) : comma_list(o.docs_pages);
    d.cache_dir = o.docs_cache.empty() ? default_docs_cache() : fs::path(o.docs_cache);
    d.max_fetches = o.docs_max_fetches;
    d.max_result_chars = static_cast<std::size_t>(o.docs_max_chars);
    return d;
}

// The model proposer talks to its API and records every exchange in the run folder.
void make_model_proposer(run_context& c) {
    const optimizer_options& o = c.o;
    if (c.kind != proposer_kind::llm) {
        if (o.nvidia_research || o.use_nsight)
            std::cerr << "cuda-optimizer: warning: --nvidia-research and --use-nsight are model "
                         "tools; the "
                      << to_string(c.kind) << " proposer does not use them\n";
        return;
    }
    c.transport = make_curl_transport();
    c.client = std::make_unique<llm_client>(
        c.model.settings, c.model.api_key, *c.transport, retry_settings{},
        llm_budget{o.max_model_calls, o.max_tokens_total}, c.run);
    llm_proposer_settings ls;
    ls.description = o.description;
    ls.signature = o.signature;
    ls.device_json = c.device_json;
    ls.work_folder = c.run / "model-compile";
    if (o.nvidia_research) {
        c.docs = std::make_unique<docs_library>(
            docs_settings_of(o, c.device_json), *c.transport, [&c](const docs_exchange& e) {
                c.client->record_tool_exchange("nvidia_docs", e.request_json, e.response_json);
            });
        ls.docs = c.docs.get();
    }
    profile_function profile;
    if (o.use_nsight) {
        c.profiler = std::make_unique<ncu_profiler>(*c.contract, *c.evaluator, *c.runner, o.harness,
                                                    c.run, milliseconds_of(o.profile_timeout_s));
        profile = [&c](const search_state& s, const std::string& case_name) {
            return c.profiler->profile(s.best ? s.history[*s.best].cand : s.initial, case_name);
        };
    }
    c.prop = make_llm_proposer(*c.contract, *c.client, *c.evaluator, ls, profile);
}

// --resume: the model calls, tokens and documentation fetches the run spent before count toward
// its budgets, and its model-NNN.json records are numbered on after them.
void restore_spending(run_context& c) {
    if (!c.client) return;
    const recorded_spending spent = read_recorded_spending(c.run);
    c.client->restore(spent);
    if (c.docs) c.docs->restore_fetches(spent.docs_fetches);
}

// The GPUs that measure (each with its arch, from its --device-info) and the compile-ahead
// threads; with several GPUs, a line that names them.
parallel_settings parallel_of(const run_context& c) {
    parallel_settings p;
    std::string names;
    for (const int d : devices_of(c.o)) {
        const auto info = c.info.devices_json.find(d);
        const std::string json = info == c.info.devices_json.end() ? "null" : info->second;
        p.devices.emplace_back(d, device_arch(json));
        if (const auto f = c.device_floors.find(d); f != c.device_floors.end())
            for (const auto& [name, floor] : f->second) p.floors_ms[d][name] = floor.floor_ms;
        names += (names.empty() ? "" : ", ") + std::to_string(d) + " (" + device_name(json) + ")";
    }
    p.compile_threads = compile_threads_of(c.o);
    if (p.devices.size() > 1 && !c.o.quiet)
        std::cerr << "cuda-optimizer: measuring on GPUs " << names << ", one measurement per GPU "
                  << "at a time; " << p.compile_threads << " compile-ahead thread(s)\n";
    return p;
}

// The backstop behind the preflight's probe: an attempt of kernels nobody reviewed whose
// response says its harness ran unconfined, although the probe found Landlock (history.json
// and run.json count it as such, and the report warns).
void warn_if_unconfined(const run_context& c, const attempt_result& r) {
    const bool untrusted = c.o.daemon_job || r.cand.proposer == proposer_kind::llm ||
                           r.cand.proposer == proposer_kind::files;
    if (r.confinement != "none" || !untrusted || !c.info.confinement ||
        !c.info.confinement->harness.confined())
        return;
    std::cerr << "cuda-optimizer: warning: iteration " << r.iteration << ", attempt " << r.attempt
              << " (" << r.cand.label
              << ") ran unconfined: its response says so, though the harness confined itself "
                 "at the start\n";
}

// The search, with history written after every attempt.
search_outcome search(run_context& c, const std::atomic<bool>& interrupted) {
    search_settings ss = c.o.search;
    ss.run_folder = c.run.string();
    ss.parallel = parallel_of(c);
    for (const auto& [name, f] : c.floors) ss.floors_ms[name] = f.floor_ms;
    auto on_attempt = [&c, printed = c.record ? c.record->history.size() : std::size_t{0}](
                          const attempt_result& r, const search_outcome& out) mutable {
        write_file_durable(c.run / "history.json", history_json(out, c.run));
        write_progress(c, out);
        if (out.history.size() <= printed) return;  // the same attempt again: the stop changed
        printed = out.history.size();
        warn_if_unconfined(c, r);
        if (!c.o.quiet)
            std::cerr << progress_line(r, out, c.o.search.max_iterations, seconds_since(c.started))
                      << "\n";
    };
    const fs::path run = c.run;
    search_loop loop(
        *c.contract, *c.evaluator, *c.prop, ss,
        [run](int it, int at) { return attempt_folder(run, it, at); }, on_attempt, &interrupted);
    loop.on_candidates(
        [run](int it, const iteration_record& r) { write_candidates_file(run, it, r); });
    if (c.own) loop.start_from(*c.own);
    c.busy->begin_search();
    search_outcome out = loop.run(c.initial, c.oracle, c.record ? &*c.record : nullptr);
    c.busy->end_search();
    return out;
}

// report.html from the folder's files, beside summary.json; a report that cannot be made is a
// warning, never the run's failure.
bool write_run_report(const run_context& c) {
    try {
        write_report(c.run, c.o.economics);
        return true;
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: report.html not written: " << e.what() << "\n";
    }
    return false;
}

// run.json's harness_processes: the isolation and what the workers did.
std::string harness_processes_json(const run_context& c) {
    rapidjson::Document doc(rapidjson::kObjectType);
    json_object record(doc);
    record.add("isolation", k_harness_isolations.name(c.o.isolation));
    if (const auto* workers = dynamic_cast<const harness_workers*>(c.runner.get())) {
        const worker_stats s = workers->stats();
        record.add("workers_started", s.started)
            .add("worker_requests", s.requests)
            .add("workers_replaced", s.replaced)
            .add("workers_retired", s.retired)
            .add("one_shot_runs", s.one_shot);
    }
    return to_compact_json(doc);
}

// How the attempts were confined, for the closing lines (the warning even when quiet).
void say_confinement(const run_context& c, const search_outcome& outcome) {
    if (!c.info.confinement) return;
    const confinement_record r = count_confinement(*c.info.confinement, outcome.history);
    if (!c.o.quiet) std::cerr << "confinement: " << confinement_line(r) << "\n";
    if (const std::string w = confinement_warning(r); !w.empty())
        std::cerr << "cuda-optimizer: warning: " << w << "\n";
}

struct run_verdict {
    std::string word;  // summary.json's verdict: go, no_go or no_winner
    std::vector<std::string> reasons;
};

// The verdict summary.json gives (the go rule applied where the summary was made).
// A summary that does not read back is a no_go that says so, never a crash after the search.
run_verdict verdict_of(const std::string& summary_text) {
    try {
        const rapidjson::Document d = parse_record_json(summary_text, "summary.json");
        const json_field summary(d, "summary.json");
        return {summary.text("verdict"), summary.texts("verdict_reasons")};
    } catch (const std::exception& e) {
        return {"no_go", {std::string("summary.json does not read back: ") + e.what()}};
    }
}

// Summary, best, heatmap, run record and report; the exit code the outcome calls for.
int finish(run_context& c, const search_outcome& outcome, const evidence_report& ev) {
    const manifest& m = *c.contract;
    write_best(c.run, outcome, m, *c.evaluator);
    if (c.client) c.info.model_json = model_usage_json(*c.client, c.model.prices);
    const std::string summary =
        summary_json(outcome, m, c.oracle, c.run, c.info.model_json, &ev, c.info.simulated,
                     c.pytorch_compile ? &*c.pytorch_compile : nullptr);
    write_file_durable(c.run / "summary.json", summary);
    const run_verdict verdict = verdict_of(summary);
    try {
        write_heatmap(make_heatmap_data(outcome, m), c.run);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: heatmap not drawn: " << e.what() << "\n";
    }
    c.info.finished_utc = utc_now();
    c.info.wall_s = seconds_since(c.started);
    c.info.gpu_busy = c.busy->record();
    c.info.harness_processes_json = harness_processes_json(c);
    write_file_durable(c.run / "run.json", run_json(c.info, outcome));
    const bool reported = write_run_report(c);
    if (!c.o.quiet)
        std::cerr << closing_table(outcome, m, ev.devices, c.info.simulated,
                                   c.pytorch_compile && c.pytorch_compile->verdict == verdict::valid
                                       ? &*c.pytorch_compile
                                       : nullptr)
                  << gpu_busy_line(c.info.gpu_busy) << evidence_lines(outcome, ev, c.info.simulated)
                  << "stop: " << to_string(outcome.stop) << "; artifacts in " << c.run.string()
                  << "\n"
                  << (reported ? "report: " + (c.run / "report.html").string() + "\n" : "");
    say_confinement(c, outcome);
    // The verdict last: the word a user looks for is the last thing a run prints.
    if (!c.o.quiet)
        std::cerr << verdict_line(outcome, ev, c.run.filename().string(), c.info.wall_s,
                                  verdict.word,
                                  outcome.stop == stop_reason::error  // said on its own line
                                      ? std::vector<std::string>{}
                                      : verdict.reasons,
                                  c.info.simulated)
                  << "\n";
    if (c.o.json) std::cout << read_text_file(c.run / "summary.json");
    if (outcome.stop == stop_reason::error) {
        const bool initial_failed =  // the baseline, or the user's kernel beside PyTorch eager
            !outcome.history.empty() &&
            outcome.history.back().cand.proposer == proposer_kind::initial &&
            outcome.history.back().verdict != verdict::valid;
        const bool on_another_device =  // the initial kernel on a GPU of --devices but the first
            outcome.history.size() == 1 &&
            std::any_of(outcome.baselines.begin(), outcome.baselines.end(),
                        [](const attempt_result& b) { return b.verdict != verdict::valid; });
        std::cerr << "cuda-optimizer: "
                  << (initial_failed && !c.o.quiet
                          ? "the initial kernel fails (why: its line above); fix it and run again"
                          : outcome.error)
                  << "\n";
        return to_int(initial_failed || on_another_device ? exit_code::initial_failed
                                                          : exit_code::proposer_failed);
    }
    if (outcome.stop == stop_reason::budget_exhausted && !c.o.quiet)
        std::cerr << "cuda-optimizer: " << outcome.error << "\n";
    if (ev.ran && !ev.winner) {
        std::cerr << "cuda-optimizer: no candidate passes the evidence gates, the initial kernel "
                     "included; see summary.json evidence.checked\n";
        return to_int(exit_code::no_winner);
    }
    if (outcome.stop == stop_reason::interrupted) return to_int(exit_code::interrupted);
    if (c.o.fail_on_no_go && verdict.word != "go") {
        std::cerr << "cuda-optimizer: --fail-on-no-go: the verdict is " << verdict.word << "\n";
        return to_int(verdict.word == "no_go" ? exit_code::no_go : exit_code::no_winner);
    }
    return to_int(exit_code::ok);
}

}  // namespace

std::string default_harness_path() {
    char self[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        const fs::path beside =
            fs::path(std::string(self, static_cast<std::size_t>(n))).parent_path() / "cuda-harness";
        if (fs::exists(beside)) return beside.string();
    }
    return "cuda-harness";
}

namespace {

// A run that fails after its folder exists still says why in run.json (best effort: the
// failure may be the folder itself).
void record_failure(run_context& c, const std::string& why) {
    if (c.run.empty() || !c.info.finished_utc.empty()) return;  // none yet, or the final one
    search_outcome failed;
    failed.stop = stop_reason::error;
    failed.error = why;
    c.info.finished_utc = utc_now();
    c.info.wall_s = seconds_since(c.started);
    c.info.gpu_busy = c.busy->record();
    try {
        write_file_durable(c.run / "run.json", run_json(c.info, failed));
    } catch (const std::exception&) {
        return;
    }
    write_run_report(c);
}

}  // namespace

int run_optimize(const optimizer_options& o, const std::vector<std::string>& command_line,
                 const std::atomic<bool>& interrupted) {
    run_context c(o);
    try {
        for (const std::string& arg : command_line)
            c.info.command_line.push_back(redact_url_credentials(arg));
        c.info.started_utc = utc_now();
        choose_proposer(c);
        check_inputs(c);
        make_offline_proposer(c);
        open_run(c);
        c.reference = reference_candidate(c);
        oracle_setup setup{*c.contract, *c.evaluator, c.reference, c.run};
        setup.torch = c.torch ? &*c.torch : nullptr;
        c.oracle = prepare_oracle(setup, c.info.sha256);
        if (c.recorded) check_unchanged(*c.recorded, c.info, o);  // the generated inputs too
        prepare_holdout(c);
        pin_scorer(c);
        measure_vendor(c);
        measure_pytorch_compile(c);
        make_model_proposer(c);
        if (c.record) restore_spending(c);
        search_outcome outcome = search(c, interrupted);
        evidence_report ev;
        if (interrupted)
            ev.skipped =
                "interrupted before the evidence stage: the best is the search's, unchecked";
        else
            ev = evidence(c, outcome);
        check_scorer(c);
        return finish(c, outcome, ev);
    } catch (const run_failure& f) {
        std::cerr << "cuda-optimizer: " << f.what() << "\n";
        if (f.code() != exit_code::resume_refused) record_failure(c, f.what());
        return to_int(f.code());
    } catch (const file_write_error& e) {
        std::cerr << "cuda-optimizer: cannot write the run folder (is the disk full or the folder "
                     "read-only?): "
                  << e.what() << "\n";
        return to_int(exit_code::io_error);
    } catch (const fs::filesystem_error& e) {
        std::cerr << "cuda-optimizer: a file operation failed (is the disk full or the folder "
                     "read-only?): "
                  << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
}

}  // namespace cuopt
