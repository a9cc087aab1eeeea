#include "harness/kernel_records.hpp"

#include <algorithm>
#include <unordered_map>

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

// The first kernel that is not launch i's own and runs during launch i's interval.
std::string first_intruder(const std::vector<kernel_record>& records,
                           const std::vector<launch_span>& spans,
                           const std::unordered_map<const kernel_record*, std::size_t>& owner) {
    for (const kernel_record& r : records) {
        // Spans are in launch order on one stream, so their ends increase: the first span
        // ending after r starts is the only one r can overlap first.
        for (std::size_t i = 0; i < spans.size(); ++i) {
            const launch_span& s = spans[i];
            if (s.kernels.empty() || s.end <= r.start_ns || s.start >= r.end_ns) continue;
            const auto it = owner.find(&r);
            if (it != owner.end() && it->second == i) continue;
            return sample_name(i, spans.size()) + " (" + names_of(s.kernels) + ") had another " +
                   "kernel running inside it: " + names_of({&r});
        }
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

}  // namespace cuopt
