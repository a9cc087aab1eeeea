#include "orchestrator/contract/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace cuopt {

double unit_roundoff(dtype type) {
    switch (type) {
        case dtype::f64:
            return std::ldexp(1.0, -53);
        case dtype::f32:
            return std::ldexp(1.0, -24);
        case dtype::f16:
            return std::ldexp(1.0, -11);
        case dtype::bf16:
            return std::ldexp(1.0, -8);
        case dtype::f8e4m3:
            return std::ldexp(1.0, -4);
        case dtype::f8e5m2:
            return std::ldexp(1.0, -3);
        default:
            return 0;
    }
}

tolerance default_tolerance(dtype type) {
    // Integers are compared bit for bit; the harness refuses a nonzero atol or rtol on them.
    if (!is_float(type)) return {0, 0, 0};
    switch (type) {
        case dtype::f16:
            return {1e-2, 1e-2};
        case dtype::bf16:
            return {2e-2, 2e-2};
        case dtype::f64:
            return {1e-10, 1e-10};
        case dtype::f8e4m3:
        case dtype::f8e5m2: {
            const double one_ulp = 2 * unit_roundoff(type);
            return {one_ulp, one_ulp};
        }
        default:
            return {1e-5, 1e-5};
    }
}

tolerance reduction_tolerance(dtype type, std::uint64_t length) {
    const double u_acc = unit_roundoff(type == dtype::f64 ? dtype::f64 : dtype::f32);
    const double n = static_cast<double>(std::max<std::uint64_t>(length, 1));
    const double rtol = 2 * unit_roundoff(type) + 8 * std::sqrt(n) * u_acc;
    return {0, rtol, rtol};
}

}  // namespace cuopt
