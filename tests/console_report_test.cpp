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
