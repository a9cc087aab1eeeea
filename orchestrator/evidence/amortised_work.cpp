#include "orchestrator/evidence/amortised_work.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string fixed(double v, int digits) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(digits);
    s << v;
    return s.str();
}

std::string one_case(const launch_spread& s) {
    return quote_value(s.case_name) + ": " + fixed(s.mean_over_median, 3) +
           "x mean/median, slowest " + fixed(s.slowest_over_median, 2) + "x, " +
           fixed(100 * s.tail_share, 1) + "% of the time above 2x the median (" +
           std::to_string(s.launches) + " launches in " + std::to_string(s.runs) + " runs)";
}

}  // namespace

std::vector<launch_spread> launch_spreads(const std::vector<const attempt_result*>& runs) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<double>> pooled;  // each run's launches / its median
    std::map<std::string, int> run_counts;
    for (const attempt_result* r : runs) {
        if (!r || r->verdict != verdict::valid) continue;
        for (const case_evaluation& ce : r->cases) {
            if (ce.kind != case_kind::performance || ce.samples_ms.empty()) continue;
            const double median = median_of(ce.samples_ms);
            if (!(median > 0)) continue;
            if (!pooled.count(ce.name)) order.push_back(ce.name);
            for (const double ms : ce.samples_ms) pooled[ce.name].push_back(ms / median);
            ++run_counts[ce.name];
        }
    }
    std::vector<launch_spread> out;
    for (const std::string& name : order) {
        const std::vector<double>& v = pooled[name];
        launch_spread s;
        s.case_name = name;
        s.runs = run_counts[name];
        s.launches = static_cast<int>(v.size());
        const double median = median_of(v);
        double sum = 0, tail = 0, slowest = 0;
        for (const double x : v) {
            sum += x;
            slowest = std::max(slowest, x);
            if (x > 2 * median) tail += x;
        }
        s.mean_over_median = sum / (median * static_cast<double>(v.size()));
        s.slowest_over_median = slowest / median;
        s.tail_share = sum > 0 ? tail / sum : 0;
        out.push_back(s);
    }
    return out;
}

std::string amortised_problem(const std::vector<launch_spread>& spreads, double threshold) {
    for (const launch_spread& s : spreads)
        if (s.mean_over_median > 1 + threshold)
            return "case " + one_case(s) + ": its launches summed cost more than " +
                   fixed(1 + threshold, 2) +
                   "x median x count, so the median hides work done in rare launches";
    return "";
}

std::string describe_spreads(const std::vector<launch_spread>& spreads) {
    std::string out;
    for (const launch_spread& s : spreads) out += (out.empty() ? "" : "; ") + one_case(s);
    return out;
}

}  // namespace cuopt
