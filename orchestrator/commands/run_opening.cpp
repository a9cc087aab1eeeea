// Opening the run: its evaluator, hashes and settings of record, the run folder (made, or on
// --resume checked and reopened), its inputs key and the first run.json.
#include <iostream>

#include "common/cli_value_checks.hpp"
#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"
#include "common/utc_time.hpp"
#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/commands/run_settings_record.hpp"

namespace cuopt {

namespace fs = std::filesystem;

void write_progress(run_context& c, const search_outcome& so_far) {
    c.info.wall_s = seconds_since(c.started);
    c.info.gpu_busy = c.busy->record();
    write_file_durable(c.run / "run.json", run_json(c.info, so_far));
}

namespace {

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
    check_same_device(*c.recorded, fingerprint_of(c.info.device));
    run_info now = c.info;
    now.sha256 = hashes_before_oracle(c.o, *c.contract, c.initial);
    add_problem_hashes(c, now.sha256);
    check_unchanged(*c.recorded, now, c.o, hash_stage::before_oracle);
    c.record = read_search_record(c.run, *c.contract, c.initial);
    // The last refusal is behind: from here the folder changes, and RUN/.lock goes at the end.
    c.lock.remove_when_released();
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

}  // namespace

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
    es.arch = c.info.device.arch;
    es.gpu_checks = o.isolation == harness_isolation::worker;
    for (const int d : devices_of(o))
        c.device_floors[d] = floors_for(*c.contract, peaks_of(device_of(c, d)));
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
    record_settings(o, es.device, c.info);
    // The folder last, and run.json in it at once: a run killed from here on can be resumed.
    c.run = o.resume.empty() ? create_run_folder(o.results_dir) : fs::path(o.resume);
    if (o.resume.empty()) {
        c.lock = run_lock(c.run);
        c.lock.remove_when_released();
    }
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

}  // namespace cuopt
