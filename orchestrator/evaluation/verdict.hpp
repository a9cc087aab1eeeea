#pragma once
/// What the evaluation concluded about an attempt as a whole (its verdict) and about
/// each of its cases. The enums are what the code compares; history.json and
/// summary.json spell them as in the tables below (schemas/history.schema.json).

#include "common/name_table.hpp"

namespace cuopt {

enum class verdict {
    valid,               // every output of every case matches the oracle
    compile_error,       // NVRTC rejected it
    invalid_request,     // the harness or the allow-list refused the request
    invalid_submission,  // the proposer could not produce a runnable candidate
    cuda_error,          // a launch failed (illegal address, ...)
    crash,               // the harness died of a signal
    timeout,             // the harness ran past --timeout and was killed
    wrong_output,        // an output differs from the oracle beyond tolerance
    unwritten_output,    // an output still holds the poison pattern
    nan_output,          // an output holds NaN/Inf where the oracle does not
    harness_error,       // the harness could not start or wrote no usable response
    impossible_time,     // a median below 0.9x the case's speed-of-light floor
    invalid_timing,      // a timed sample held another kernel besides the case's own (CUPTI)
    mutates_inputs,      // the kernel wrote into an argument the manifest declares input
};

inline constexpr auto k_verdicts =
    make_name_table<verdict>({{verdict::valid, "valid"},
                              {verdict::compile_error, "compile_error"},
                              {verdict::invalid_request, "invalid_request"},
                              {verdict::invalid_submission, "invalid_submission"},
                              {verdict::cuda_error, "cuda_error"},
                              {verdict::crash, "crash"},
                              {verdict::timeout, "timeout"},
                              {verdict::wrong_output, "wrong_output"},
                              {verdict::unwritten_output, "unwritten_output"},
                              {verdict::nan_output, "nan_output"},
                              {verdict::harness_error, "harness_error"},
                              {verdict::impossible_time, "impossible_time"},
                              {verdict::invalid_timing, "invalid_timing"},
                              {verdict::mutates_inputs, "mutates_inputs"}});

inline const char* to_string(verdict v) {
    return k_verdicts.name(v);
}

/// One case of an attempt: it ran and every output matched, it did not, or it never ran.
enum class case_status { passed, failed, not_run };

inline constexpr auto k_case_statuses =
    make_name_table<case_status>({{case_status::passed, "passed"},
                                  {case_status::failed, "failed"},
                                  {case_status::not_run, "not_run"}});

inline const char* to_string(case_status s) {
    return k_case_statuses.name(s);
}

}  // namespace cuopt
