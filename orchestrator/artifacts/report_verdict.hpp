#pragma once
/// The go / no-go rule the report opens with: the declared winner passes the holdout, is
/// faster than the initial kernel beyond the practical margin (an equivalent A/A), is sanitizer
/// clean and is not below its speed-of-light floor (and, where the manifest requires an MMA class,
/// its SASS holds it). Each condition is met, not met or not run (a gate that did not run proves
/// nothing); only all met is a go. Read from summary.json.

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

enum class condition_state { met, not_met, not_run };
std::string_view to_string(condition_state s);

struct go_condition {
    std::string name;  // "passes the holdout", ...
    condition_state state = condition_state::not_run;
    std::string detail;  // the evidence behind the state, one line
};

/// A re-measured ratio of medians with its 95% interval and verdict ("faster", ...).
struct ratio_interval {
    double ratio = 1, low = 1, high = 1;
    std::string verdict;
};

struct go_verdict {
    bool go = false;
    std::string winner;                     // "a_fast.cu (iteration 1, attempt 0)"; "" when none
    bool winner_is_initial = false;         // nothing beat the initial kernel
    std::string headline;                   // one sentence: GO or NO-GO and why
    std::optional<double> search_speedup;   // the winner's geomean speedup in the search
    std::optional<ratio_interval> speedup;  // re-measured against the initial kernel
    std::optional<ratio_interval> aa;       // the winner against itself
    std::string aa_class;                   // "equivalent", "noisy", "biased"; "" in older runs
    std::optional<double> margin;           // δ of the geometric mean (0.005 is ±0.5%)
    bool reliable = false;                  // the A/A control (every case's) allows a verdict
    std::vector<go_condition> conditions;   // the rule's four (five with requires.mma), in order
};

/// The rule applied to summary.json (null where a failed run wrote none; `run` is run.json,
/// for the error that stopped it).
go_verdict decide_go(const rapidjson::Value& summary, const rapidjson::Value& run);

/// The verdict as summary.json and the closing line give it: "go"; "no_winner" when there is no
/// declared winner or the winner is the initial kernel; otherwise "no_go".
std::string verdict_word(const go_verdict& v);

/// Why it is not a go, one line each ("not run: sanitizer clean: compute-sanitizer not found");
/// empty for a go.
std::vector<std::string> verdict_reasons(const go_verdict& v);

/// "2.000x [1.990, 2.010]".
std::string format_ratio(const ratio_interval& r);

}  // namespace cuopt
