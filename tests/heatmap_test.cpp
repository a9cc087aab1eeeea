#include "orchestrator/artifacts/heatmap.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "test_support.hpp"

using namespace cuopt;

TEST_CASE(
    "heatmap rows carry the latency ratio to the initial kernel and rejected attempts their "
    "class") {
    manifest m;
    m.cases.resize(2);
    m.cases[0].name = "check";
    m.cases[0].kind = case_kind::correctness;
    m.cases[1].name = "perf";
    search_outcome o;
    auto attempt = [](int it, verdict v, std::optional<double> ms) {
        attempt_result r;
        r.iteration = it;
        r.verdict = v;
        r.cand.label = "k" + std::to_string(it);
        case_evaluation ce;
        ce.name = "perf";
        ce.median_ms = ms;
        r.cases.push_back(ce);
        return r;
    };
    o.history = {attempt(0, verdict::valid, 2.0), attempt(1, verdict::valid, 1.0),
                 attempt(2, verdict::wrong_output, std::nullopt)};
    o.initial = 0;
    o.best = 1;
    const heatmap_data d = make_heatmap_data(o, m);
    REQUIRE(d.columns == std::vector<std::string>{"perf"});
    CHECK(d.ratio[0][0] == 1.0);
    CHECK(d.ratio[1][0] == 0.5);
    CHECK(std::isnan(d.ratio[2][0]));
    CHECK(d.rejected[2] == verdict::wrong_output);
    CHECK_FALSE(d.rejected[0]);
    CHECK(d.best == std::vector<bool>{false, true, false});
    CHECK(reason_letter(verdict::timeout) == "T");
    CHECK(reason_letter(verdict::compile_error) == "C");
    test::scratch_folder dir;
    write_heatmap(d, dir.path());
    CHECK(test::read_text(dir / "heatmap.png").rfind("\x89PNG", 0) == 0);
    CHECK(test::read_text(dir / "heatmap.svg").find("<svg") != std::string::npos);
}
