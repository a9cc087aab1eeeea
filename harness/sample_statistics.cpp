#include "harness/sample_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cuopt {

sample_statistics summarize(std::vector<double> samples) {
    sample_statistics s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
    if (n > 1) {
        double sq = 0;
        for (double v : samples) sq += (v - s.mean) * (v - s.mean);
        s.stdev = std::sqrt(sq / static_cast<double>(n - 1));
    }
    return s;
}

}  // namespace cuopt
