#pragma once
/// Checks one output buffer against its oracle. Floats pass when every element has
/// |x - r| <= atol + rms_atol * rms(r) + rtol * |r| (rms over the oracle's finite
/// elements); a NaN or infinity where the oracle is finite, or an
/// element still holding the harness's poison, always fails. Integers must match
/// exactly. The result says how badly and where, for the history and the model.

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/dtype.hpp"
#include "common/element_check.h"
#include "orchestrator/contract/tolerance.hpp"

namespace cuopt {

struct validation_result {
    bool passed = false;
    std::size_t count = 0;
    std::size_t mismatches = 0;   // elements outside tolerance (including the two below)
    std::size_t non_finite = 0;   // NaN/Inf where the oracle is finite
    std::size_t unwritten = 0;    // elements still holding the poison pattern
    std::size_t worst_index = 0;  // element with the largest excess over its tolerance
    double worst_actual = 0, worst_expected = 0;
    double max_abs_error = 0, max_rel_error = 0;
    double relative_l2_error = 0;  // ||x - r|| / ||r|| over finite elements
    double allowed_atol = 0;       // the absolute slack applied: atol + rms_atol * rms(r)
    bool rms_scaled = false;       // allowed_atol holds an RMS term (the reduction rule)
    /// One line for people: "12 of 1147 elements differ; worst [1146]: 3.5 vs 3.25 ..."
    std::string summary() const;
};

/// The rule `count` expected elements of `type` set under `tol` (its RMS term resolved).
cuopt_check::rule check_rule(dtype type, const void* expected, std::size_t count,
                             const tolerance& tol);

/// A tally of `count` elements under rule `r` as a result (the harness's comparison kernel
/// sends the same fields).
validation_result validation_from_tally(dtype type, const cuopt_check::tally& t,
                                        std::uint64_t count, const cuopt_check::rule& r,
                                        bool rms_scaled);

/// Compares `count` elements of `actual` with `expected` (both raw buffers of `type`).
validation_result validate_output(dtype type, const void* actual, const void* expected,
                                  std::size_t count, const tolerance& tol);

}  // namespace cuopt
