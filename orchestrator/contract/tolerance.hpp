#pragma once
/// How close an output must be to its oracle: a float element passes when
/// |x - r| <= atol + rtol * |r|. The manifest sets it per output (or takes the dtype's
/// default below); the validator and the replay apply it.

#include "common/dtype.hpp"

namespace cuopt {

struct tolerance {
    double atol = 1e-5;
    double rtol = 1e-5;
};

/// What an output of `type` is held to when the manifest names no tolerance.
inline tolerance default_tolerance(dtype type) {
    switch (type) {
        case dtype::f16:
            return {1e-2, 1e-2};
        case dtype::bf16:
            return {2e-2, 2e-2};
        case dtype::f64:
            return {1e-10, 1e-10};
        // Interim, one rounding's worth (half an epsilon) twice over; issue 28 wants a rule
        // from the output dtype and the reduction length.
        case dtype::f8e4m3:
            return {0.125, 0.125};
        case dtype::f8e5m2:
            return {0.25, 0.25};
        default:
            return {1e-5, 1e-5};
    }
}

}  // namespace cuopt
