#include "orchestrator/artifacts/line_diff.hpp"

#include <algorithm>
#include <dtl/dtl.hpp>

namespace cuopt {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        start = end + 1;
    }
    return lines;
}

namespace {

// dtl may give a run of changes as additions before removals; a reader expects the old lines
// first, so each run is written as its removals, then its additions.
void append_run(std::vector<diff_line>& out, std::vector<diff_line>& removed,
                std::vector<diff_line>& added) {
    out.insert(out.end(), removed.begin(), removed.end());
    out.insert(out.end(), added.begin(), added.end());
    removed.clear();
    added.clear();
}

}  // namespace

std::vector<diff_line> diff_lines(const std::string& before, const std::string& after) {
    const std::vector<std::string> a = split_lines(before), b = split_lines(after);
    dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
    if (a.size() + b.size() > 50000) diff.enableHuge();  // bounded memory for very long texts
    diff.compose();
    std::vector<diff_line> out, removed, added;
    for (const auto& [text, info] : diff.getSes().getSequence()) {
        diff_line line;
        line.text = text;
        if (info.type == dtl::SES_DELETE) {
            line.kind = diff_kind::removed;
            line.before_line = static_cast<int>(info.beforeIdx);
            removed.push_back(std::move(line));
            continue;
        }
        if (info.type == dtl::SES_ADD) {
            line.kind = diff_kind::added;
            line.after_line = static_cast<int>(info.afterIdx);
            added.push_back(std::move(line));
            continue;
        }
        append_run(out, removed, added);
        line.before_line = static_cast<int>(info.beforeIdx);
        line.after_line = static_cast<int>(info.afterIdx);
        out.push_back(std::move(line));
    }
    append_run(out, removed, added);
    return out;
}

namespace {

// "-b,n +a,m": where the hunk starts in each text and how many of its lines each has; an empty
// side starts at the line before it, as diff -u writes it.
void count_hunk(diff_hunk& h) {
    for (const diff_line& l : h.lines) {
        if (l.kind != diff_kind::added && h.before_count++ == 0) h.before_start = l.before_line;
        if (l.kind != diff_kind::removed && h.after_count++ == 0) h.after_start = l.after_line;
    }
}

// The line numbers just before index i on each side, for a hunk with an empty side.
void start_of_empty_side(const std::vector<diff_line>& lines, std::size_t first, diff_hunk& h) {
    int before = 0, after = 0;
    for (std::size_t i = 0; i < first; ++i) {
        if (lines[i].kind != diff_kind::added) before = lines[i].before_line;
        if (lines[i].kind != diff_kind::removed) after = lines[i].after_line;
    }
    if (h.before_count == 0) h.before_start = before;
    if (h.after_count == 0) h.after_start = after;
}

}  // namespace

std::vector<diff_hunk> diff_hunks(const std::vector<diff_line>& lines, int context) {
    std::vector<diff_hunk> hunks;
    const auto n = static_cast<std::ptrdiff_t>(lines.size());
    const auto reach = static_cast<std::ptrdiff_t>(std::max(context, 0));
    std::ptrdiff_t i = 0;
    while (i < n) {
        if (lines[static_cast<std::size_t>(i)].kind == diff_kind::same) {
            ++i;
            continue;
        }
        const std::ptrdiff_t first = std::max<std::ptrdiff_t>(0, i - reach);
        std::ptrdiff_t last = i;  // the last changed line so far
        for (std::ptrdiff_t j = i; j < n && j <= last + 2 * reach + 1; ++j)
            if (lines[static_cast<std::size_t>(j)].kind != diff_kind::same) last = j;
        const std::ptrdiff_t end = std::min(n, last + reach + 1);
        diff_hunk h;
        h.lines.assign(lines.begin() + first, lines.begin() + end);
        count_hunk(h);
        start_of_empty_side(lines, static_cast<std::size_t>(first), h);
        hunks.push_back(std::move(h));
        i = end;
    }
    return hunks;
}

}  // namespace cuopt
