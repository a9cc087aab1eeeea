// cuda-optimizer report: the run folder's report.html again, from its files alone.
#include "orchestrator/commands/report_command.hpp"

#include <iostream>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "orchestrator/artifacts/report_html.hpp"
#include "orchestrator/artifacts/run_folder.hpp"

namespace cuopt {

namespace {

const char* k_report_footer = R"(
Example:
  cuda-optimizer report results/run-001 --invocations-per-month 2e9 --gpu-hour-cost 3.5 \
      --engineer-hours 6 --engineer-rate 120

Exit codes: 0 written (the path on stdout); 11 the run folder or one of its JSON files is
missing or malformed (the message names it); 26 the page cannot be written; 64 bad command
line.
)";

void add_money_option(CLI::App* app, const std::string& flag, std::optional<double>& target,
                      const std::string& unit, const std::string& help, double high = 1e9) {
    app->add_option_function<double>(
           flag, [&target](const double& x) { target = x; }, help)
        ->type_name(unit)
        ->check(non_negative_number(high));
}

}  // namespace

void define_cost_options(CLI::App* app, report_economics& e) {
    // A kernel in production runs billions of times a month (the help's example: 2e9).
    add_money_option(app, "--invocations-per-month", e.invocations_per_month, "N",
                     "Cost sheet: launches of the kernel per month in production", 1e15);
    add_money_option(app, "--gpu-hour-cost", e.gpu_hour_cost_usd, "USD",
                     "Cost sheet: what one GPU hour costs");
    add_money_option(app, "--engineer-hours", e.engineer_hours, "H",
                     "Cost sheet: the engineer's hours on the pilot");
    add_money_option(app, "--engineer-rate", e.engineer_rate_usd, "USD",
                     "Cost sheet: the engineer's cost per hour");
}

CLI::App* add_report_command(CLI::App& app, report_options& o) {
    CLI::App* report = app.add_subcommand(
        "report", "Rebuild a run folder's report.html (verdict, attempts, diffs, cost sheet)");
    report->add_option("run_dir", o.run_dir, "A run folder (results/run-NNN)")
        ->type_name("RUN_DIR")
        ->required();
    report->add_option("--out", o.out, "Where the page goes (default: RUN_DIR/report.html)")
        ->type_name("FILE");
    define_cost_options(report, o.economics);
    report->footer(k_report_footer);
    return report;
}

int run_report(const report_options& o) {
    try {
        std::cout << write_report(o.run_dir, o.economics, o.out).string() << "\n";
        return to_int(exit_code::ok);
    } catch (const report_input_error& e) {
        std::cerr << "cuda-optimizer: report: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    } catch (const file_write_error& e) {
        std::cerr << "cuda-optimizer: report: cannot write the page: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
}

}  // namespace cuopt
