#pragma once
/// Summary statistics of timing samples. The median is the headline figure (robust
/// to the odd preempted launch); the samples themselves are kept in the response.

#include <vector>

namespace cuopt {

struct sample_statistics {
    double median = 0, mean = 0, min = 0, max = 0, stdev = 0;  // stdev: sample (n-1)
};

sample_statistics summarize(std::vector<double> samples);

}  // namespace cuopt
