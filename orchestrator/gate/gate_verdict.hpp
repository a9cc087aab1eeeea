#pragma once
/// The regression gate's judgement, apart from running anything: per performance case the
/// kernel's latency now against the accepted figures (and against the accepted kernel timed
/// beside it now, and the accepted kernel now against its own figures: the drift), each a
/// ratio of medians with the evidence stage's 95% two-level bootstrap interval; then the
/// rule that turns those, the outputs and the environment into pass, fail or cannot judge.
///
/// The rule: cannot judge (2) when nothing could be measured or compared (no GPU or driver,
/// no replay requests or figures, another GPU model); else fail (1) when any output is wrong,
/// any run of the kernel failed, or for any performance case or the geometric mean the lower
/// end of the interval of (kernel now / accepted) exceeds 1 + threshold, against the accepted
/// figures or against the accepted kernel measured beside it; else pass (0).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/name_table.hpp"
#include "orchestrator/evidence/significance.hpp"

namespace cuopt {

/// The gate's exit codes: its own contract (a CI step reads them), apart from exit_code's.
enum class gate_outcome { pass = 0, fail = 1, cannot_judge = 2 };

inline constexpr auto k_gate_outcomes =
    make_name_table<gate_outcome>({{gate_outcome::pass, "pass"},
                                   {gate_outcome::fail, "fail"},
                                   {gate_outcome::cannot_judge, "cannot_judge"}});

/// Latency now over latency then: above 1 the kernel is slower. `verdict` is the kernel's
/// (slower, faster, no significant difference); `regression`: low > 1 + threshold.
struct slowdown_estimate {
    double ratio = 1, low = 1, high = 1;
    significance verdict = significance::no_significant_difference;
    bool regression = false;
};

struct case_latency {
    std::string name;
    double accepted_ms = 0;                 // the accepted figures' median
    double kernel_ms = 0;                   // the kernel now
    std::optional<double> accepted_now_ms;  // the accepted kernel now (with --kernel)
    slowdown_estimate vs_accepted;          // kernel now / accepted figures
    std::optional<slowdown_estimate> vs_accepted_now,
        drift;  // / accepted now; accepted now / figures
};

struct latency_report {
    std::vector<case_latency> cases;
    slowdown_estimate geomean;
    std::optional<slowdown_estimate> geomean_vs_accepted_now, geomean_drift;
};

/// Per performance case, each run's per-launch samples.
using case_samples = std::map<std::string, run_samples>;

struct latency_inputs {
    case_samples accepted;      // the accepted figures (recorded in another session: unpaired)
    case_samples kernel;        // the kernel now
    case_samples accepted_now;  // the accepted kernel beside it, round for round (may be empty)
    double threshold = 0.05;
};

/// Compares every case the accepted figures and the kernel both have; nullopt when none.
std::optional<latency_report> compare_latency(const latency_inputs& in);

/// What the gate found, for the rule.
struct gate_findings {
    double threshold = 0.05;
    std::vector<std::string> cannot_judge;   // why nothing can be judged
    std::vector<std::string> kernel_failed;  // a run of the kernel failed (compile, crash, ...)
    std::vector<std::string> wrong_outputs;  // "round 2: case 'x': c: 1 of 65536 differ; ..."
    std::optional<latency_report> latency;
    std::vector<std::string> environment;  // what changed, named so a failure can be attributed
};

struct gate_verdict {
    gate_outcome outcome = gate_outcome::pass;
    std::vector<std::string> reasons;  // why it failed or cannot judge; empty on a pass
    std::string line;                  // "PASS: ...", "FAIL: ...", "CANNOT JUDGE: ..."
};

gate_verdict judge(const gate_findings& f);

/// "1.300x [1.290, 1.310]".
std::string describe_slowdown(const slowdown_estimate& e);

}  // namespace cuopt
