#pragma once
/// report.html: one self-contained page per run folder (inline CSS, a little inline vanilla
/// JS, the charts as data URIs, a Content-Security-Policy that lets nothing load from
/// anywhere), built from the folder's files alone, so `cuda-optimizer report RUN_DIR`
/// rebuilds the same page. In order: the go / no-go verdict, per-case latencies and the
/// charts, every attempt, the winner's source diffs, environment and hashes, the model's
/// conversation, the cost sheet.

#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "orchestrator/artifacts/cost_sheet.hpp"

namespace cuopt {

/// The economics a report uses: each flag given wins over the value recorded in run.json's
/// settings (invocations_per_month, gpu_hour_cost_usd, engineer_hours, engineer_rate_usd).
report_economics recorded_economics(const rapidjson::Value& run_json,
                                    const report_economics& flags);

/// The page for a run folder. Throws report_input_error naming a missing or malformed file.
std::string render_report(const std::filesystem::path& run_dir, const report_economics& flags);

/// Renders and writes the page atomically to `out` (RUN_DIR/report.html when empty); returns
/// where it went. Throws report_input_error, or file_write_error when it cannot be written.
std::filesystem::path write_report(const std::filesystem::path& run_dir,
                                   const report_economics& flags,
                                   const std::filesystem::path& out = {});

}  // namespace cuopt
