#pragma once
/// A line diff of two texts, for the report's view of the winner's source against the
/// initial kernel and against its parent: the shortest edit script over whole lines from
/// dtl (Debian's libdtl-dev, Wu's O(NP) refinement of Myers' algorithm), each run of
/// changes written as its removals then its additions, grouped into unified-diff hunks.

#include <string>
#include <vector>

namespace cuopt {

enum class diff_kind { same, removed, added };

struct diff_line {
    diff_kind kind = diff_kind::same;
    std::string text;     // without its line break
    int before_line = 0;  // 1-based line in the first text; 0 for an added line
    int after_line = 0;   // 1-based line in the second text; 0 for a removed line
};

/// Lines changed together with up to `context` unchanged lines around them, as "@@ -b,n +a,m @@".
struct diff_hunk {
    int before_start = 0, before_count = 0;
    int after_start = 0, after_count = 0;
    std::vector<diff_line> lines;
};

/// The text's lines without their breaks ("\n" or "\r\n"); a last line without a break counts.
std::vector<std::string> split_lines(const std::string& text);

/// Every line of both texts in order: kept, removed (from `before`) or added (in `after`).
std::vector<diff_line> diff_lines(const std::string& before, const std::string& after);

/// The changes with `context` kept lines around each; hunks whose context would touch merge.
std::vector<diff_hunk> diff_hunks(const std::vector<diff_line>& lines, int context = 3);

}  // namespace cuopt
