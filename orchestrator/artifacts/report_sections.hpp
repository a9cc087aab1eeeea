#pragma once
/// The report's sections, each a function from what the run folder holds to an HTML fragment;
/// report_html puts them on the page in order. Every text from the folder is escaped.

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "orchestrator/artifacts/cost_sheet.hpp"
#include "orchestrator/artifacts/report_verdict.hpp"
#include "orchestrator/artifacts/run_folder.hpp"

namespace cuopt::report {

/// What several sections share, worked out once from the folder.
struct report_context {
    explicit report_context(const run_folder& f) : folder(f) {}
    const run_folder& folder;
    go_verdict verdict;
    bool simulated = false;  // a stand-in harness (fake-harness) produced every figure
    const rapidjson::Value* initial_attempt = nullptr;  // history's iteration 0
    const rapidjson::Value* winner_attempt = nullptr;   // the declared winner's attempt
    const rapidjson::Value* parent_attempt = nullptr;   // the attempt the winner was built on
    report_economics economics;
    cost_inputs cost_in;
    std::string saved_basis;  // which medians the saving comes from, in words
    cost_figures costs;
};

std::string verdict_section(const report_context& c);
std::string latency_section(const report_context& c);
std::string charts_section(const report_context& c);
std::string attempts_section(const report_context& c);
std::string diff_section(const report_context& c);
std::string environment_section(const report_context& c);
std::string model_section(const report_context& c);
std::string cost_section(const report_context& c);

/// The banner atop every page of a simulated run (its own styles inline: the gate's page has
/// another stylesheet).
std::string fake_run_banner();

/// The page's stylesheet and script (assets/report.css and report.js, embedded).
std::string_view report_css();
std::string_view report_js();
/// Runs first: any script error lands in the page as #script-error (the Chromium test looks;
/// assets/error_catcher.js).
std::string_view error_catcher_js();

/// <table> rows of key and value, the values escaped (and in <code> when `code`).
std::string key_value_rows(const std::vector<std::pair<std::string, std::string>>& rows,
                           bool code = false);

}  // namespace cuopt::report
