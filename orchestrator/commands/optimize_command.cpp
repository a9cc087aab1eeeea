// cuda-optimizer optimize: the gated search, as phases (optimize_run.hpp). Each phase either
// fills in the run's context or throws run_failure with the exit code and a one-line reason.
#include <unistd.h>

#include <iostream>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/utc_time.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/artifacts/heatmap.hpp"
#include "orchestrator/artifacts/report_html.hpp"
#include "orchestrator/artifacts/winner_files.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/confinement_policy.hpp"
#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/commands/preflight.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/evaluation/python_child.hpp"
#include "orchestrator/evaluation/torch_baseline.hpp"

namespace cuopt {

namespace fs = std::filesystem;

std::unique_ptr<process_runner> make_runner(const optimizer_options& o) {
    if (o.isolation == harness_isolation::process) return make_child_process_runner();
    return harness_workers::make(o.harness, make_child_process_runner());
}

std::string entry_of(const std::string& source, const std::optional<kernel_signature>& sig) {
    return sig ? sig->entry : first_kernel_name(source);
}

const device_facts& device_of(const run_context& c, int device) {
    static const device_facts none;
    const auto info = c.info.devices.find(device);
    if (info != c.info.devices.end()) return info->second;
    return device == devices_of(c.o).front() ? c.info.device : none;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {

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
    c.info.device = pre.device;
    // Before anything else, --quiet or not: no figure below is a GPU's.
    if (c.info.device.simulated)
        std::cerr << "cuda-optimizer: FAKE RUN: " << c.o.harness << " simulates a GPU ("
                  << pre.device.shown_name()
                  << "); no time, clock, power or speedup in this run was measured on one\n";
    c.info.confinement = confinement_record{pre.harness_confinement, c.o.allow_unconfined};
    if (const std::string w = unconfined_warning(pre.harness_confinement, c.o); !w.empty())
        std::cerr << "cuda-optimizer: warning: " << w << "\n";
    const std::vector<int> devices = devices_of(c.o);
    for (std::size_t i = 0; i < devices.size() && i < pre.devices.size(); ++i)
        c.info.devices[devices[i]] = pre.devices[i];
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

// The GPUs that measure (each with its arch, from its --device-info) and the compile-ahead
// threads; with several GPUs, a line that names them.
parallel_settings parallel_of(const run_context& c) {
    parallel_settings p;
    std::string names;
    for (const int d : devices_of(c.o)) {
        const device_facts& device = device_of(c, d);
        p.devices.emplace_back(d, device.arch);
        if (const auto f = c.device_floors.find(d); f != c.device_floors.end())
            for (const auto& [name, floor] : f->second) p.floors_ms[d][name] = floor.floor_ms;
        names += (names.empty() ? "" : ", ") + std::to_string(d) + " (" + device.shown_name() + ")";
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

// Summary, best, heatmap, run record and report; the exit code the outcome calls for.
int finish(run_context& c, const search_outcome& outcome, const evidence_report& ev) {
    const manifest& m = *c.contract;
    write_best(c.run, outcome, m, *c.evaluator);
    if (c.client) c.info.model_json = model_usage_json(*c.client, c.model.prices);
    const std::string summary =
        summary_json(outcome, m, c.oracle, c.run, c.info.model_json, &ev, c.info.device.simulated,
                     c.pytorch_compile ? &*c.pytorch_compile : nullptr);
    write_file_durable(c.run / "summary.json", summary);
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
    return close_run(c, outcome, ev, summary, reported);
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
