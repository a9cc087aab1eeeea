#include "orchestrator/evidence/amortised_work.hpp"

#include <catch2/catch.hpp>

#include "orchestrator/evidence/winner_evidence.hpp"

using namespace cuopt;

namespace {

attempt_result run_with(const std::vector<double>& samples, const std::string& name = "perf") {
    attempt_result r;
    r.verdict = verdict::valid;
    case_evaluation ce;
    ce.name = name;
    ce.kind = case_kind::performance;
    ce.samples_ms = samples;
    r.cases.push_back(ce);
    return r;
}

std::vector<double> one_in(int n, int launches, double fast, double slow) {
    std::vector<double> v;
    for (int i = 0; i < launches; ++i) v.push_back(i % n == 0 ? slow : fast);
    return v;
}

}  // namespace

TEST_CASE("steady launches sum to median x count and pass") {
    const attempt_result a = run_with(std::vector<double>(100, 0.004));
    const auto s = launch_spreads({&a});
    REQUIRE(s.size() == 1);
    CHECK(s[0].mean_over_median == Approx(1.0));
    CHECK(s[0].slowest_over_median == Approx(1.0));
    CHECK(s[0].tail_share == 0);
    CHECK(amortised_problem(s, 0.3, 0.2).empty());
}

TEST_CASE("one slow launch in ten doing ten launches' work is amortised, with its figures") {
    const attempt_result a = run_with(one_in(10, 110, 0.001, 0.04));
    const auto s = launch_spreads({&a});
    REQUIRE(s.size() == 1);
    CHECK(s[0].mean_over_median > 4);
    CHECK(s[0].slowest_over_median == Approx(40));
    CHECK(s[0].tail_share > 0.8);
    CHECK_THAT(amortised_problem(s, 0.3, 0.2), Catch::Contains("'perf'") &&
                                                   Catch::Contains("mean/median") &&
                                                   Catch::Contains("110 launches in 1 runs"));
}

TEST_CASE(
    "one launch in a hundred doing thirty launches' work stays under the sum's bound and is "
    "caught by the share of time in slow launches") {
    const attempt_result a = run_with(one_in(100, 200, 0.001, 0.03));
    const auto s = launch_spreads({&a});
    REQUIRE(s.size() == 1);
    CHECK(s[0].mean_over_median < 1.3);
    CHECK(s[0].tail_share > 0.2);
    CHECK_THAT(amortised_problem(s, 0.3, 0.2), Catch::Contains("above twice the median"));
}

TEST_CASE("a rare outlier of an honest kernel stays below the threshold") {
    std::vector<double> v(100, 0.004);
    v[0] = 0.012;  // a clock ramp on the first timed launch: 3x, once
    const attempt_result a = run_with(v);
    const auto s = launch_spreads({&a});
    CHECK(s[0].mean_over_median == Approx(1.02));
    CHECK(amortised_problem(s, 0.3, 0.2).empty());
}

TEST_CASE("runs are scaled by their own medians before pooling, and failed runs are left out") {
    const attempt_result slow_clock = run_with(std::vector<double>(50, 0.008));
    const attempt_result fast_clock = run_with(std::vector<double>(50, 0.004));
    attempt_result failed = run_with(one_in(2, 50, 0.001, 1.0));
    failed.verdict = verdict::wrong_output;
    const auto s = launch_spreads({&slow_clock, &fast_clock, &failed});
    REQUIRE(s.size() == 1);
    CHECK(s[0].runs == 2);
    CHECK(s[0].launches == 100);
    CHECK(s[0].mean_over_median == Approx(1.0));
}

TEST_CASE("one run's preemption is not a kernel's doing: a verdict needs most runs") {
    const attempt_result steady = run_with(std::vector<double>(100, 0.003));
    std::vector<double> preempted(100, 0.003);
    preempted[40] = 1.0;  // one 1 ms time slice of another process
    const attempt_result hit = run_with(preempted);
    const auto s = launch_spreads({&steady, &hit, &steady, &steady});
    REQUIRE(s.size() == 1);
    CHECK(s[0].mean_over_median > 1.3);  // pooled, the one slice weighs like amortised work
    CHECK(amortised_problem(s, 0.3, 0.2).empty());
    const attempt_result amortising = run_with(one_in(10, 100, 0.001, 0.04));
    const auto cheat = launch_spreads({&amortising, &steady, &amortising});
    CHECK_THAT(amortised_problem(cheat, 0.3, 0.2), Catch::Contains("in 2 of 3 runs"));
}

TEST_CASE("repetition fails both ways: faster on repeats memoises, much slower knew its inputs") {
    double ratio = 0;
    CHECK_FALSE(slower_on_repeats({1.0, 1.01}, {1.02, 1.03}, 0.5));
    // The 19x kernel of issue 44: 3.864 us varied, 19.99 us repeated.
    CHECK(slower_on_repeats({0.003864, 0.003870}, {0.01999, 0.02001}, 0.5));
    CHECK_FALSE(memoises_inputs({0.003864, 0.003870}, {0.01999, 0.02001}, 0.10, &ratio));
    // Noisy varied runs widen the allowance.
    CHECK_FALSE(slower_on_repeats({1.0, 1.6}, {2.0, 2.1}, 0.5));
}
