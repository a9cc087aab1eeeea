#include <iostream>

#include "common/exit_codes.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/preflight.hpp"

namespace cuopt {

// The preflight as a table: what passed, and a one-line fix for what did not.
int run_check(const optimizer_options& options) {
    const auto runner = make_child_process_runner();
    const preflight_report r = run_preflight(options, *runner);
    std::cout << "cuda-optimizer check\n" << r.table();
    std::cout << (r.passed() ? "ready\n" : "not ready\n");
    const preflight_check* f = r.first_failure();
    return f ? to_int(f->code) : 0;  // the code optimize would stop with
}

}  // namespace cuopt
