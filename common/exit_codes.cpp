#include "exit_codes.hpp"

namespace cuopt {

const char* exit_code_name(exit_code code) {
    switch (code) {
        case exit_code::ok:
            return "ok";
        case exit_code::compile_error:
            return "compile_error";
        case exit_code::invalid_request:
            return "invalid_request";
        case exit_code::case_failed:
            return "case_failed";
        case exit_code::context_lost:
            return "context_lost";
        case exit_code::no_driver:
            return "no_driver";
        case exit_code::no_device:
            return "no_device";
        case exit_code::preflight_failed:
            return "preflight_failed";
        case exit_code::initial_failed:
            return "initial_failed";
        case exit_code::reference_failed:
            return "reference_failed";
        case exit_code::interrupted:
            return "interrupted";
        case exit_code::replay_mismatch:
            return "replay_mismatch";
        case exit_code::proposer_failed:
            return "proposer_failed";
        case exit_code::io_error:
            return "io_error";
        case exit_code::no_winner:
            return "no_winner";
        case exit_code::no_go:
            return "no_go";
        case exit_code::scorer_changed:
            return "scorer_changed";
        case exit_code::export_unverified:
            return "export_unverified";
        case exit_code::resume_refused:
            return "resume_refused";
        case exit_code::unconfined_refused:
            return "unconfined_refused";
        case exit_code::usage:
            return "usage";
        case exit_code::internal_error:
            return "internal_error";
    }
    return "unknown";
}

}  // namespace cuopt
