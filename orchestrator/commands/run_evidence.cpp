// The evidence stage of a run: the gates on the winner, with what they need from the run (its
// oracle, the holdout's, each GPU's vendor run and floors, an oracle for other seeds).
#include <iostream>

#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/evidence/instruction_audit.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// Every GPU of --devices with its vendor run and floors, the first's being c.vendor and c.floors.
std::vector<device_reference> device_references(const run_context& c) {
    std::vector<device_reference> out;
    for (const int d : devices_of(c.o)) {
        device_reference r;
        r.index = d;
        r.name = device_of(c, d).shown_name();
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

}  // namespace

std::set<std::string> cases_with_generated_inputs(const manifest& m) {
    std::set<std::string> out;
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_input() && !m.init_for(mc, a).file) out.insert(mc.name);
    return out;
}

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

}  // namespace cuopt
