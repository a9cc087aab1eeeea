#pragma once
/// `optimize --resume RUN_DIR`: a run goes on with the settings it began with, never new ones.
/// Its command line (run.json's command_line) is parsed again in the folder it was given in
/// (run.json's working_directory), --config and all, so every option is what it was. Beside
/// --resume only flags that change how the run is carried out, not what it finds, may be
/// given (k_resume_flags); they win over the recorded ones.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// The flags that may be given with --resume.
inline const std::vector<std::string> k_resume_flags = {
    "--resume",          "--quiet",           "--json", "--isolation", "--devices",
    "--compile-threads", "--no-compile-ahead"};

/// --resume on optimize's app.
void define_resume_option(CLI::App* app, optimizer_options& o);

/// The options the run in `run_dir` began with, from `args` (this command line after
/// "optimize"). Changes the working directory to the run's. Throws run_failure: usage for a
/// flag not in k_resume_flags, resume_refused when the folder holds no resumable run.json or
/// its command line no longer parses.
optimizer_options resumed_options(const std::vector<std::string>& args, const std::string& run_dir);

}  // namespace cuopt
