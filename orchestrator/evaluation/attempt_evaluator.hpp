#pragma once
/// Turns one candidate into evidence: writes its source and a harness request into
/// its own folder, runs cuda-harness as a child process (timeout, kill), reads the
/// response and checks every output against the oracle. Every failure (compile,
/// launch, crash, hang, wrong or unwritten output) becomes a verdict, never a throw.
/// The request is built by request_builder and the response judged by response_judge.

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/request.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/contract/candidate.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evaluation/gpu_busy_meter.hpp"
#include "orchestrator/evaluation/oracle_digests.hpp"
#include "orchestrator/evaluation/output_validator.hpp"
#include "orchestrator/evaluation/verdict.hpp"

namespace cuopt {

/// The expected bytes of every (case, output) pair: files from the reference run or the manifest.
struct torch_reference;  // torch_oracle.hpp

using oracle_files = std::map<std::pair<std::string, std::string>, std::filesystem::path>;

struct output_check {
    std::string arg;
    std::filesystem::path file;  // empty: the harness checked it on the GPU and wrote none
    std::uint64_t unwritten = 0;
    std::optional<validation_result> validation;  // absent without an oracle (the reference run)
    std::optional<response_check> gpu_check;      // the harness's, where the request asked
    bool checked_on_gpu = false;  // validation came from gpu_check (kept in history.json)
};

struct case_evaluation {
    std::string name;
    case_kind kind = case_kind::performance;
    case_status status = case_status::not_run;
    std::string reason;
    std::optional<double> median_ms, mean_ms, min_ms, max_ms, stdev_ms;
    std::vector<double> samples_ms;  // per timed launch (kept for the significance step)
    std::optional<int> iterations;   // timed launches taken (adaptive: up to the cap)
    response_timing_details timing;  // the clock, both channels, stop rule, noise, GPU state
    std::optional<double> floor_ms;  // the case's speed-of-light floor, where known
    std::vector<output_check> outputs;
};

/// What compile-ahead did for an attempt: NVRTC ran (cuda-harness --compile-only, into the
/// cubin cache) on a CPU thread before a GPU took the attempt, so the run's compile was a cache
/// hit.
struct compile_ahead_record {
    bool ok = false;       // it compiled (a failure is left to the run to report)
    double wall_ms = 0;    // the --compile-only runs, one per distinct arch of the devices
    double waited_ms = 0;  // how long the GPU waited for it to finish (0: it was done)
};

struct attempt_result {
    int iteration = 0;
    int attempt = 0;
    int device = 0;  // the GPU that measured it
    candidate cand;
    std::filesystem::path folder;
    cuopt::verdict verdict = cuopt::verdict::harness_error;
    std::string reason;
    compile_summary compile;
    std::vector<case_evaluation> cases;
    std::optional<double> geomean_ms;  // over performance cases, when valid
    int harness_exit_code = -1;
    int harness_signal = 0;
    double harness_wall_ms = 0;
    std::string harness_stderr;                       // its tail
    std::optional<response_timer> timer;              // the response's, where it names one
    std::optional<response_gpu_monitor> gpu_monitor;  // likewise
    /// How long the GPU was busy with its harness run's kernels (the response's gpu_busy.ms):
    /// none where the run gave no figure (it crashed or hung, no CUPTI, an older harness).
    std::optional<double> gpu_busy_ms;
    std::string gpu_busy_source;  // "cupti", "simulated", "none"; "" without a response
    /// How its harness was confined, as the response said: "landlock" or "none"; "" where no
    /// response said (the harness crashed, hung or never started, or nothing ran).
    std::string confinement;
    std::optional<compile_ahead_record> compile_ahead;  // none: the run compiled it itself
    // Filled in by the search loop:
    bool became_best = false;
    std::optional<double> speedup_vs_initial;
    int repair_of = -1;  // attempt index this one repairs, or -1

    /// "ITERATION.ATTEMPT", as the console, the run folder and the report name it.
    std::string id() const { return std::to_string(iteration) + "." + std::to_string(attempt); }
};

/// A case of a response as the evaluator sees it: its status, timing (samples, clocks, GPU
/// state) and output files, none of them checked yet.
case_evaluation case_from_response(const response_case& rc, case_kind kind);

/// Why a case makes its attempt mutates_inputs, whatever its outputs: "case 'perf-256': the
/// kernel wrote into input 'a' (declared input, not inout)"; "" when the harness saw none of
/// the case's declared inputs change.
std::string inputs_written_reason(const response_case& rc);

/// A median below this fraction of its case's speed-of-light floor is impossible_time.
inline constexpr double k_impossible_fraction = 0.9;

/// How long one harness run may take before it is killed, unless the user says otherwise.
inline constexpr double k_default_harness_timeout_s = 60;

struct evaluator_settings {
    std::string harness;  // cuda-harness binary
    std::chrono::milliseconds timeout{static_cast<long long>(k_default_harness_timeout_s * 1000)};
    int device = 0;
    timing_config timing;   // fresh_inputs true by default for the search
    std::string cache_dir;  // "" = the harness's default
    /// The initial kernel's file name: compile errors of the autotuner's candidates (the same
    /// source, other defines) name it.
    std::string initial_file_name;
    /// The device's arch ("sm_90"), given to --compile-only runs so the harness never starts the
    /// driver: on the H200, NVRTC's log held ptxas's report (registers, spills) in a process
    /// where no CUDA had run, and lacked it in harness runs and after CUDA had run.
    std::string arch;
    /// Launch every case once, untimed (evidence runs: holdout, fresh seeds, determinism,
    /// sanitizer).
    bool correctness_only = false;
    /// Added to every case's launch index: generated inputs then come from other seeds.
    std::uint64_t launch_offset = 0;
    /// The run's secret key (RUN/inputs-key.json, absolute) and the round its requests use:
    /// every generated input then comes from a stream no kernel can predict. Absent: the public
    /// generator (a run folder from before keys, tests of the contract).
    std::optional<inputs_key_ref> inputs_key;
    /// Every launch sees the same inputs (no fresh generation, no perturbation): the
    /// repetition check that exposes a kernel memoising its inputs.
    bool repeat_inputs = false;
    /// Per performance case, the speed-of-light floor (median below 0.9x: impossible_time).
    std::map<std::string, double> floors_ms;
    /// A prefix for the harness's command line (compute-sanitizer and its flags).
    std::vector<std::string> wrapper;
    /// Every harness run in a process of its own, even where workers serve the search.
    bool own_process = false;
    /// Every harness run's GPU busy time adds here (shared by the copies of the settings);
    /// null: counted nowhere.
    std::shared_ptr<gpu_busy_meter> gpu_busy;
    /// Candidates' outputs checked against the oracle by the harness, on the GPU (the request's
    /// outputs[].check), where a worker serves the run (neither own_process nor a wrapper):
    /// only the tally comes back. Otherwise, and for the reference and vendor runs, the
    /// optimizer reads every output file and checks it on the CPU.
    bool gpu_checks = false;
    /// The oracle files' digests and RMS, read once per run (shared by copies of the settings).
    std::shared_ptr<oracle_digests> digests = std::make_shared<oracle_digests>();
    /// An imported problem's PyTorch side: candidates with a pytorch_mode are timed by it.
    std::shared_ptr<const torch_reference> torch;
};

class attempt_evaluator {
  public:
    attempt_evaluator(const manifest& m, evaluator_settings settings, process_runner& runner);

    const evaluator_settings& settings() const { return m_settings; }
    const manifest& contract() const { return m_manifest; }
    /// The same evaluator with other settings, or for another manifest (a holdout).
    attempt_evaluator with(evaluator_settings s) const {
        return {m_manifest, std::move(s), m_runner};
    }
    attempt_evaluator with(const manifest& m) const { return {m, m_settings, m_runner}; }

    /// Runs the candidate in `folder`. With an oracle, outputs are checked against it; the
    /// reference run passes none and dumps every generated input instead.
    attempt_result evaluate(const candidate& c, const std::filesystem::path& folder,
                            const oracle_files* oracle) const;

    /// The manifest's vendor baselines (cuBLAS, cuBLASLt or CUB: one library for every case, the
    /// result's label names it) on the measured cases that declare one, with the inputs a
    /// candidate's checked launch sees (so `oracle` applies), in `folder`; nullopt when no
    /// measured case declares one. `c` supplies the tunables of the launch indices only.
    std::optional<attempt_result> evaluate_vendor(const candidate& c,
                                                  const std::filesystem::path& folder,
                                                  const oracle_files& oracle) const;

    /// NVRTC only (cuda-harness --compile-only) for a candidate, in `folder`: no GPU run.
    /// The summary's log holds the error text when the harness failed before compiling.
    /// `cubin_out`: where the harness also writes the cubin (--cubin-out), when given.
    compile_summary compile_only(const candidate& c, const std::filesystem::path& folder,
                                 const std::filesystem::path& cubin_out = {}) const;

    /// Where a request finds its files, relative to its own folder.
    struct request_paths {
        std::string source_file = "kernel.cu";
        std::string inputs_prefix = "inputs/";
        std::string outputs_prefix = "outputs/";
        std::optional<std::string> only_case;  // a replay request holds one case
    };
    /// The harness request for a candidate (attempt folders and replay requests alike), its
    /// paths relative to the request's folder. A reference request (reference == true)
    /// launches every case once, without timing, with the inputs of the launch a candidate's
    /// outputs are checked from, and dumps them. Throws expression_error for a launch that
    /// does not evaluate.
    request make_request(const candidate& c, const request_paths& paths, bool reference) const;

    /// Whether this evaluator's candidates have their outputs checked by the harness (GPU).
    bool checks_on_gpu() const;
    /// The request's outputs[].check for every output with an oracle, its expected file named
    /// relative to `folder` where it lies in the run folder (outside the attempt's folder).
    void add_gpu_checks(request& req, const std::filesystem::path& folder,
                        const oracle_files& oracle) const;

  private:
    /// Runs the harness on folder/request.json and fills r's harness fields; nullopt (with
    /// r's verdict and reason set) when there is no usable response. `trusted`: the reference
    /// or a vendor library, which a worker runner keeps apart from candidates.
    std::optional<harness_response> run_harness(const std::filesystem::path& folder,
                                                attempt_result& r, bool trusted) const;
    /// A harness run's GPU busy time onto r (from its response, where there is one) and into
    /// the settings' meter: a run without a figure counts as unmeasured.
    void count_gpu_busy(const std::optional<harness_response>& response, attempt_result& r) const;
    /// Runs the harness on the request already in r.folder and judges its response.
    void run_and_check(const request& req, const oracle_files* oracle, attempt_result& r) const;

    const manifest& m_manifest;
    evaluator_settings m_settings;
    process_runner& m_runner;
};

}  // namespace cuopt
