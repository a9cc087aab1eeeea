#pragma once
/// Every way cuda-harness (and, later, cuda-optimizer) can end, by name.
/// The harness's exit code is the orchestrator's first signal, so the values are
/// fixed, distinct and listed in the README; never reuse or renumber one.

namespace cuopt {

enum class exit_code : int {
    ok = 0,                // request ran; every case ok (or compile-only succeeded)
    compile_error = 10,    // NVRTC rejected the kernel; response written with the log
    invalid_request = 11,  // request unreadable or inconsistent; response written when possible
    case_failed = 12,      // a case failed with a recoverable CUDA error; others ran
    context_lost = 13,     // sticky CUDA error (illegal address, ...); remaining cases skipped
    no_driver = 14,        // libcuda could not be loaded or initialised
    no_device = 15,        // the driver sees no device, or not the requested index
    usage = 64,            // bad command line
    internal_error = 70,   // a bug or an unexpected system failure
};

constexpr int to_int(exit_code code) { return static_cast<int>(code); }

/// The name used in responses and logs, e.g. "context_lost".
const char* exit_code_name(exit_code code);

}  // namespace cuopt
