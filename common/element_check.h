/// One rule for checking an output element against the oracle's, shared by the optimizer's CPU
/// comparison (output_validator) and the harness's comparison kernel (support_kernels.cu, nvcc):
/// the same decoding, the same tests in the same order, every product and sum rounded on its
/// own (no fused multiply-add on either side), so both give the same verdict, counts, maxima and
/// worst element for every buffer. Only the two sums of squares (relative L2) are added in
/// another order on the GPU, which moves them by a few units in the last place.
/// Plain C++ usable from host code and from device code, like counter_rng.h.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CUOPT_CHECK_HD __host__ __device__ __forceinline__
#else
#define CUOPT_CHECK_HD inline
#endif

namespace cuopt_check {

/// The element types, in common/dtype.hpp's order (dtype.cpp asserts it).
enum kind : int { f16, bf16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, f8e4m3, f8e5m2 };

CUOPT_CHECK_HD int size_of(int k) {
    switch (k) {
        case f16:
        case bf16:
        case i16:
        case u16:
            return 2;
        case f32:
        case i32:
        case u32:
            return 4;
        case f64:
        case i64:
        case u64:
            return 8;
        default:
            return 1;
    }
}

CUOPT_CHECK_HD bool is_float_kind(int k) {
    return k == f16 || k == bf16 || k == f32 || k == f64 || k == f8e4m3 || k == f8e5m2;
}

/// Element i's bytes as an unsigned integer (little endian, as both machines store them).
CUOPT_CHECK_HD uint64_t load_bits(const unsigned char* data, int k, uint64_t i) {
    const int n = size_of(k);
    const unsigned char* p = data + i * static_cast<uint64_t>(n);
    uint64_t v = 0;
    for (int b = 0; b < n; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
    return v;
}

// A small float format (sign, `e` exponent bits, `m` mantissa bits, IEEE layout) as a double,
// exactly. all_ones_inf: the all-ones exponent is infinity/NaN (f16, e5m2); else only all ones
// in exponent and mantissa is NaN (e4m3).
CUOPT_CHECK_HD double small_float(uint64_t bits, int e, int m, int bias, bool all_ones_inf) {
    const bool negative = (bits >> (e + m)) & 1u;
    const int exp_field = static_cast<int>((bits >> m) & ((1u << e) - 1u));
    const int mantissa = static_cast<int>(bits & ((1u << m) - 1u));
    double v;
    if (exp_field == (1 << e) - 1 && (all_ones_inf || mantissa == (1 << m) - 1))
        v = all_ones_inf && mantissa == 0 ? HUGE_VAL : NAN;
    else if (exp_field == 0)
        v = ldexp(static_cast<double>(mantissa), 1 - bias - m);
    else
        v = ldexp(static_cast<double>(mantissa + (1 << m)), exp_field - bias - m);
    return negative ? -v : v;
}

CUOPT_CHECK_HD double sign_extend(uint64_t bits, int bytes) {
    const int shift = 64 - 8 * bytes;
    return static_cast<double>(static_cast<int64_t>(bits << shift) >> shift);
}

/// An element's value, exactly (integers beyond 2^53 round to the nearest double).
CUOPT_CHECK_HD double decode(int k, uint64_t bits) {
    switch (k) {
        case f16:
            return small_float(bits, 5, 10, 15, true);
        case bf16: {
            const uint32_t w = static_cast<uint32_t>(bits) << 16;
            float f;
            memcpy(&f, &w, 4);
            return f;
        }
        case f32: {
            const uint32_t w = static_cast<uint32_t>(bits);
            float f;
            memcpy(&f, &w, 4);
            return f;
        }
        case f64: {
            double d;
            memcpy(&d, &bits, 8);
            return d;
        }
        case i8:
        case i16:
        case i32:
        case i64:
            return sign_extend(bits, size_of(k));
        case f8e4m3:
            return small_float(bits, 4, 3, 7, false);
        case f8e5m2:
            return small_float(bits, 5, 2, 15, true);
        default:
            return static_cast<double>(bits);  // the unsigned integers
    }
}

// Rounded on their own: a compiler must not fuse them (nvcc does by default).
CUOPT_CHECK_HD double mul(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
CUOPT_CHECK_HD double add(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/// The root mean square of a float buffer's finite elements, summed in index order (0 when
/// none is). Host code only computes it (the optimizer, and the harness once per oracle file).
CUOPT_CHECK_HD double finite_rms(int k, const unsigned char* data, uint64_t count) {
    double sum_sq = 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < count; ++i) {
        const double v = decode(k, load_bits(data, k, i));
        if (!isfinite(v)) continue;
        sum_sq = add(sum_sq, mul(v, v));
        ++n;
    }
    return n ? sqrt(sum_sq / static_cast<double>(n)) : 0;
}

/// What an element must satisfy: |x - r| <= allowed_atol + rtol * |r| for floats (allowed_atol
/// holds the RMS term already), equal bits for integers; the poison is never a written value.
struct rule {
    int kind;
    int pad;
    uint64_t poison;
    double allowed_atol;
    double rtol;
};

/// The rule for expected values whose finite elements have root mean square `expected_rms`
/// (finite_rms): allowed_atol = atol + rms_atol * expected_rms for floats with rms_atol > 0
/// (the reduction rule), atol otherwise.
CUOPT_CHECK_HD rule make_rule(int k, uint64_t poison, double atol, double rtol, double rms_atol,
                              double expected_rms) {
    rule r;
    r.kind = k;
    r.pad = 0;
    r.poison = poison;
    r.allowed_atol = atol;
    if (is_float_kind(k) && rms_atol > 0) r.allowed_atol = add(atol, mul(rms_atol, expected_rms));
    r.rtol = is_float_kind(k) ? rtol : 0;
    return r;
}

/// What a run of elements showed. Merged in any grouping, every field but the two sums comes
/// out the same; worst_* name the element with the largest excess over its tolerance, the
/// lowest index among equals (its two values as stored: they may be NaN).
struct tally {
    uint64_t compared;  // elements checked: the count, or some were skipped
    uint64_t mismatches, non_finite, unwritten, worst_index;
    uint64_t worst_actual_bits, worst_expected_bits;
    double worst_excess;
    double max_abs_error, max_rel_error, diff_sq, ref_sq;
};

CUOPT_CHECK_HD tally empty_tally() {
    tally t;
    t.compared = t.mismatches = t.non_finite = t.unwritten = t.worst_index = 0;
    t.worst_actual_bits = t.worst_expected_bits = 0;
    t.worst_excess = -1;
    t.max_abs_error = t.max_rel_error = t.diff_sq = t.ref_sq = 0;
    return t;
}

CUOPT_CHECK_HD void note_error(tally& t, double abs_err, double e) {
    if (abs_err > t.max_abs_error) t.max_abs_error = abs_err;
    t.diff_sq = add(t.diff_sq, mul(abs_err, abs_err));
    t.ref_sq = add(t.ref_sq, mul(e, e));
}

/// Element `i` (bits of the actual and the expected value) into `t`; call in increasing i.
CUOPT_CHECK_HD void check_element(tally& t, const rule& r, uint64_t actual_bits,
                                  uint64_t expected_bits, uint64_t i) {
    ++t.compared;
    const bool floating = is_float_kind(r.kind);
    const double x = decode(r.kind, actual_bits), e = decode(r.kind, expected_bits);
    bool bad = false;
    double excess = 0;
    if (actual_bits == r.poison && (floating || expected_bits != r.poison)) {
        ++t.unwritten;
        bad = true;
        excess = HUGE_VAL;
    } else if (floating && !isfinite(x) && isfinite(e)) {
        ++t.non_finite;
        bad = true;
        excess = HUGE_VAL;
    } else if (floating && !isfinite(e)) {
        bad = !(isnan(x) && isnan(e)) && x != e;  // the oracle's own NaN/Inf must be matched
        excess = bad ? HUGE_VAL : 0;
    } else if (floating) {
        const double abs_err = fabs(add(x, -e));
        const double allowed = add(r.allowed_atol, mul(r.rtol, fabs(e)));
        note_error(t, abs_err, e);
        if (e != 0) {
            const double rel = abs_err / fabs(e);
            if (rel > t.max_rel_error) t.max_rel_error = rel;
        }
        bad = abs_err > allowed;
        excess = add(abs_err, -allowed);
    } else {
        bad = actual_bits != expected_bits;
        const double abs_err = fabs(add(x, -e));
        note_error(t, abs_err, e);
        excess = bad ? abs_err : 0;
    }
    if (!bad) return;
    ++t.mismatches;
    if (excess > t.worst_excess) {
        t.worst_excess = excess;
        t.worst_index = i;
        t.worst_actual_bits = actual_bits;
        t.worst_expected_bits = expected_bits;
    }
}

/// `b` into `a`: counts and sums add, maxima stay maxima, the worst is the larger excess (the
/// lower index on a tie).
CUOPT_CHECK_HD void merge(tally& a, const tally& b) {
    a.compared += b.compared;
    a.mismatches += b.mismatches;
    a.non_finite += b.non_finite;
    a.unwritten += b.unwritten;
    if (b.worst_excess > a.worst_excess ||
        (b.worst_excess == a.worst_excess && b.mismatches && b.worst_index < a.worst_index)) {
        a.worst_excess = b.worst_excess;
        a.worst_index = b.worst_index;
        a.worst_actual_bits = b.worst_actual_bits;
        a.worst_expected_bits = b.worst_expected_bits;
    }
    if (b.max_abs_error > a.max_abs_error) a.max_abs_error = b.max_abs_error;
    if (b.max_rel_error > a.max_rel_error) a.max_rel_error = b.max_rel_error;
    a.diff_sq = add(a.diff_sq, b.diff_sq);
    a.ref_sq = add(a.ref_sq, b.ref_sq);
}

}  // namespace cuopt_check
