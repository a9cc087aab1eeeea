#pragma once
/// Preflight: everything optimize would reject before it creates anything: the files, the
/// manifest and its holdout, the signature against the manifest and the kernel's entry, an
/// oracle for every output, a writable results folder, the harness (and that it takes the
/// kernel), the toolkit (the initial kernel, with each tunable's first value, and the reference
/// compile), whether the harness confines itself where the run has
/// kernels nobody reviewed (confinement_policy), the driver and the device. Each check has a
/// status, a one-line fix and the exit code it means. Shared by `cuda-optimizer check` (prints the
/// table, exits with the first failure's code) and `optimize` (stops at the first failure).

#include <string>
#include <vector>

#include "common/device_facts.hpp"
#include "common/exit_codes.hpp"
#include "common/landlock.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

struct preflight_check {
    std::string name;
    bool passed = false;
    std::string detail;                            // what was found, or what is wrong
    std::string fix;                               // one line, when it failed
    exit_code code = exit_code::preflight_failed;  // what optimize and check exit with on it
    bool skipped = false;  // not checked (passed is true): `detail` says why ("not compiled: ...")
};

/// Which cuda-harness compiles the initial kernel and the reference. optimize's preflight
/// compiles through the run's own --harness (the default); check through the real cuda-harness
/// whatever --harness names, since a stand-in harness compiles nothing.
struct preflight_compiler {
    std::string harness;      // the harness that compiles; "" for the run's own (--harness)
    std::string unavailable;  // why nothing can compile here ("" when `harness` can)
};

struct preflight_report {
    std::vector<preflight_check> checks;
    device_facts device;                // from cuda-harness --device-info
    std::vector<device_facts> devices;  // the same for every device of --devices, in order
    /// How the harness confines itself, from its answer to a compile of an empty kernel of our
    /// own (sent before any of the user's or a job's kernels).
    confinement harness_confinement = not_probed();
    static confinement not_probed() {
        confinement c;
        c.reason = "the preflight did not reach the harness";
        return c;
    }
    bool passed() const;
    const preflight_check* first_failure() const;
    std::string table() const;
};

preflight_report run_preflight(const optimizer_options& o, process_runner& runner,
                               const preflight_compiler& compiler = {});

}  // namespace cuopt
