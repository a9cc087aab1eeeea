// The progress and verdict lines a run prints: wrapping at words, never mid-word.
#include "orchestrator/artifacts/console_report.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

TEST_CASE("long reasons wrap at words on indented lines and are cut at a word") {
    const std::string reason =
        "case 'correctness-31x37x29': c: 1 of 1147 elements differ; worst [0]: got 7.33698463, "
        "expected 6.33698463; max abs error 1";
    const std::string w = wrap_text(reason, 40, "  ", 1000);
    std::size_t start = 0, lines = 0;
    while (start < w.size()) {
        std::size_t end = w.find('\n', start);
        if (end == std::string::npos) end = w.size();
        const std::string line = w.substr(start, end - start);
        CHECK(line.size() <= 42);  // the indent and 40
        CHECK(line.back() != ' ');
        ++lines;
        start = end + 1;
    }
    CHECK(lines == 4);
    std::string joined = w;
    for (std::size_t p; (p = joined.find("\n  ")) != std::string::npos;) joined.replace(p, 3, " ");
    CHECK(joined == reason);  // nothing lost, no word split
    // A word longer than the width stands alone; the text's own line breaks are kept.
    CHECK(wrap_text("a " + std::string(50, 'x') + " b", 10, "", 1000) ==
          "a\n" + std::string(50, 'x') + "\nb");
    CHECK(wrap_text("kernel.cu(3): error: x\nkernel.cu(4): error: y", 80, "  ", 1000) ==
          "kernel.cu(3): error: x\n  kernel.cu(4): error: y");
    // Beyond the cap: cut at a word, and said.
    CHECK(wrap_text("alpha beta gamma delta", 80, "", 13) == "alpha beta ...");
}

namespace {

// A case measured at `ms`.
case_evaluation case_at(const std::string& name, double ms) {
    case_evaluation ce;
    ce.name = name;
    ce.kind = case_kind::performance;
    ce.median_ms = ms;
    return ce;
}

// GPU `index`'s vendor run: `ms` per case.
device_reference vendor_on(int index, const std::map<std::string, double>& ms) {
    device_reference d;
    d.index = index;
    d.name = "NVIDIA H200";
    d.vendor.ran = true;
    d.vendor.verdict = "valid";
    d.vendor.median_ms = ms;
    return d;
}

}  // namespace

TEST_CASE(
    "the closing table gives the vendor one column while every GPU agrees within 2%, one per GPU "
    "where they differ, and reads vs vendor on the GPU that measured the best") {
    manifest m;
    for (const char* name : {"check", "perf"}) {
        m.cases.emplace_back();
        m.cases.back().name = name;
    }
    search_outcome o;
    o.history.resize(2);
    o.history[0].cases = {case_at("perf", 2.0)};
    o.history[0].device = 0;
    o.history[1].cases = {case_at("perf", 1.0)};
    o.history[1].device = 1;  // the best, measured on GPU 1
    o.initial = 0;
    o.best = 1;

    const std::string same =
        closing_table(o, m, {vendor_on(0, {{"perf", 0.50}}), vendor_on(1, {{"perf", 0.505}})});
    INFO(same);
    CHECK_THAT(same,
               Catch::StartsWith("case                          initial        best           "
                                 "speedup   vendor         vs vendor\n"));
    CHECK_THAT(
        same, Catch::Contains("\ncheck                         -              -              -\n"));
    CHECK_THAT(same, Catch::Contains(" 0.5000 ms      0.500x\n"));  // GPU 0's, one column
    CHECK_THAT(same, !Catch::Contains("vendor GPU"));

    const std::string apart =
        closing_table(o, m, {vendor_on(0, {{"perf", 0.50}}), vendor_on(1, {{"perf", 0.80}})});
    INFO(apart);
    CHECK_THAT(apart, Catch::Contains("speedup  vendor GPU 0   vendor GPU 1   vs vendor\n"));
    CHECK_THAT(apart, Catch::Contains(" 0.5000 ms      0.8000 ms      0.800x\n"));  // GPU 1's
    CHECK_THAT(apart, Catch::Contains(
                          "\ncheck                         -              -              -\n"));
    CHECK_THAT(apart, Catch::Contains(
                          "\nvs vendor: against the vendor on GPU 1, the GPU that measured the "
                          "best\n"));

    // A GPU whose vendor run failed has no figures: it differs, and shows as "-".
    device_reference failed = vendor_on(1, {});
    failed.vendor.verdict = "wrong_output";
    const std::string one_failed = closing_table(o, m, {vendor_on(0, {{"perf", 0.5}}), failed});
    INFO(one_failed);
    CHECK_THAT(one_failed, Catch::Contains(" 0.5000 ms      -              -\n"));
    CHECK(closing_table(o, m).find("vendor") == std::string::npos);
}

TEST_CASE(
    "an imported problem's closing table: eager, the user's kernel, the best, and "
    "torch.compile against the best") {
    manifest m;
    m.cases.emplace_back();
    m.cases.back().name = "perf";
    search_outcome o;
    o.history.resize(3);
    o.history[0].cases = {case_at("perf", 1.6)};
    o.history[0].cand.pytorch_mode = "eager";
    o.history[0].cand.proposer = proposer_kind::initial;
    o.history[1].cases = {case_at("perf", 0.35)};
    o.history[1].iteration = 1;
    o.history[1].cand.proposer = proposer_kind::initial;  // the user's kernel, beside eager
    o.history[2].cases = {case_at("perf", 0.17)};
    o.history[2].iteration = 1;
    o.history[2].attempt = 1;
    o.history[2].cand.proposer = proposer_kind::files;
    o.initial = 0;
    o.best = 2;
    CHECK(o.own_kernel() == std::optional<std::size_t>(1));
    attempt_result compile;
    compile.cases = {case_at("perf", 0.24)};
    const std::string t = closing_table(o, m, {}, false, &compile);
    INFO(t);
    CHECK_THAT(t, Catch::StartsWith("case                          eager          yours          "
                                    "best           speedup     compile        vs compile\n"
                                    "perf                          1.6000 ms      0.3500 ms      "
                                    "0.1700 ms      9.411x      0.2400 ms      1.411x"));
    // Without them: the columns a CUDA baseline always had.
    o.history[0].cand.pytorch_mode.clear();
    o.history[1].iteration = 0;
    CHECK_THAT(closing_table(o, m),
               Catch::StartsWith("case                          initial        best           "
                                 "speedup\n"));
}

TEST_CASE("the closing table says the best's fraction of each case's speed-of-light floor") {
    manifest m;
    for (const char* name : {"check", "perf-a", "perf-b"}) {
        m.cases.emplace_back();
        m.cases.back().name = name;
    }
    search_outcome o;
    o.history.resize(2);
    o.history[0].cases = {case_at("perf-a", 2.0), case_at("perf-b", 4.0)};
    o.history[1].cases = {case_at("perf-a", 0.125), case_at("perf-b", 1.0)};
    o.initial = 0;
    o.best = 1;
    CHECK(closing_table(o, m).find("speed of light") == std::string::npos);  // no floor known
    o.history[1].cases[0].floor_ms = 0.1;
    o.history[1].cases[1].floor_ms = 0.83;
    const std::string t = closing_table(o, m);
    INFO(t);
    CHECK_THAT(t, Catch::Contains("speed of light (the best against each case's floor: its bytes "
                                  "over the measured DRAM bandwidth, or its flops over the peak, "
                                  "whichever is longer; memory SOL: every input read and output "
                                  "written once at that bandwidth, no L2 credit): perf-a 80%, "
                                  "perf-b 83%\n"));
    // The memory SOL of the GPU that measured the best, not another GPU's.
    std::vector<device_reference> devices(2);
    devices[0].index = 0;
    devices[0].floors["perf-a"].traffic_ms = 0.025;
    devices[1].index = 1;
    devices[1].floors["perf-a"].traffic_ms = 0.1125;
    devices[1].floors["perf-b"].traffic_ms = 0.97;
    o.history[1].device = 1;
    const std::string with_traffic = closing_table(o, m, devices, false);
    INFO(with_traffic);
    CHECK_THAT(with_traffic,
               Catch::Contains("): perf-a 80% (memory SOL 90%), perf-b 83% (memory SOL 97%)\n"));
}
