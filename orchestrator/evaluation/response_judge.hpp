#pragma once
/// The evaluator's judging, apart from its request building and running: a harness response
/// into an attempt's cases and verdict. It must answer the whole request and time honestly;
/// a kernel that wrote into a declared input is mutates_inputs; every output is checked
/// against the oracle (the file on the CPU, or the harness's GPU check, which must be the
/// one asked for); a median below its case's speed-of-light floor is impossible_time.

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

class response_judge {
  public:
    response_judge(const manifest& m, const evaluator_settings& settings);

    /// Fills r's compile, timer, GPU monitor and cases from `response`, the answer to `req`,
    /// and sets its verdict. Without an oracle (the reference run) a complete response is
    /// valid.
    void judge(const request& req, const harness_response& response, const oracle_files* oracle,
               attempt_result& r) const;

  private:
    /// Every output of every case against the oracle; sets r's verdict. `req`: what was asked
    /// (a harness's check of an output it did not ask to be checked is refused).
    void check_outputs(attempt_result& r, const oracle_files& oracle, const request& req) const;
    /// The harness's check of output `oc` accepted as its validation: "" when it passes, else
    /// the case's reason (a check against another file or rule is the harness's fault: throws).
    std::string accept_gpu_check(output_check& oc, const manifest_arg& arg, const tolerance& tol,
                                 const std::filesystem::path& oracle_file) const;
    /// A median below k_impossible_fraction of its case's floor: impossible_time.
    void check_floors(attempt_result& r) const;

    const manifest& m_manifest;
    const evaluator_settings& m_settings;
};

}  // namespace cuopt
