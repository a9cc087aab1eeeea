#pragma once
/// The words a response uses for how a request, and each of its cases, ended
/// (schemas/response.schema.json): the harness writes them, the orchestrator reads
/// them, one name table each.

#include "common/exit_codes.hpp"
#include "common/name_table.hpp"

namespace cuopt {

enum class response_status {
    ok,
    compile_error,
    invalid_request,
    cuda_error,
    no_driver,
    no_device,
    internal_error
};

inline constexpr auto k_response_statuses =
    make_name_table<response_status>({{response_status::ok, "ok"},
                                      {response_status::compile_error, "compile_error"},
                                      {response_status::invalid_request, "invalid_request"},
                                      {response_status::cuda_error, "cuda_error"},
                                      {response_status::no_driver, "no_driver"},
                                      {response_status::no_device, "no_device"},
                                      {response_status::internal_error, "internal_error"}});

/// The status an exit code reports: case_failed and context_lost are both cuda_error.
constexpr response_status status_for(exit_code code) {
    switch (code) {
        case exit_code::ok:
            return response_status::ok;
        case exit_code::compile_error:
            return response_status::compile_error;
        case exit_code::invalid_request:
            return response_status::invalid_request;
        case exit_code::case_failed:
        case exit_code::context_lost:
            return response_status::cuda_error;
        case exit_code::no_driver:
            return response_status::no_driver;
        case exit_code::no_device:
            return response_status::no_device;
        default:
            return response_status::internal_error;
    }
}

/// How one case of a request ended in the harness.
/// invalid_timing: a timed sample held more than the case's own kernel (CUPTI saw another
/// kernel run inside it), so no sample of the case can be trusted.
enum class case_run_status { ok, cuda_error, invalid_launch, invalid_timing, skipped };

inline constexpr auto k_case_run_statuses =
    make_name_table<case_run_status>({{case_run_status::ok, "ok"},
                                      {case_run_status::cuda_error, "cuda_error"},
                                      {case_run_status::invalid_launch, "invalid_launch"},
                                      {case_run_status::invalid_timing, "invalid_timing"},
                                      {case_run_status::skipped, "skipped"}});

}  // namespace cuopt
