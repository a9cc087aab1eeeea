#pragma once
/// Does the kernel give the same answer twice? The outputs of repeated runs on
/// identical inputs, compared with the first run: bitwise identical, different but
/// within the output's tolerance (a warning: e.g. the order of floating-point atomics),
/// or beyond it (the kernel is disqualified).

#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/name_table.hpp"
#include "orchestrator/evaluation/output_validator.hpp"

namespace cuopt {

enum class determinism_class { bitwise, within_tolerance, beyond_tolerance };

inline constexpr auto k_determinism_classes =
    make_name_table<determinism_class>({{determinism_class::bitwise, "bitwise"},
                                        {determinism_class::within_tolerance, "within_tolerance"},
                                        {determinism_class::beyond_tolerance, "beyond_tolerance"}});

inline const char* to_string(determinism_class d) {
    return k_determinism_classes.name(d);
}

struct determinism_result {
    determinism_class kind = determinism_class::bitwise;
    std::string detail;  // the worst difference, for people
};

/// One output's bytes from each run (at least one run).
determinism_result classify_runs(dtype type, const tolerance& tol,
                                 const std::vector<std::vector<unsigned char>>& runs,
                                 const std::string& what);

/// The worse of two results (beyond > within > bitwise).
determinism_result worse(const determinism_result& a, const determinism_result& b);

}  // namespace cuopt
