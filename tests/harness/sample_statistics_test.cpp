#include "harness/sample_statistics.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE(
    "the median of an odd count is the middle sample - of an even count the mean of the two middle "
    "ones") {
    CHECK(summarize({5, 1, 3}).median == 3);
    CHECK(summarize({4, 1, 3, 2}).median == 2.5);
}

TEST_CASE("statistics report min - max - mean and the sample standard deviation") {
    const auto s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
    CHECK(s.min == 2);
    CHECK(s.max == 9);
    CHECK(s.mean == 5);
    CHECK(s.stdev == Approx(2.138089935));
    CHECK(summarize({1.5}).stdev == 0);
    CHECK(summarize({}).median == 0);
}
