/// The counter-based generator behind every generated input: element i of launch L
/// is a pure function of (seed, L, i), so any launch's inputs can be made again on
/// the GPU, in any order, and (for uniform and int_range) on the CPU bit for bit.
/// Plain C++ usable from host code and from the harness's support kernels (nvcc).
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define CUOPT_HD __host__ __device__ __forceinline__
#else
#define CUOPT_HD inline
#endif

namespace cuopt_rng {

/// SplitMix64's finaliser: a bijective 64-bit mix.
CUOPT_HD uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

CUOPT_HD uint64_t random_bits(uint64_t seed, uint64_t launch, uint64_t index) {
    const uint64_t stream =
        mix64(seed ^ 0x9E3779B97F4A7C15ull) ^ mix64(launch + 0x632BE59BD9B4E019ull);
    return mix64(stream + index * 0xD1B54A32D192ED03ull);
}

// Products and sums without FMA contraction, so the host and the device round alike.
CUOPT_HD double exact_mul(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
CUOPT_HD double exact_add(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/// Uniform in [low, high): 53 random bits scaled.
CUOPT_HD double uniform(uint64_t bits, double low, double high) {
    const double u = (double)(bits >> 11) * (1.0 / 9007199254740992.0);
    return exact_add(low, exact_mul(exact_add(high, -low), u));
}

/// Integer in [low, high] (inclusive); the modulo bias is below 2^-32 for spans under 2^32.
CUOPT_HD int64_t int_range(uint64_t bits, int64_t low, int64_t high) {
    const uint64_t span = (uint64_t)(high - low) + 1ull;
    return span == 0 ? (int64_t)bits : low + (int64_t)(bits % span);
}

}  // namespace cuopt_rng
