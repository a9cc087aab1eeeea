#pragma once
/// The evaluator's request building, apart from its running and judging: the harness request
/// for a candidate from the manifest and the evaluator's settings (defines, timing, every
/// case's launch and args, inputs from files or generators, output files), and, where the
/// harness checks outputs on the GPU, each output's expected file and rule.

#include <filesystem>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

class request_builder {
  public:
    using request_paths = attempt_evaluator::request_paths;

    request_builder(const manifest& m, const evaluator_settings& settings)
        : m_manifest(m), m_settings(settings) {}

    /// The request for a candidate, as attempt_evaluator::make_request gives it.
    request make_request(const candidate& c, const request_paths& paths, bool reference) const;
    /// Whether these settings' candidates have their outputs checked by the harness (GPU).
    bool checks_on_gpu() const;
    /// The request's outputs[].check for every output with an oracle, its expected file named
    /// relative to `folder` where it lies in the run folder (outside the attempt's folder).
    void add_gpu_checks(request& req, const std::filesystem::path& folder,
                        const oracle_files& oracle) const;

  private:
    run_case make_case(const candidate& c, const manifest_case& mc, const request_paths& paths,
                       bool reference) const;

    const manifest& m_manifest;
    const evaluator_settings& m_settings;
};

}  // namespace cuopt
