#include "common/counter_rng.h"

#include <catch2/catch.hpp>
#include <set>

using namespace cuopt_rng;

TEST_CASE("generated values are a pure function of seed - launch and index") {
    CHECK(random_bits(7, 3, 11) == random_bits(7, 3, 11));
    CHECK(random_bits(7, 3, 11) != random_bits(7, 4, 11));
    CHECK(random_bits(7, 3, 11) != random_bits(8, 3, 11));
    CHECK(random_bits(7, 3, 11) != random_bits(7, 3, 12));
}

TEST_CASE("uniform values stay between low and high and average near the middle") {
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        const double v = uniform(random_bits(1, 0, i), -2.0, 6.0);
        REQUIRE(v >= -2.0);
        REQUIRE(v < 6.0);
        sum += v;
    }
    CHECK(sum / n == Approx(2.0).margin(0.05));
}

TEST_CASE("int_range covers both inclusive ends and nothing outside") {
    std::set<long long> seen;
    for (int i = 0; i < 10000; ++i) {
        const long long v = int_range(random_bits(5, 1, i), -3, 3);
        REQUIRE(v >= -3);
        REQUIRE(v <= 3);
        seen.insert(v);
    }
    CHECK(seen.size() == 7);
}

TEST_CASE("chacha20_block reproduces RFC 8439's block function test vector") {
    // RFC 8439 2.3.2: key 00 01 .. 1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1.
    // In Bernstein's 64/64 layout: words 12-13 the counter (1, 0x09000000), 14-15 the nonce.
    uint32_t key[8];
    for (int w = 0; w < 8; ++w)
        key[w] = (uint32_t)(4 * w) | (uint32_t)(4 * w + 1) << 8 | (uint32_t)(4 * w + 2) << 16 |
                 (uint32_t)(4 * w + 3) << 24;
    uint32_t out[16];
    chacha20_block(key, 1ull | (0x09000000ull << 32), 0x4a000000ull, out);
    const uint32_t expected[16] = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3,
                                   0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,
                                   0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                   0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
    for (int i = 0; i < 16; ++i) CHECK(out[i] == expected[i]);
}

TEST_CASE(
    "keyed bits depend on the key, the launch and the index, and differ from the public stream") {
    const uint32_t run_key[4] = {1, 2, 3, 4}, other[4] = {1, 2, 3, 5};
    const stream_key k = derive_stream_key(run_key, 0, 11), o = derive_stream_key(other, 0, 11);
    std::set<uint64_t> seen;
    for (uint64_t launch = 0; launch < 4; ++launch)
        for (uint64_t i = 0; i < 20; ++i) seen.insert(keyed_bits(k, launch, i));
    CHECK(seen.size() == 80);
    CHECK(keyed_bits(k, 3, 5) != keyed_bits(o, 3, 5));
    CHECK(keyed_bits(k, 3, 5) != random_bits(11, 3, 5));
    // Eight elements share a block: the block path and the element path agree.
    uint32_t block[16];
    chacha20_block(k.words, 2, 7, block);
    for (uint64_t i = 16; i < 24; ++i) CHECK(block_bits(block, i) == keyed_bits(k, 7, i));
}

TEST_CASE("keyed uniform values still fill their range evenly") {
    const uint32_t run_key[4] = {9, 9, 9, 9};
    const stream_key k = derive_stream_key(run_key, 5, 1);
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
        const double v = uniform(keyed_bits(k, 0, i), -2.0, 6.0);
        REQUIRE(v >= -2.0);
        REQUIRE(v < 6.0);
        sum += v;
    }
    CHECK(sum / n == Approx(2.0).margin(0.05));
}
