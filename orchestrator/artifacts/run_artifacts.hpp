#pragma once
/// The run folder and what goes in it: results/run-NNN (next free number, never an
/// existing one), history.json rewritten atomically after every attempt, summary.json and
/// run.json. The winner's standalone files (best.cu, best.json, best-case-N.json) are
/// written by winner_files. Serialisation only: the search decides, this writes.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/device_facts.hpp"
#include "common/utc_time.hpp"
#include "orchestrator/artifacts/confinement_record.hpp"
#include "orchestrator/artifacts/evidence_json.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// Creates results/run-NNN (PREFIX-NNN) with the next free number (mkdir is the lock).
std::filesystem::path create_run_folder(const std::filesystem::path& results_dir,
                                        const std::string& prefix = "run");

/// candidates/iter-NN/attempt-M inside a run folder.
std::filesystem::path attempt_folder(const std::filesystem::path& run, int iteration, int attempt);

/// A setting as run.json records it: a whole number, a real number, a flag or text.
using setting_value = std::variant<std::int64_t, std::uint64_t, double, bool, std::string>;

/// A setting as compact JSON, as run.json writes it ("7", "0.01", "true", "\"fixed\"").
std::string setting_text(const setting_value& v);

/// One `optimize --resume` of a run: when, its own command line, the attempts it kept from
/// history.json and the attempt folders it found in flight (cleared, evaluated again).
struct resume_entry {
    std::string resumed_utc;
    std::vector<std::string> command_line;
    int attempts_kept = 0;
    std::vector<std::string> in_flight;  // candidates/iter-NN/attempt-M, relative to the run
};

struct run_info {
    std::vector<std::string> command_line;  // the run's first; a resume's is in `resumes`
    std::string working_directory;          // where it was given: --resume parses it there again
    proposer_kind proposer = proposer_kind::autotune;
    std::map<std::string, std::string>
        sha256;           // what went in: reference, initial, manifest, inputs, harness
    device_facts device;  // the first GPU's --device-info
    std::map<int, device_facts> devices;  // the same for every measuring GPU, by index
    std::string started_utc, finished_utc;
    double wall_s = 0;
    std::map<std::string, setting_value>
        settings;  // max_iterations, min_gain, timeout_s, seed, ...
    /// How long the GPUs were busy with the run's kernels (the meter's record when run.json is
    /// written): run.json's gpu_busy.
    gpu_busy_record gpu_busy;
    std::string model_json = "null";    // the model proposer's usage block, when one ran
    std::vector<resume_entry> resumes;  // every --resume of the run, in order
    /// How the harness ran: {"isolation": "worker"|"process", workers started, requests, ...}.
    std::string harness_processes_json = "null";
    /// How the harness confined itself and whether --allow-unconfined was given (the attempts
    /// are counted from the outcome when run.json is written); none before the preflight.
    std::optional<confinement_record> confinement;
    /// The run's inputs key, by its public id (inputs_key_id), in RUN/inputs-key.json; "" for a
    /// run from before keys (its inputs come from the public generator).
    std::string inputs_key_id;
};

std::string history_json(const search_outcome& outcome, const std::filesystem::path& run);
/// summary.json; each case lists its outputs with dtype, tolerance and oracle file (for replay).
std::string summary_json(const search_outcome& outcome, const manifest& m,
                         const oracle_files& oracle, const std::filesystem::path& run,
                         const std::string& model_json = "null",
                         const evidence_report* evidence = nullptr, bool simulated = false,
                         const attempt_result* pytorch_compile = nullptr);
/// run.json. While the run is under way (info.finished_utc empty) it has no stop_reason and no
/// error: a run folder whose run.json says so was stopped before it finished (--resume).
std::string run_json(const run_info& info, const search_outcome& outcome);

}  // namespace cuopt
