#pragma once
/// Every way cuda-harness and cuda-optimizer can end, by name.
/// The harness's exit code is the orchestrator's first signal, so the values are
/// fixed, distinct and listed in docs/exit-codes.md; never reuse or renumber one.
/// `cuda-optimizer gate` answers with its own three (0 pass, 1 fail, 2 cannot judge:
/// gate_outcome, orchestrator/gate/gate_verdict.hpp), which is why none here is 1 or 2.

namespace cuopt {

enum class exit_code : int {
    ok = 0,                // request ran; every case ok (or compile-only succeeded)
    compile_error = 10,    // NVRTC rejected the kernel; response written with the log
    invalid_request = 11,  // request unreadable or inconsistent; response written when possible
    case_failed = 12,      // a case failed with a recoverable CUDA error; others ran
    context_lost = 13,     // sticky CUDA error (illegal address, ...); remaining cases skipped
    no_driver = 14,        // libcuda could not be loaded or initialised
    no_device = 15,        // the driver sees no device, or not the requested index
    // cuda-optimizer only:
    preflight_failed = 20,  // the preflight found no usable harness, driver or device
    initial_failed = 21,    // the initial kernel fails a case (the run says which and why)
    reference_failed = 22,  // the reference errs, or produces NaN or unwritten elements
    interrupted = 23,       // SIGINT/SIGTERM: the run stopped cleanly after the current attempt
    replay_mismatch = 24,   // a replayed best-case request no longer matches the run's oracle
    proposer_failed = 25,   // the model API refused (a 4xx other than 429) or stayed unreachable
    io_error = 26,        // the run folder could not be written (disk full, read-only, permissions)
    no_winner = 27,       // no candidate passes the evidence gates, the initial kernel included
    resume_refused = 28,  // --resume: not a run folder, a finished run, or its inputs changed
    unconfined_refused = 29,  // the harness runs without Landlock and the run has untrusted kernels
    no_go =
        30,  // --fail-on-no-go: a winner was found but the verdict is no_go (summary.json says why)
    scorer_changed = 31,     // harness_error: the harness, manifest, holdout, oracle or inputs key
                             // changed during the run: no verdict
    export_unverified = 32,  // export --verify: the package did not build, its test failed, or
                             // the op's time is more than 10 % off the run's median
    usage = 64,              // bad command line
    internal_error = 70,     // a bug or an unexpected system failure
};

constexpr int to_int(exit_code code) {
    return static_cast<int>(code);
}

/// The name used in responses and logs, e.g. "context_lost".
const char* exit_code_name(exit_code code);

}  // namespace cuopt
