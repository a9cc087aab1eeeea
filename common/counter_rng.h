/// The counter-based generator behind every generated input: element i of launch L
/// is a pure function of (key, seed, L, i), so any launch's inputs can be made again on
/// the GPU, in any order, and (for uniform and int_range) on the CPU bit for bit.
/// Keyed (what the optimizer always asks for), the bits are ChaCha20's keystream under a
/// per-run secret: a kernel that sees one launch's values cannot tell the next launch's.
/// Unkeyed (old run folders, hand-written requests), a public SplitMix mix anyone can predict.
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

/// ChaCha20's quarter round (RFC 8439, 2.1).
CUOPT_HD uint32_t rotl32(uint32_t v, int c) {
    return (v << c) | (v >> (32 - c));
}
CUOPT_HD void quarter_round(uint32_t* x, int a, int b, int c, int d) {
    x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 16);
    x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 12);
    x[a] += x[b], x[d] = rotl32(x[d] ^ x[a], 8);
    x[c] += x[d], x[b] = rotl32(x[b] ^ x[c], 7);
}

/// One 64-byte ChaCha20 block (20 rounds) for a 256-bit key and the original 64-bit block
/// counter and 64-bit nonce (Bernstein's layout: words 12-13 the counter, 14-15 the nonce).
CUOPT_HD void chacha20_block(const uint32_t key[8], uint64_t counter, uint64_t nonce,
                             uint32_t out[16]) {
    uint32_t in[16] = {0x61707865u,
                       0x3320646eu,
                       0x79622d32u,
                       0x6b206574u,  // "expand 32-byte k"
                       key[0],
                       key[1],
                       key[2],
                       key[3],
                       key[4],
                       key[5],
                       key[6],
                       key[7],
                       (uint32_t)counter,
                       (uint32_t)(counter >> 32),
                       (uint32_t)nonce,
                       (uint32_t)(nonce >> 32)};
    for (int i = 0; i < 16; ++i) out[i] = in[i];
    for (int round = 0; round < 10; ++round) {
        quarter_round(out, 0, 4, 8, 12), quarter_round(out, 1, 5, 9, 13);
        quarter_round(out, 2, 6, 10, 14), quarter_round(out, 3, 7, 11, 15);
        quarter_round(out, 0, 5, 10, 15), quarter_round(out, 1, 6, 11, 12);
        quarter_round(out, 2, 7, 8, 13), quarter_round(out, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; ++i) out[i] += in[i];
}

/// The key of one generator's stream: a run's 128-bit secret, one round of it (drawn per
/// evidence round) and the generator's seed, through one ChaCha20 block; `domain` keeps other
/// uses of the key (1: file inputs' rotations) apart from every generator's (0). Host side only
/// in practice (once per generator and request); the launches then use the result.
struct stream_key {
    uint32_t words[8];
};
CUOPT_HD stream_key derive_stream_key(const uint32_t run_key[4], uint64_t round, uint64_t seed,
                                      uint32_t domain = 0) {
    const uint32_t key[8] = {
        run_key[0],  run_key[1],  run_key[2],  run_key[3],  // "keyed-inputs-v1!"
        0x6b657965u, 0x642d696eu, 0x70757473u, 0x2d763121u ^ domain};
    uint32_t block[16];
    chacha20_block(key, round, seed, block);
    stream_key k;
    for (int i = 0; i < 8; ++i) k.words[i] = block[i];
    return k;
}

/// Elements per ChaCha20 block: each takes 64 bits of it.
constexpr uint64_t k_values_per_block = 8;

/// The 64 bits of element `index` among a block's 16 words (element i of the launch's stream
/// uses block i / 8, words 2(i % 8) and 2(i % 8) + 1).
CUOPT_HD uint64_t block_bits(const uint32_t block[16], uint64_t index) {
    const unsigned w = 2u * (unsigned)(index % k_values_per_block);
    return ((uint64_t)block[w] << 32) | block[w + 1];
}

/// Element `index` of launch `launch` of a keyed stream.
CUOPT_HD uint64_t keyed_bits(const stream_key& k, uint64_t launch, uint64_t index) {
    uint32_t block[16];
    chacha20_block(k.words, index / k_values_per_block, launch, block);
    return block_bits(block, index);
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
