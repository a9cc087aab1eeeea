// --config for optimize and check: a JSON object with the options' own keys, applied to every
// option the command line did not give; and what optimize would say of keys check skips.
#include <filesystem>
#include <stdexcept>

#include "common/cli_config.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/report_command.hpp"

namespace cuopt {

namespace fs = std::filesystem;

void apply_config_text(CLI::App* app, optimizer_options& o, const std::string& text,
                       const fs::path& file, const CLI::App* elsewhere) {
    const std::string source = file.string();
    json_options_rules rules;
    rules.paths = {"reference",   "initial_kernel", "input_cases",     "candidates",
                   "results_dir", "harness",        "holdout_cases",   "sanitizer",
                   "docs_cache",  "cuobjdump",      "torch_reference", "python"};
    rules.elsewhere = elsewhere;
    rules.special = [&](const std::string& key, const rapidjson::Value& v) {
        if (key == "resume")
            throw json_error(source + ": field resume: --resume is a command-line flag only");
        if (key != "prices") return false;
        if (!v.IsObject())
            throw json_error(source +
                             ": field prices: expected {\"model\": {\"input_per_mtok\": x, "
                             "\"output_per_mtok\": y}}");
        o.prices_json = to_pretty_json(v);
        return true;
    };
    apply_json_options(app, text, file, rules);
}

std::string optimize_config_problem(const optimizer_options& o, const CLI::App* optimize,
                                    exit_code& code) {
    CLI::App app;  // optimize's options on a throwaway set, so that nothing of check's moves
    optimizer_options throwaway;
    define_run_options(&app, throwaway);
    define_cost_options(&app, throwaway.economics);
    throwaway.config = o.config;
    try {
        apply_config(&app, throwaway, optimize);
    } catch (const std::exception& e) {
        code = exit_code::invalid_request;
        return e.what();
    }
    code = exit_code::usage;
    return settle_timing_options(&app, throwaway);
}

void apply_config(CLI::App* app, optimizer_options& o, const CLI::App* elsewhere) {
    if (o.config.empty()) return;
    const fs::path file = fs::absolute(o.config);
    std::string text;
    try {
        text = read_text_file(file);
    } catch (const std::runtime_error& e) {
        throw json_error(e.what());
    }
    apply_config_text(app, o, text, file, elsewhere);
}

}  // namespace cuopt
