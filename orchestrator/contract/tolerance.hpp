#pragma once
/// How close an output must be to its oracle: a float element passes when
/// |x - r| <= atol + rms_atol * rms(r) + rtol * |r|, rms(r) the root mean square of the
/// case's finite oracle values. The manifest sets it per output: explicit numbers, the
/// reduction rule below (an output that names its `reduction_length`), or the dtype's
/// default. The validator and the replay apply it. docs/tolerances.md explains the rule.

#include <cstdint>

#include "common/dtype.hpp"

namespace cuopt {

struct tolerance {
    double atol = 1e-5;
    double rtol = 1e-5;
    /// Absolute slack in units of the oracle's RMS: the normwise term of the reduction rule,
    /// for outputs near zero by cancellation. 0: none.
    double rms_atol = 0;
};

/// Half the gap between 1 and the next value of a float dtype (2^-p for p significand bits
/// with the implicit one): f64 2^-53, f32 2^-24, f16 2^-11, bf16 2^-8, f8e4m3 2^-4,
/// f8e5m2 2^-3. 0 for integers.
double unit_roundoff(dtype type);

/// What an output of `type` is held to when the manifest names no tolerance and no reduction
/// length: a fixed table (f32 1e-5, f16 1e-2, bf16 2e-2, f64 1e-10, fp8 one rounding's
/// disagreement: 2u); integers 0 (compared exactly: the harness takes no other number).
tolerance default_tolerance(dtype type);

/// The reduction rule, for an output each of whose elements sums `length` products computed
/// in at least fp32 (f64 outputs: in f64) and is rounded once to `type`:
///   rtol = 2 u_out + 8 sqrt(length) u_acc,   rms_atol = rtol,   atol = 0.
/// 2 u_out lets the candidate and the oracle round the same sum to neighbouring values (one
/// ulp). A sum of n zero-mean terms accumulated in another order is off by about
/// 0.4 sqrt(n) u_acc times the output's RMS, so 8 sqrt(n) u_acc is some 20 standard
/// deviations: past the largest error of 10^8 elements, yet far below one lost term (1/sqrt(n)
/// of the RMS) or TF32 accumulation (0.4 sqrt(n) 2^-11). The RMS term judges elements that
/// cancel to near zero against the output's typical size (a normwise bound, as LAPACK's tests
/// use).
tolerance reduction_tolerance(dtype type, std::uint64_t length);

}  // namespace cuopt
