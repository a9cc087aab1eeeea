#pragma once
/// cuda-optimizer report RUN_DIR [--out FILE]: rebuilds a run folder's report.html from its
/// files alone, with the cost sheet's economics flags (shared with optimize, which records
/// them in run.json so that a report rebuilt without them shows the same figures).

#include <CLI/CLI.hpp>
#include <string>

#include "orchestrator/artifacts/cost_sheet.hpp"

namespace cuopt {

struct report_options {
    std::string run_dir;         // the run folder
    std::string out;             // "" = RUN_DIR/report.html
    report_economics economics;  // flags given here win over run.json's
};

/// --invocations-per-month, --gpu-hour-cost, --engineer-hours, --engineer-rate on `app`.
void define_cost_options(CLI::App* app, report_economics& e);

/// The report subcommand on `app`, filling `o`.
CLI::App* add_report_command(CLI::App& app, report_options& o);

/// Writes the report; 0, 11 when the folder or one of its files cannot be read (the message
/// names it), 26 when the page cannot be written.
int run_report(const report_options& o);

}  // namespace cuopt
