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
