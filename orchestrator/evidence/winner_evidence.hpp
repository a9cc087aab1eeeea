#pragma once
/// After the search, the winner earns its title. The valid candidates that beat the
/// initial kernel are checked in ranking order (the best few re-measured first and ranked by
/// that: rerank.hpp), each through the gates below until one
/// fails; the first that passes them all is the declared winner (the initial kernel is
/// the last resort).
///
///   holdout      the hidden cases (--holdout-cases), never shown to a proposer
///   fresh_seeds  the provided cases again, timed, with inputs from other seeds, a random
///                number of extra warm-up and timed launches, and the checked launch at a
///                random position among the timed ones
///   repetition   timed with identical inputs repeated vs varied: faster when inputs
///                repeat means it memoises them; much slower means its speed on varied
///                inputs depends on knowing them ahead (slower_on_repeats)
///   determinism  3 runs on identical inputs: bitwise, within tolerance (warning), beyond
///   sanitizer    compute-sanitizer memcheck, racecheck, initcheck, synccheck
///   significance re-measured against the initial kernel in interleaved rounds (order
///                alternating, each round with its own random warm-up count, inputs round and
///                oracle), with the winner against itself as the A/A control; any failed run
///                of the winner disqualifies it
///   amortised_work  the candidate's timed launches of all the runs above: summed far above
///                median x count means work hidden in rare launches (amortised_work.hpp)
///
///   instructions the cubin disassembled (cuobjdump): its instruction mix; a winner without the
///                manifest's requires.mma class is precision_path (instruction_audit.hpp)
///
/// Every harness run lives in RUN/evidence/, so each conclusion can be replayed.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evidence/amortised_work.hpp"
#include "orchestrator/evidence/determinism.hpp"
#include "orchestrator/evidence/instruction_audit.hpp"
#include "orchestrator/evidence/rerank.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"
#include "orchestrator/evidence/significance.hpp"
#include "orchestrator/evidence/sol_floor.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

struct evidence_settings {
    bool enabled = true;
    int significance_runs = 5;  // interleaved rounds (initial, winner, winner again)
    int min_rounds = 2;         // rounds that must count for a re-measured speedup
    int determinism_runs = 3;
    int max_candidates = 5;  // valid candidates checked before the initial kernel
    int rerank = 3;          // the best this many are re-measured and gated in that order (<2: off)
    int rerank_runs = 3;     // interleaved rounds of that re-measure
    std::filesystem::path sanitizer;  // empty: not run (see sanitizer_skipped)
    std::string sanitizer_skipped = "compute-sanitizer not found";  // why, when not run
    bool allow_sanitizer_findings = false;  // findings (and unfinished tools) become warnings
    double sanitizer_timeout_s = 600;       // per tool run
    /// A performance case joins the sanitizer runs when its buffers hold at most this many bytes.
    std::uint64_t sanitizer_max_case_bytes = 64ull << 20;
    std::filesystem::path disassembler;  // cuobjdump; empty: not found (the audit cannot run)
    double disassembler_timeout_s = 120;
    double memoisation_threshold = 0.10;  // repeated inputs faster by more than this (or 3x noise)
    double repeats_slower_threshold =
        0.5;  // repeated inputs slower by more than this (or 3x noise)
    /// A case whose timed launches sum to more than 1 + this times median x count is amortised
    /// work. Honest winners measured on an H200 stay below 1.1 (docs/measurements.md).
    double amortised_threshold = 0.3;
    /// ... or more than this share of it spent in launches above twice the median (honest
    /// winners on an H100: 0.0%).
    double amortised_tail_share = 0.2;
    double min_gain = 0.01;  // a candidate must beat the initial kernel by this
    std::uint64_t seed = 0;  // the random launch counts; 0 = from std::random_device
};

struct vendor_outcome {
    bool ran = false;
    std::string library = "cublas";  // the library's name as the manifest gives it: "cublaslt"
    std::string verdict;             // the vendor's own verdict against the oracle
    std::string reason;
    std::map<std::string, double> median_ms;  // per case; only when its outputs are right
};

/// The vendor library's run as the report gives it (ran = false for none).
vendor_outcome vendor_outcome_of(const attempt_result* vendor);

/// The references of one GPU of --devices: the vendor library run there, and the
/// speed-of-light floors from that GPU's own copy bandwidth and peaks (its --device-info).
/// GPUs of one model differ by a few percent; GPUs of two models by much more.
struct device_reference {
    int index = 0;
    std::string name;  // the GPU's model, from its --device-info
    vendor_outcome vendor;
    std::map<std::string, sol_floor> floors;
};

/// The oracle of the provided cases for an evaluator's seeds and launch counts, its
/// reference run in RUN/`folder`; nullopt when there can be none (generated inputs and no
/// reference kernel). `note` says what could not be re-checked, if anything.
using oracle_builder = std::function<std::optional<oracle_files>(
    const attempt_evaluator& e, const std::string& folder, std::string* note)>;

/// What the evidence stage needs from the run.
struct evidence_inputs {
    evidence_inputs(const attempt_evaluator& e, const oracle_files& o) : evaluator(e), oracle(o) {}
    const attempt_evaluator& evaluator;  // the search's
    const oracle_files& oracle;          // the provided cases'
    const manifest* holdout = nullptr;   // the holdout's cases, when given
    const oracle_files* holdout_oracle = nullptr;
    oracle_builder oracle_for;
    const attempt_result* vendor = nullptr;  // the vendor library's run, when declared
    std::map<std::string, sol_floor> floors;
    /// Every GPU of --devices in order, the first being the one `vendor` and `floors` describe.
    std::vector<device_reference> devices;
    std::filesystem::path run;
    std::function<void(const std::string&)> progress;  // one line per step
};

/// One gate's outcome on one candidate.
struct gate_result {
    std::string gate;
    bool passed = true;
    bool ran = true;  // false: skipped (e.g. no holdout given), `detail` says why
    std::string detail;
};

struct significance_report {
    int runs = 0;                    // rounds that counted
    std::vector<std::string> cases;  // performance cases, in order
    multi_case_estimate speedup;     // initial / winner, classified at the margins below
    multi_case_estimate aa;          // winner / winner again
    std::map<std::string, double> initial_median_ms, winner_median_ms;
    /// Per case, in `cases` order: the spread between processes (nullopt with one round),
    /// the practical margin δ it gives, and the A/A class at that margin.
    std::vector<std::optional<double>> spreads;
    std::vector<double> margins;
    std::vector<aa_class> aa_classes;
    double margin = 0;  // the geometric mean's δ: the mean of the cases'
    aa_class aa_overall = aa_class::equivalent;
    bool reliable = true;      // the geometric mean's A/A control is equivalent
    int throttled_cases = 0;   // re-measured cases timed while the GPU throttled
    std::vector<int> warmups;  // each round's warm-up count
    int device = 0;            // the one GPU that measured every round of both kernels
};

struct candidate_check {
    std::size_t attempt = 0;  // index into the history
    bool passed = true;
    std::string gate;  // the gate that disqualified it
    std::string verdict = "passed";
    std::string reason;
    std::vector<std::string> warnings;
    std::vector<gate_result> gates;
    std::vector<sanitizer_result> sanitizer;
    std::optional<determinism_result> determinism;
    std::optional<double> repetition_ratio;  // varied / repeated geomean: >1 faster on repeats
    std::optional<instruction_audit> instructions;  // the instructions gate's audit
    std::vector<launch_spread> launch_spreads;      // the amortised_work gate's figures per case
    std::optional<significance_report> significance;
};

struct evidence_report {
    bool ran = false;
    std::string skipped;  // why not, when it did not run
    std::optional<std::size_t> search_best, winner;
    std::vector<candidate_check> checked;
    std::optional<significance_report> significance;  // the winner's
    std::optional<rerank_report> rerank;              // when two or more were re-measured
    /// Every timed harness run of the stage (rerank and significance rounds, fresh seeds,
    /// repetition): its timer and GPU state are summarised like the search's.
    std::vector<attempt_result> timed_runs;
    vendor_outcome vendor;
    std::map<std::string, sol_floor> floors;
    std::vector<device_reference> devices;  // every GPU of --devices; the first's also above
};

/// The first A/A that is not equivalent, described ("geomean noisy: …", or "CASE noisy: …");
/// "equivalent" when every one is.
std::string aa_problem(const significance_report& rep);

/// Runs the gates, declares the winner (sets outcome.best) and measures it.
evidence_report gather_evidence(search_outcome& outcome, const evidence_inputs& in,
                                const evidence_settings& s);

/// The candidates to check, in order: the search's best, then every other valid one faster
/// than the initial kernel by more than min_gain (fastest first, at most max_candidates in
/// all), then the initial kernel.
std::vector<std::size_t> ranking_order(const search_outcome& outcome, double min_gain,
                                       int max_candidates);

/// A precision warning when a candidate's error is far above the initial kernel's (within
/// tolerance, or it would not be valid): "" when there is none.
std::string precision_warning(const attempt_result& candidate, const attempt_result& initial,
                              const manifest& m);

/// Whether timing with repeated inputs is suspiciously faster: `varied` and `repeated` are
/// geomeans of two runs each; the noise allowance comes from the varied pair only (a kernel
/// cannot widen it by behaving differently when inputs repeat).
bool memoises_inputs(const std::vector<double>& varied, const std::vector<double>& repeated,
                     double threshold, double* ratio);

/// The other side: much slower when inputs repeat (ratio below 1 / (1 + max(threshold, 3x the
/// varied pair's noise))): a kernel whose speed on varied inputs comes from knowing them ahead.
bool slower_on_repeats(const std::vector<double>& varied, const std::vector<double>& repeated,
                       double threshold);

/// Whether any input of any performance case changes between the search's launches (a float
/// file perturbed, a random generator regenerated); if none does, memoisation is invisible.
bool inputs_vary_between_launches(const manifest& m, const evaluator_settings& s);

}  // namespace cuopt
