#pragma once
/// How long each GPU was busy with the run's kernels, as the harness measured them (CUPTI):
/// every harness run the evaluator makes (search attempts, the reference, the vendor library,
/// the evidence runs) adds its response's gpu_busy here, from any thread. The search's own
/// window (its wall time, the busy time inside it) gives run.json's busy fraction.

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuopt {

/// One GPU's harness runs and the busy time they measured.
struct gpu_busy_totals {
    int device = 0;
    double busy_ms = 0;         // every run's
    double search_busy_ms = 0;  // the runs that ended while the search ran
    long long kernels = 0, search_kernels = 0;
    int harness_runs = 0;
    int unmeasured_runs = 0;  // no figure: crashed, hung, no CUPTI, an older harness
};

/// What the meter holds at one moment (run.json's gpu_busy).
struct gpu_busy_record {
    std::vector<gpu_busy_totals> gpus;  // every GPU of the run, by index
    std::string source = "none";        // cupti | simulated | none | mixed (of measured runs)
    double search_wall_s = 0;           // the search so far, where it is under way
    /// Search busy time summed over the GPUs / (search_wall_s x GPUs); none without a search
    /// or without a measured run.
    std::optional<double> busy_fraction;
};

class gpu_busy_meter {
  public:
    /// The run's GPUs (--devices), each listed even where no run lands on it.
    explicit gpu_busy_meter(const std::vector<int>& devices);

    /// One harness run on `device`: the busy ms its response gave (nullopt: none), in how many
    /// kernels, and where the figure came from ("cupti", "simulated", "none": no kernel ran).
    void add(int device, std::optional<double> ms, long long kernels, const std::string& source);
    /// The search loop starts and ends: its wall time, and the busy time of runs inside it.
    void begin_search();
    void end_search();

    gpu_busy_record record() const;

  private:
    using clock = std::chrono::steady_clock;
    mutable std::mutex m_mutex;
    std::map<int, gpu_busy_totals> m_gpus;
    std::set<std::string> m_sources;  // of runs with a figure, "none" left out
    std::optional<clock::time_point> m_search_start, m_search_end;
};

}  // namespace cuopt
