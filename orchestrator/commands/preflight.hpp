#pragma once
/// Preflight: is there a harness, a driver, a device, a readable manifest, the kernel
/// files? Each check has a status and, when it fails, a one-line fix. Shared by
/// `cuda-optimizer check` (prints the table) and `optimize` (stops at the first failure).

#include <string>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/evaluation/runner_process.hpp"

namespace cuopt {

struct preflight_check {
    std::string name;
    bool passed = false;
    std::string detail;  // what was found, or what is wrong
    std::string fix;     // one line, when it failed
};

struct preflight_report {
    std::vector<preflight_check> checks;
    std::string device_json = "null";  // from cuda-harness --device-info
    bool passed() const;
    const preflight_check* first_failure() const;
    std::string table() const;
};

preflight_report run_preflight(const optimizer_options& o, process_runner& runner);

}  // namespace cuopt
