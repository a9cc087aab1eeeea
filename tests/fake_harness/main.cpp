// fake-harness: a stand-in for cuda-harness on machines without a GPU, honouring the
// same file contract (request in, outputs + response out, same exit codes). It "runs"
// matmul_f32(a, b, c, m, n, k) and the FP8 example's gemm_e4m3(a, b, c, scale_a, scale_b, m, n,
// k) on the CPU, inputs and outputs in their declared dtypes (fp8, bf16, f16 included: the same
// conversions as the GPU's) (a request for any other kernel is refused, exit 11,
// naming it; the preflight's empty probe kernel compiles), and markers in the kernel source make it
// misbehave the ways real candidates do:
//   FAKE_COMPILE_ERROR   NVRTC-style compile error (exit 10)
//   FAKE_ILLEGAL_ADDRESS cuda_error on the first case, the rest skipped (exit 13)
//   FAKE_CRASH           dies by SIGSEGV          FAKE_HANG  sleeps forever
//   FAKE_WRONG           c[0] is off by one       FAKE_SKIP_LAST_ROW  last row unwritten
//   FAKE_NO_CASES        says ok but answers no case     FAKE_MISSING_OUTPUT  lists c, never writes
//   FAKE_DISK_FULL       a one-shot run cannot write its response (the real one's line, exit 70)
//   FAKE_PIDFILE         writes its pid to harness.pid in the request's folder
//   FAKE_CHILD_HANG      starts a child that sleeps, then hangs itself
//   FAKE_ORPHAN_PIPE     leaves a sleeping child holding its stdout and stderr (pid in orphan.pid)
//   FAKE_WRITES_INPUT[=ARG]  the kernel writes into ARG (default a): every case reports it in
//                        inputs_changed where ARG is a declared input (an inout one is exempt)
//   it FAKE_MS=<x>          median = x ms per 256^3 of work (default 1), times
//                        (1 + sum over defines of |value - 32| / 64): autotuning has a best.
//   FAKE_MEMOISE         a kernel that caches its first launch's result: its median is 4x
//                        smaller when every launch sees the same inputs (timing.fresh_inputs
//                        false and no input arg perturbed for timing: a float input_file is
//                        perturbed unless it says "timing_inputs": "as_given"); its outputs stay
//                        right (the fake computes them from the checked launch's inputs).
//   FAKE_OVERFIT         right only when k is 29 or a multiple of 32 (the provided shapes)
//   FAKE_NONDETERMINISTIC  c[0] moves by a few 1e-6 from one process to the next (within
//                        tolerance); FAKE_NONDETERMINISTIC_BIG by 1e-2 and more, but only in
//                        untimed runs from launch index 0 (a race only the determinism runs hit)
// A vendor request ("vendor": {"library": "cublas"} or "cublaslt") computes each case's
// vendor_call on the CPU in double, median 0.5 ms per 256^3: sgemm, dgemm, hgemm (row_major,
// col_major or row_major_bt) and cublaslt's e4m3_gemm (row_major_bt: B stored n x k) from the
// fp8-decoded inputs times scale_a * scale_b, rounded once to C's dtype (bf16 or f32); the
// entry is "cublaslt:e4m3_gemm".
//   FAKE_COUNTS_LAUNCHES right only with the default 10 warm-up + 100 timed launches (it
//                        computes only on the launch the search checks)
//   FAKE_FAILS_REMEASURE wrong when only the warm-up count differs from 10 (a significance
//                        round), right otherwise
//   FAKE_PREDICTS_INPUTS the kernel of issue 44 that predicts its generated inputs: its C is
//                        computed from the public (unkeyed) generator's values, 19x faster
//                        (its work done ahead); right only where a request has no inputs_key
//   FAKE_AMORTISES=N     one launch in N does the work of N (N x the time), the others copy
//                        (0.02x): the median sees only copies, the sum every launch's work
//   FAKE_LAST_LAUNCH_ONLY computes only on a shape's first launch and on the last timed one:
//                        a measured case whose timing.checked_launch is another timed launch
//                        leaves C poisoned (the harness re-poisons before every launch)
// Timing as issue 12's harness reports it: CUPTI the primary clock, CUDA events beside it
// 1.3 us slower, NVML's GPU state at full clocks around every timed loop; adaptive requests
// take max(min_samples, min_time_ms / median) samples up to the cap (the fake's samples never
// vary, so the noise target is met as soon as those are), stop_rule cap where that is more.
//   FAKE_SEARCH_LUCK=x   times x with the search's default 10 warm-up launches only (a lucky
//                        search draw that the evidence stage's re-measures do not repeat)
//   FAKE_PROCESS_JITTER=x  each request's times scaled by one factor drawn in [1-x, 1+x] (also
//                        CUOPT_FAKE_PROCESS_JITTER for every kernel; CUOPT_FAKE_JITTER_SEED=S
//                        makes the draws repeatable: they then depend on S and the request path)
//   FAKE_THROTTLED[=CASE] the GPU held down by its power cap (sw_power_cap) around CASE's loop
//                        (every measured case without =CASE)
//   FAKE_CHANNELS_DISAGREE  CUDA events 50% slower than CUPTI: the clocks disagree
//   FAKE_INVALID_TIMING  the first measured case is invalid_timing (another kernel ran inside a
//                        timed sample), the request exits 12; the other cases run
//   FAKE_NO_CUPTI        CUDA events alone, with a note (as with "timing.timer": "events")
//   FAKE_NO_NVML         no GPU state, with a note
// A run's gpu_busy says source "simulated": the timed samples summed, capped at the request's
// wall time.
// --device-info answers a fixed fingerprint marked "simulated": true (the optimizer then labels
// the whole run a fake one); with --measure (or --remeasure) also fixed
// "measured" (copy_bandwidth_gbps 4000) and "peak_tflops" (f32 60, f16 800, ...) blocks, each
// divided by --device N's CUOPT_FAKE_DEVICE_SLOWDOWN, so a slower GPU has its own, higher
// speed-of-light floors. "index" stays 0 whatever --device says (a daemon resumes a job on
// whichever GPU is free, and resume holds the index against run.json's).
// The environment changes the machine it claims to be, in --device-info and every response
// (CUOPT_FAKE_*: the optimizer passes CUOPT_* to its children and scrubs everything else):
//   CUOPT_FAKE_DEVICE_NAME  the GPU model (default "fake CPU device")
//   CUOPT_FAKE_MACHINE_SLOWDOWN  every kernel's median times this (a machine that drifted;
//                        default 1)
//   CUOPT_FAKE_DRIVER_VERSION  the driver's CUDA version as cuDriverGetVersion gives it (13010
//                        reads "13.1"; default 0, and --device-info names none)
// --worker serves request lines from stdin through the real harness's loop
// (harness/worker_loop), so a marker that crashes or hangs takes the whole worker down, and
// FAKE_ILLEGAL_ADDRESS (exit 13) ends it after its reply, as the real worker does.
//   FAKE_STDOUT_NOISE    prints a forged reply line and half of another on stdout (a printf)
//   FAKE_DEVICE_HEAP     a kernel that mallocs: the worker retires after its reply (exit 0)
//   CUOPT_FAKE_WORKER_LOG=FILE  each request appends "PID worker|once REQUEST" (who served
//                        which run)
// Parallelism and compile-ahead (several GPUs, a batch compiled ahead), from the environment:
//   CUOPT_FAKE_SLEEP_MS=x  a run request (not --compile-only) takes x ms more: a GPU busy
//                        measuring
//   CUOPT_FAKE_COMPILE_MS=x  NVRTC's time, once per kernel: a compile that succeeds leaves a
//                        marker in the cubin cache folder; a later request for the kernel is a
//                        cache hit
//   CUOPT_FAKE_DEVICE_SLOWDOWN="1:1.1"  GPU 1's kernels 10% slower, the vendor's too (GPUs of
//                        one model differ a little)
//   CUOPT_FAKE_BROKEN_DEVICE=N  every run on GPU N (N > 0) fails: context_lost, before any case
//   CUOPT_FAKE_TRACE=FILE  each request appends "compile|run device=N start_us=T end_us=T key=K
//                        pid=P folder=DIR" (CLOCK_MONOTONIC; K: the kernel's cache key)
// "timing_inputs" is otherwise accepted and honoured only where it changes values: an
// "as_given" generator keeps its launch_index_base values under fresh_inputs.
// Confinement as the real harness's (harness/harness_sandbox): before it reads a request it
// restricts itself with Landlock to its root (--root, else the request's folder, else for
// --worker the current folder) read-write, the toolkit and library folders read-only, and
// read-write the cubin cache and the folders of the files CUOPT_FAKE_TRACE and
// CUOPT_FAKE_WORKER_LOG name; every response carries the `confinement` block, and a worker
// refuses a request or response outside its root. --unconfined confines nothing, and so does
//   CUOPT_FAKE_UNCONFINED=<reason>  (a kernel without Landlock): mode "none" with that reason
//
// Its parts (fake_harness.hpp): fake_inputs, fake_kernels, fake_vendor, fake_timing,
// fake_machine, fake_confinement and serve_request (one request, start to response).
#include <iostream>
#include <string>

#include "common/exit_codes.hpp"
#include "common/process_life.hpp"
#include "fake_harness.hpp"

using namespace cuopt;
using namespace cuopt::fake;

int main(int argc, char** argv) {
    die_with_parent_if_asked();
    if (argc < 2) return to_int(exit_code::usage);
    const fake_options o = parse_fake_options(argc, argv);
    if (o.worker) return serve_as_worker(o);
    if (o.version) {
        std::cout << "fake\n";
        return 0;
    }
    if (o.device_info) {
        std::cout << fake_device_info(o);
        return 0;
    }
    if (o.request.empty()) return to_int(exit_code::usage);
    if (!confine_fake(o)) return to_int(exit_code::internal_error);
    // As the real harness: a response it cannot write (a full disk) is one line and exit 70,
    // never an uncaught exception's SIGABRT.
    try {
        return serve_one(o.request, o.response, o.compile_only);
    } catch (const std::exception& e) {
        std::cerr << "fake-harness: internal_error: " << e.what() << "\n";
        return to_int(exit_code::internal_error);
    }
}
