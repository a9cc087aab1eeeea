#include "orchestrator/evaluation/output_validator.hpp"

#include <cmath>
#include <sstream>

namespace cuopt {

validation_result validation_from_tally(dtype type, const cuopt_check::tally& t,
                                        std::uint64_t count, const cuopt_check::rule& r,
                                        bool rms_scaled) {
    validation_result v;
    v.count = count;
    v.mismatches = t.mismatches;
    v.non_finite = t.non_finite;
    v.unwritten = t.unwritten;
    v.worst_index = t.worst_index;
    v.worst_actual = cuopt_check::decode(static_cast<int>(type), t.worst_actual_bits);
    v.worst_expected = cuopt_check::decode(static_cast<int>(type), t.worst_expected_bits);
    v.max_abs_error = t.max_abs_error;
    v.max_rel_error = t.max_rel_error;
    v.relative_l2_error = t.ref_sq > 0 ? std::sqrt(t.diff_sq / t.ref_sq) : std::sqrt(t.diff_sq);
    v.allowed_atol = r.allowed_atol;
    v.rms_scaled = rms_scaled;
    v.passed = t.mismatches == 0;
    return v;
}

cuopt_check::rule check_rule(dtype type, const void* expected, std::size_t count,
                             const tolerance& tol) {
    const int kind = static_cast<int>(type);
    const double rms =
        is_float(type) && tol.rms_atol > 0
            ? cuopt_check::finite_rms(kind, static_cast<const unsigned char*>(expected), count)
            : 0;
    return cuopt_check::make_rule(kind, poison_bits(type), tol.atol, tol.rtol, tol.rms_atol, rms);
}

validation_result validate_output(dtype type, const void* actual, const void* expected,
                                  std::size_t count, const tolerance& tol) {
    const cuopt_check::rule r = check_rule(type, expected, count, tol);
    const auto* x = static_cast<const unsigned char*>(actual);
    const auto* e = static_cast<const unsigned char*>(expected);
    cuopt_check::tally t = cuopt_check::empty_tally();
    for (std::size_t i = 0; i < count; ++i)
        cuopt_check::check_element(t, r, cuopt_check::load_bits(x, r.kind, i),
                                   cuopt_check::load_bits(e, r.kind, i), i);
    return validation_from_tally(type, t, count, r, is_float(type) && tol.rms_atol > 0);
}

std::string validation_result::summary() const {
    std::ostringstream s;
    s.precision(9);
    if (passed) {
        s << "all " << count << " elements within tolerance; max abs error " << max_abs_error
          << ", relative L2 " << relative_l2_error;
        return s.str();
    }
    s << mismatches << " of " << count << " elements differ";
    if (unwritten) s << " (" << unwritten << " never written)";
    if (non_finite) s << " (" << non_finite << " NaN/Inf)";
    s << "; worst [" << worst_index << "]: got " << worst_actual << ", expected " << worst_expected
      << "; max abs error " << max_abs_error << ", max rel error " << max_rel_error
      << ", relative L2 " << relative_l2_error;
    if (rms_scaled) s << "; allowed absolute slack " << allowed_atol << " (from the oracle's RMS)";
    return s.str();
}

}  // namespace cuopt
