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

namespace {

struct spread_figures {
    double mean_over_median = 1, slowest_over_median = 1, tail_share = 0;
};

// Launches already scaled by a median: their sum against median x count, the slowest, and the
// share of the sum in launches above twice the median.
spread_figures figures_of(const std::vector<double>& v) {
    spread_figures f;
    const double median = median_of(v);
    double sum = 0, tail = 0, slowest = 0;
    for (const double x : v) {
        sum += x;
        slowest = std::max(slowest, x);
        if (x > 2 * median) tail += x;
    }
    f.mean_over_median = sum / (median * static_cast<double>(v.size()));
    f.slowest_over_median = slowest / median;
    f.tail_share = sum > 0 ? tail / sum : 0;
    return f;
}

}  // namespace

std::vector<launch_spread> launch_spreads(const std::vector<const attempt_result*>& runs) {
    std::vector<std::string> order;
    std::map<std::string, launch_spread> by_case;
    std::map<std::string, std::vector<double>> pooled;  // each run's launches / its median
    for (const attempt_result* r : runs) {
        if (!r || r->verdict != verdict::valid) continue;
        for (const case_evaluation& ce : r->cases) {
            if (ce.kind != case_kind::performance || ce.samples_ms.empty()) continue;
            const double median = median_of(ce.samples_ms);
            if (!(median > 0)) continue;
            if (!pooled.count(ce.name)) order.push_back(ce.name);
            std::vector<double> scaled;
            for (const double ms : ce.samples_ms) scaled.push_back(ms / median);
            const spread_figures run = figures_of(scaled);
            launch_spread& s = by_case[ce.name];
            s.run_mean_over_median.push_back(run.mean_over_median);
            s.run_tail_share.push_back(run.tail_share);
            pooled[ce.name].insert(pooled[ce.name].end(), scaled.begin(), scaled.end());
        }
    }
    std::vector<launch_spread> out;
    for (const std::string& name : order) {
        launch_spread s = by_case[name];
        const spread_figures all = figures_of(pooled[name]);
        s.case_name = name;
        s.runs = static_cast<int>(s.run_mean_over_median.size());
        s.launches = static_cast<int>(pooled[name].size());
        s.mean_over_median = all.mean_over_median;
        s.slowest_over_median = all.slowest_over_median;
        s.tail_share = all.tail_share;
        out.push_back(s);
    }
    return out;
}

std::string amortised_problem(const std::vector<launch_spread>& spreads, double threshold,
                              double tail_share) {
    for (const launch_spread& s : spreads) {
        int over_sum = 0, over_tail = 0;
        for (std::size_t i = 0; i < s.run_mean_over_median.size(); ++i) {
            over_sum += s.run_mean_over_median[i] > 1 + threshold;
            over_tail += s.run_tail_share[i] > tail_share;
        }
        const std::string runs = " of " + std::to_string(s.runs) + " runs";
        if (2 * over_sum > s.runs)
            return "case " + one_case(s) + ": in " + std::to_string(over_sum) + runs +
                   " its launches summed cost more than " + fixed(1 + threshold, 2) +
                   "x median x count, so the median hides work done in rare launches";
        if (2 * over_tail > s.runs)
            return "case " + one_case(s) + ": in " + std::to_string(over_tail) + runs +
                   " more than " + fixed(100 * tail_share, 0) +
                   "% of its time is spent in launches above twice the median, so the median "
                   "hides work done in rare launches";
    }
    return "";
}

std::string describe_spreads(const std::vector<launch_spread>& spreads) {
    std::string out;
    for (const launch_spread& s : spreads) out += (out.empty() ? "" : "; ") + one_case(s);
    return out;
}

}  // namespace cuopt
