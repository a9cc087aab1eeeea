#include "orchestrator/evaluation/output_validator.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace cuopt {

namespace {

std::uint64_t bits_at(dtype type, const void* data, std::size_t i) {
    std::uint64_t v = 0;
    std::memcpy(&v, static_cast<const unsigned char*>(data) + i * dtype_size(type),
                dtype_size(type));
    return v;
}

// The root mean square of the finite elements of a float buffer (0 when none is).
double finite_rms(dtype type, const void* data, std::size_t count) {
    double sum_sq = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const double v = element_as_double(type, data, i);
        if (!std::isfinite(v)) continue;
        sum_sq += v * v;
        ++n;
    }
    return n ? std::sqrt(sum_sq / static_cast<double>(n)) : 0;
}

}  // namespace

validation_result validate_output(dtype type, const void* actual, const void* expected,
                                  std::size_t count, const tolerance& tol) {
    validation_result r;
    r.count = count;
    const bool floating = is_float(type);
    const std::uint64_t poison = poison_bits(type);
    double diff_sq = 0, ref_sq = 0, worst_excess = -1;
    r.allowed_atol = tol.atol;
    if (floating && tol.rms_atol > 0) {
        r.allowed_atol += tol.rms_atol * finite_rms(type, expected, count);
        r.rms_scaled = true;
    }
    for (std::size_t i = 0; i < count; ++i) {
        const double x = element_as_double(type, actual, i);
        const double e = element_as_double(type, expected, i);
        bool bad = false;
        double excess = 0;
        if (bits_at(type, actual, i) == poison &&
            (floating || bits_at(type, expected, i) != poison)) {
            ++r.unwritten;
            bad = true;
            excess = INFINITY;
        } else if (floating && !std::isfinite(x) && std::isfinite(e)) {
            ++r.non_finite;
            bad = true;
            excess = INFINITY;
        } else if (floating && !std::isfinite(e)) {
            bad = !(std::isnan(x) && std::isnan(e)) &&
                  x != e;  // the oracle's own NaN/Inf must be matched
            excess = bad ? INFINITY : 0;
        } else if (floating) {
            const double abs_err = std::fabs(x - e);
            const double allowed = r.allowed_atol + tol.rtol * std::fabs(e);
            r.max_abs_error = std::max(r.max_abs_error, abs_err);
            if (e != 0) r.max_rel_error = std::max(r.max_rel_error, abs_err / std::fabs(e));
            diff_sq += abs_err * abs_err;
            ref_sq += e * e;
            bad = abs_err > allowed;
            excess = abs_err - allowed;
        } else {
            bad = bits_at(type, actual, i) != bits_at(type, expected, i);
            const double abs_err = std::fabs(x - e);
            r.max_abs_error = std::max(r.max_abs_error, abs_err);
            diff_sq += abs_err * abs_err;
            ref_sq += e * e;
            excess = bad ? abs_err : 0;
        }
        if (bad) ++r.mismatches;
        if (bad && excess > worst_excess) {
            worst_excess = excess;
            r.worst_index = i;
            r.worst_actual = x;
            r.worst_expected = e;
        }
    }
    r.relative_l2_error = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq);
    r.passed = r.mismatches == 0;
    return r;
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
