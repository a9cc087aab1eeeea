#pragma once
/// Nsight Compute on one candidate for one case (the model proposer's `profile` tool):
/// the candidate's request for that case is written into RUN/profile/N, ncu runs the
/// harness on it with the clocks left alone, and a few key metrics come back as
/// "name: value unit" lines (or a one-line reason why not).

#include <chrono>
#include <filesystem>
#include <string>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

class ncu_profiler {
  public:
    ncu_profiler(const manifest& m, const attempt_evaluator& evaluator, process_runner& runner,
                 std::string harness, std::filesystem::path run, std::chrono::milliseconds timeout);

    std::string profile(const candidate& c, const std::string& case_name);

  private:
    const manifest& m_manifest;
    const attempt_evaluator& m_evaluator;
    process_runner& m_runner;
    std::string m_harness;
    std::filesystem::path m_run;
    std::chrono::milliseconds m_timeout;
    int m_count = 0;  // profiles so far: each gets its own folder
};

/// The metric rows of `ncu --csv` output as "name: value unit" lines.
std::string metrics_from_ncu_csv(const std::string& csv);

}  // namespace cuopt
