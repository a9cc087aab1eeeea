#pragma once
/// From CUPTI's kernel records to one sample per timed launch, and the check that every
/// timed sample held exactly the case's own work; and the GPU busy time of a set of kernels.
/// Plain data in, plain data out: the CUPTI plumbing is cupti_trace's, and this part is
/// tested without a GPU.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuopt {

/// One kernel execution as CUPTI reports it (GPU timestamps in nanoseconds).
struct kernel_record {
    std::uint64_t start_ns = 0, end_ns = 0;
    std::uint32_t correlation_id = 0;  // the API call that launched it (0: none seen)
    std::string name;
    bool device_launched = false;
};

/// A driver or runtime API call made while timed launch `launch` was being enqueued.
struct launch_call {
    std::uint32_t correlation_id = 0;
    std::size_t launch = 0;
};

struct attributed_samples {
    std::vector<double> samples_ms;  // one per timed launch with records (empty where missing)
    std::size_t missing = 0;         // timed launches CUPTI reported no kernel for
    std::string problem;             // set: a sample held more than the case's work
};

/// Samples for `launches` timed launches: each launch's kernels (the records whose
/// correlation id one of its calls carries), from the first start to the last end.
/// single_kernel: a kernel case, where one launch is exactly one grid (a vendor call may run
/// several). Any other kernel overlapping a launch's interval, or a second grid of a kernel
/// launch, is a problem naming the launch and the kernels.
attributed_samples attribute_samples(const std::vector<kernel_record>& records,
                                     const std::vector<launch_call>& calls, std::size_t launches,
                                     bool single_kernel);

/// The GPU time a set of kernels took, in nanoseconds of GPU timestamps.
struct busy_time {
    std::uint64_t busy_ns = 0;  // the length of the union of the spans: overlaps counted once
    std::size_t kernels = 0;    // every span given, empty ones included
    std::uint64_t first_start_ns = 0, last_end_ns = 0;  // both 0 without kernels
};

/// The union of kernel spans [start_ns, end_ns], in any order: kernels that run at once
/// (concurrent streams, a grid nested in another's interval) count once, gaps not at all. A
/// span whose end precedes its start (a record CUPTI had not finished) counts as empty.
busy_time busy_union(std::vector<std::pair<std::uint64_t, std::uint64_t>> spans);

}  // namespace cuopt
