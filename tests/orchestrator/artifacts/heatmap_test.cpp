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

namespace {

// Three attempts of a run: the initial kernel, a faster one with a long autotune label, and
// a compile error; the second is the declared winner.
heatmap_data long_label_run() {
    heatmap_data d;
    d.columns = {"perf-256", "perf-384x256x320-with-a-long-case-name"};
    d.row_labels = {"0.0 initial.cu",
                    "12.3 BLOCK_X=128 BLOCK_Y=16 --extra-device-vectorization --use_fast_math",
                    "13.0 BLOCK_X=8 BLOCK_Y=4 --extra-device-vectorization"};
    d.ratio = {{1.0, 1.0}, {0.5, 0.8}, {NAN, NAN}};
    d.rejected = {std::nullopt, std::nullopt, verdict::compile_error};
    d.best = {false, true, false};
    d.speedup = {1.0, 1.6, NAN};
    d.became_best = {true, true, false};
    return d;
}

}  // namespace

TEST_CASE("heatmap rows keep their whole label: the label column is as wide as the widest one") {
    const heatmap_data d = long_label_run();
    const heatmap_layout l = layout_heatmap(d);
    REQUIRE(l.row_text.size() == 3);
    CHECK(l.row_text[1] == "* " + d.row_labels[1]);  // the winner, starred, uncut
    CHECK(l.row_text[2] == "  " + d.row_labels[2]);
    CHECK(text_width(l.row_text[1], {11, true}) <= l.label_width);
    CHECK(l.column_text[1] == d.columns[1]);
    CHECK(text_width(l.column_text[1], {11, true}) < l.cell_width);
    CHECK(l.width >= 12 + l.label_width + 2 * l.cell_width);
}

TEST_CASE("a label too long for any column keeps its start and its end around an ellipsis") {
    heatmap_data d = long_label_run();
    d.row_labels[2] = "13.0 " + std::string(400, 'x') + " --last-option-é";
    const heatmap_layout l = layout_heatmap(d);
    CHECK(l.label_width <= heatmap_layout::k_max_label_width + 16);
    const std::string& cut = l.row_text[2];
    CHECK(text_width(cut, {11, false}) <= heatmap_layout::k_max_label_width);
    CHECK_THAT(cut, Catch::StartsWith("  13.0 xxx") && Catch::EndsWith("--last-option-é") &&
                        Catch::Contains("\u2026"));
    CHECK(fit_text("short", 100, {}) == "short");
}

TEST_CASE("the heatmap's legend is wrapped into lines that fit inside its canvas") {
    const heatmap_layout l = layout_heatmap(long_label_run());
    REQUIRE(l.legend_lines.size() >= 2);
    std::string all;
    for (const std::string& line : l.legend_lines) {
        CHECK(12 + text_width(line, {10, false}) <= l.width - 12);
        all += line + " ";
    }
    CHECK_THAT(all, Catch::Contains("C compile error") && Catch::Contains("H harness error"));
    CHECK(l.height >= l.legend_top + 14 + 24 + l.legend_lines.size() * 16);
}

TEST_CASE(
    "a run draws best-so-far.png and .svg beside the heatmap, each titled for what it shows") {
    test::scratch_folder dir;
    write_heatmap(long_label_run(), dir.path());
    for (const char* stem : {"heatmap", "best-so-far"}) {
        INFO(stem);
        CHECK(test::read_text(dir / (std::string(stem) + ".png")).rfind("\x89PNG\r\n", 0) == 0);
        const std::string svg = test::read_text(dir / (std::string(stem) + ".svg"));
        CHECK(svg.rfind("<?xml", 0) == 0);
        CHECK(svg.find("</svg>") != std::string::npos);
    }
    CHECK_THAT(test::read_text(dir / "heatmap.svg"),
               Catch::Contains("<title>speedup over the initial kernel, per attempt (rows) and "
                               "performance case (columns)</title>"));
    CHECK_THAT(
        test::read_text(dir / "best-so-far.svg"),
        Catch::Contains("<title>best-so-far speedup over the initial kernel, by attempt</title>"));
}

TEST_CASE("heatmap data carries each attempt's geomean speedup and where the best changed") {
    manifest m;
    m.cases.resize(1);
    m.cases[0].name = "perf";
    search_outcome o;
    o.history.resize(3);
    o.history[0].verdict = verdict::valid, o.history[0].speedup_vs_initial = 1.0;
    o.history[0].became_best = true;
    o.history[1].verdict = verdict::timeout;
    o.history[2].verdict = verdict::valid, o.history[2].speedup_vs_initial = 0.8;
    o.initial = 0;
    o.best = 0;
    const heatmap_data d = make_heatmap_data(o, m);
    CHECK(d.speedup[0] == 1.0);
    CHECK(std::isnan(d.speedup[1]));
    CHECK(d.speedup[2] == 0.8);
    CHECK(d.became_best == std::vector<bool>{true, false, false});
}
