#include "harness/kernel_records.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace cuopt {

namespace {

struct launch_span {
    std::uint64_t start = UINT64_MAX, end = 0;
    std::vector<const kernel_record*> kernels;
};

std::string names_of(const std::vector<const kernel_record*>& kernels) {
    std::string out;
    for (const kernel_record* k : kernels)
        out += (out.empty() ? "" : ", ") + (k->name.empty() ? std::string("?") : k->name) +
               (k->device_launched ? " (device-launched)" : "");
    return out;
}

std::string sample_name(std::size_t launch, std::size_t launches) {
    return "timed launch " + std::to_string(launch + 1) + " of " + std::to_string(launches);
}

// The two latest-ending spans among a prefix of the spans sorted by start: enough to tell
// whether any span but a record's own ends after the record starts.
struct latest_two {
    std::uint64_t end1 = 0, end2 = 0;
    std::size_t span1 = SIZE_MAX, span2 = SIZE_MAX;
    void add(std::uint64_t end, std::size_t span) {
        if (end > end1) {
            end2 = std::exchange(end1, end);
            span2 = std::exchange(span1, span);
        } else if (end > end2) {
            end2 = end;
            span2 = span;
        }
    }
};

std::string intrusion(const kernel_record& r, const std::vector<launch_span>& spans,
                      std::size_t own) {
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const launch_span& s = spans[i];
        if (i == own || s.kernels.empty() || s.end <= r.start_ns || s.start >= r.end_ns) continue;
        return sample_name(i, spans.size()) + " (" + names_of(s.kernels) + ") had another " +
               "kernel running inside it: " + names_of({&r});
    }
    return "";
}

// The first kernel (in record order) that is not launch i's own and runs during launch i's
// interval; the lowest such i is named. Nothing assumes the spans are in launch order: each
// record is checked against the spans that start before it ends, through their two latest
// ends, in O((records + spans) log spans), so adaptive timing's thousands of samples, all
// attributed again after every batch, stay cheap (the all-pairs loop it replaces was quadratic).
std::string first_intruder(const std::vector<kernel_record>& records,
                           const std::vector<launch_span>& spans,
                           const std::unordered_map<const kernel_record*, std::size_t>& owner) {
    std::vector<std::size_t> by_start;
    for (std::size_t i = 0; i < spans.size(); ++i)
        if (!spans[i].kernels.empty()) by_start.push_back(i);
    std::sort(by_start.begin(), by_start.end(),
              [&](std::size_t a, std::size_t b) { return spans[a].start < spans[b].start; });
    std::vector<latest_two> prefix(by_start.size() + 1);
    for (std::size_t k = 0; k < by_start.size(); ++k) {
        prefix[k + 1] = prefix[k];
        prefix[k + 1].add(spans[by_start[k]].end, by_start[k]);
    }
    for (const kernel_record& r : records) {
        const std::size_t before_end =
            std::partition_point(by_start.begin(), by_start.end(),
                                 [&](std::size_t i) { return spans[i].start < r.end_ns; }) -
            by_start.begin();
        const latest_two& l = prefix[before_end];
        const auto it = owner.find(&r);
        const std::size_t own = it == owner.end() ? SIZE_MAX : it->second;
        const bool other = (l.span1 != own && l.span1 != SIZE_MAX && l.end1 > r.start_ns) ||
                           (l.span2 != own && l.span2 != SIZE_MAX && l.end2 > r.start_ns);
        if (other) return intrusion(r, spans, own);
    }
    return "";
}

}  // namespace

attributed_samples attribute_samples(const std::vector<kernel_record>& records,
                                     const std::vector<launch_call>& calls, std::size_t launches,
                                     bool single_kernel) {
    std::unordered_map<std::uint32_t, std::size_t> launch_of;
    for (const launch_call& c : calls)
        if (c.launch < launches) launch_of.emplace(c.correlation_id, c.launch);
    std::vector<launch_span> spans(launches);
    std::unordered_map<const kernel_record*, std::size_t> owner;
    for (const kernel_record& r : records) {
        const auto it = r.correlation_id ? launch_of.find(r.correlation_id) : launch_of.end();
        if (it == launch_of.end()) continue;
        launch_span& s = spans[it->second];
        s.start = std::min(s.start, r.start_ns);
        s.end = std::max(s.end, r.end_ns);
        s.kernels.push_back(&r);
        owner.emplace(&r, it->second);
    }
    attributed_samples out;
    for (std::size_t i = 0; i < launches; ++i) {
        const launch_span& s = spans[i];
        if (s.kernels.empty()) {
            ++out.missing;
            continue;
        }
        if (single_kernel && s.kernels.size() > 1 && out.problem.empty())
            out.problem = sample_name(i, launches) + " ran " + std::to_string(s.kernels.size()) +
                          " grids where a kernel launch runs one: " + names_of(s.kernels);
        out.samples_ms.push_back(static_cast<double>(s.end - s.start) * 1e-6);
    }
    if (out.problem.empty()) out.problem = first_intruder(records, spans, owner);
    return out;
}

busy_time busy_union(std::vector<std::pair<std::uint64_t, std::uint64_t>> spans) {
    busy_time out;
    out.kernels = spans.size();
    if (spans.empty()) return out;
    for (auto& [start, end] : spans) end = std::max(start, end);
    std::sort(spans.begin(), spans.end());
    out.first_start_ns = spans.front().first;
    std::uint64_t open = spans.front().first, close = spans.front().second;
    for (const auto& [start, end] : spans) {
        if (start > close) {  // a gap: the run so far is done
            out.busy_ns += close - open;
            open = start;
        }
        close = std::max(close, end);
    }
    out.busy_ns += close - open;
    out.last_end_ns = close;
    return out;
}

}  // namespace cuopt
