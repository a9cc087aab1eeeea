// What scores the run: its reference candidate (the user's kernel, or an imported problem's
// inputs-only kernel), the holdout and its oracle, and the pin on every file that decides.
#include <iostream>

#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "common/sha256.hpp"
#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/commands/run_failure.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

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

}  // namespace

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

void check_scorer(const run_context& c) {
    const std::vector<std::string> changed = c.pin.changes();
    if (changed.empty()) return;
    for (std::size_t i = 1; i < changed.size(); ++i)
        std::cerr << "cuda-optimizer: " << changed[i] << "\n";
    throw run_failure(exit_code::scorer_changed, changed.front());
}

}  // namespace cuopt
