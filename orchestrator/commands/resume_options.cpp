#include "orchestrator/commands/resume_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/report_command.hpp"
#include "orchestrator/commands/resume_run.hpp"
#include "orchestrator/commands/run_failure.hpp"

namespace cuopt {

namespace fs = std::filesystem;

void define_resume_option(CLI::App* app, optimizer_options& o) {
    app->add_option("--resume", o.resume,
                    "Continue a run that was interrupted or killed, with the settings it began "
                    "with (only --isolation, --devices, --compile-threads, --no-compile-ahead, "
                    "--quiet and --json may be given beside it)")
        ->type_name("RUN_DIR");
}

namespace {

bool allowed(const std::string& flag) {
    return std::find(k_resume_flags.begin(), k_resume_flags.end(), flag) != k_resume_flags.end();
}

// The flags given beside --resume that go on to the run (all but --resume, --quiet, --json,
// which main reads itself), after checking that each may be given.
std::vector<std::string> carried_flags(const std::vector<std::string>& args) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& w = args[i];
        const std::string flag = w.substr(0, w.find('='));
        if (w.rfind("--", 0) != 0) continue;  // a value, read with its flag below
        if (!allowed(flag))
            throw run_failure(exit_code::usage,
                              flag +
                                  " cannot be given with --resume: a run goes on with the "
                                  "settings it began with (beside --resume only --isolation, "
                                  "--devices, --compile-threads, --no-compile-ahead, --quiet "
                                  "and --json)");
        if (flag == "--resume" || flag == "--quiet" || flag == "--json") {
            if (flag == "--resume" && w.find('=') == std::string::npos) ++i;
            continue;
        }
        out.push_back(w);
        const bool takes_value = flag != "--no-compile-ahead" && w.find('=') == std::string::npos;
        if (takes_value && i + 1 < args.size()) out.push_back(args[++i]);
    }
    return out;
}

void enter(const recorded_run& r) {
    if (::chdir(r.working_directory.c_str()) != 0)
        throw run_failure(exit_code::resume_refused,
                          "cannot resume " + r.run.string() + ": its working folder " +
                              r.working_directory + " is gone (" + std::strerror(errno) +
                              "); its command line's paths are relative to it");
}

}  // namespace

optimizer_options resumed_options(const std::vector<std::string>& args,
                                  const std::string& run_dir) {
    const std::vector<std::string> carried = carried_flags(args);
    const fs::path run = fs::absolute(run_dir).lexically_normal();
    // A folder a run locked: a harness of its last start may outlive that start a moment and
    // still write into it, so nothing is read before it has ended (a running holder: refused).
    std::error_code ec;
    if (fs::exists(fs::symlink_status(run / ".lock", ec))) {
        const run_lock waited(run);
    }
    const recorded_run recorded = read_recorded_run(run);
    enter(recorded);
    optimizer_options o;
    CLI::App app;
    define_run_options(&app, o);
    define_cost_options(&app, o.economics);
    bool display = false;  // --quiet and --json are this command's own
    app.add_flag("--quiet", display);
    app.add_flag("--json", display);
    std::vector<std::string> words(recorded.command_line.begin() + 2, recorded.command_line.end());
    words.insert(words.end(), carried.begin(), carried.end());
    std::vector<const char*> argv = {"cuda-optimizer"};
    for (const std::string& w : words) argv.push_back(w.c_str());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
        apply_config(&app, o);
    } catch (const std::exception& e) {  // CLI::ParseError, json_error
        throw run_failure(exit_code::resume_refused,
                          "cannot resume " + run.string() +
                              ": the command line it began with no longer reads: " + e.what());
    }
    if (const std::string bad = settle_timing_options(&app, o); !bad.empty())
        throw run_failure(exit_code::resume_refused, "cannot resume " + run.string() + ": " + bad);
    o.resume = run.string();
    return o;
}

}  // namespace cuopt
