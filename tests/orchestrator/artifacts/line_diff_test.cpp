// The report's line diff (dtl underneath): edit scripts, hunks and their headers as diff -u
// writes them.
#include "orchestrator/artifacts/line_diff.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {

// The hunks as a unified diff's body ("@@ -1,3 +1,4 @@" headers, then " ", "-", "+" lines):
// what the tests compare, the report draws them as HTML.
std::string unified_text(const std::vector<diff_hunk>& hunks) {
    std::string out;
    for (const diff_hunk& h : hunks) {
        out += "@@ -" + std::to_string(h.before_start) + "," + std::to_string(h.before_count) +
               " +" + std::to_string(h.after_start) + "," + std::to_string(h.after_count) + " @@\n";
        for (const diff_line& l : h.lines)
            out += (l.kind == diff_kind::same      ? " "
                    : l.kind == diff_kind::removed ? "-"
                                                   : "+") +
                   l.text + "\n";
    }
    return out;
}

}  // namespace

namespace {

std::string numbers(int from, int to, int replaced = 0, const char* with = "", int replaced2 = 0,
                    const char* with2 = "") {
    std::string out;
    for (int i = from; i <= to; ++i)
        out += (i == replaced    ? std::string(with)
                : i == replaced2 ? with2
                                 : std::to_string(i)) +
               "\n";
    return out;
}

}  // namespace

TEST_CASE("identical texts have no changed line and no hunk") {
    const auto lines = diff_lines("a\nb\n", "a\nb\n");
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].kind == diff_kind::same);
    CHECK(lines[1].before_line == 2);
    CHECK(lines[1].after_line == 2);
    CHECK(diff_hunks(lines).empty());
}

TEST_CASE("a changed line is its removal then its addition, each with its own line number") {
    const auto lines = diff_lines("a\nb\nc\n", "a\nB\nc\n");
    REQUIRE(lines.size() == 4);
    CHECK(lines[1].kind == diff_kind::removed);
    CHECK(lines[1].text == "b");
    CHECK(lines[1].before_line == 2);
    CHECK(lines[1].after_line == 0);
    CHECK(lines[2].kind == diff_kind::added);
    CHECK(lines[2].text == "B");
    CHECK(lines[2].after_line == 2);
    CHECK(lines[2].before_line == 0);
}

TEST_CASE("an insertion at the top and a deletion at the end read as diff -u writes them") {
    CHECK(unified_text(diff_hunks(diff_lines("a\nb\nc\n", "x\na\nb\n"))) ==
          "@@ -1,3 +1,3 @@\n+x\n a\n b\n-c\n");
}

TEST_CASE("changes ten lines apart are two hunks with three lines of context each") {
    CHECK(unified_text(
              diff_hunks(diff_lines(numbers(1, 20), numbers(1, 20, 5, "five", 16, "sixteen")))) ==
          "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
          "@@ -13,7 +13,7 @@\n 13\n 14\n 15\n-16\n+sixteen\n 17\n 18\n 19\n");
}

TEST_CASE("changes whose context would touch share one hunk") {
    const auto hunks =
        diff_hunks(diff_lines(numbers(1, 20), numbers(1, 20, 5, "five", 12, "twelve")));
    REQUIRE(hunks.size() == 1);
    CHECK(hunks[0].before_start == 2);
    CHECK(hunks[0].before_count == 14);
    CHECK(hunks[0].after_count == 14);
}

TEST_CASE(
    "a text against nothing is all additions, its hunk starting at line 0 of the empty side") {
    CHECK(unified_text(diff_hunks(diff_lines("", "a\nb\nc\n"))) == "@@ -0,0 +1,3 @@\n+a\n+b\n+c\n");
}

TEST_CASE("line breaks may be CRLF and the last line may lack one") {
    CHECK(split_lines("a\r\nb") == std::vector<std::string>{"a", "b"});
    CHECK(split_lines("") == std::vector<std::string>{});
    CHECK(diff_hunks(diff_lines("a\r\nb\r\n", "a\nb")).empty());
}
