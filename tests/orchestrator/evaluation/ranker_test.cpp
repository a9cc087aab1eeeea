#include "orchestrator/evaluation/ranker.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE("the score is the geometric mean of the per-case medians") {
    CHECK(*geometric_mean({2.0, 8.0}) == Approx(4.0));
    CHECK(*geometric_mean({0.5}) == Approx(0.5));
    CHECK_FALSE(geometric_mean({}));
    CHECK_FALSE(geometric_mean({1.0, 0.0}));
    CHECK_FALSE(geometric_mean({1.0, -2.0}));
}

TEST_CASE("a candidate becomes best only when faster by more than the minimum gain") {
    CHECK(rank_candidate(std::nullopt, 5.0, 0.01).becomes_best);
    CHECK_FALSE(rank_candidate(1.0, 0.995, 0.01).becomes_best);  // 0.5% faster: noise
    CHECK(rank_candidate(1.0, 0.98, 0.01).becomes_best);
    CHECK_FALSE(rank_candidate(1.0, 1.2, 0.01).becomes_best);
    CHECK(rank_candidate(2.0, 1.0, 0.01).speedup == Approx(2.0));
}
