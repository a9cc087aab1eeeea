#pragma once
/// The options of optimize and check, defined once on a CLI11 app (each with its help, the
/// defaults shown being optimizer_options' own), --config (a JSON object with the same keys,
/// applied to every option the command line did not give), and the command line's own
/// mistakes: an unknown command or flag is named with the closest valid one.

#include <CLI/CLI.hpp>

#include "common/exit_codes.hpp"
#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// check's options: the files, the results folder, the harness, device, timeout, sanitizer.
void define_check_options(CLI::App* app, optimizer_options& o);

/// optimize's: check's and every other.
void define_run_options(CLI::App* app, optimizer_options& o);

/// After the command line and --config: --timing-mode adaptive without --iterations makes the
/// cap k_adaptive_iterations_cap. "" when the timing options agree with each other, else one
/// line naming the flag (a usage error: exit 64).
std::string settle_timing_options(const CLI::App* app, optimizer_options& o);

/// Reads o.config (paths relative to the file) onto the options not given as flags; throws
/// json_error naming the file and the field for an unknown key or a value of the wrong kind.
/// A key that `elsewhere` knows but `app` does not is skipped (check reads optimize's config).
void apply_config(CLI::App* app, optimizer_options& o, const CLI::App* elsewhere = nullptr);

/// The same from JSON text (`file` names it in messages and anchors its relative paths).
void apply_config_text(CLI::App* app, optimizer_options& o, const std::string& text,
                       const std::filesystem::path& file, const CLI::App* elsewhere = nullptr);

/// For check, which skips them: what optimize would say of o.config's keys that only optimize
/// reads (a value of the wrong kind, timing options that disagree). "" when it would take them
/// all; else its message, with `code` the exit code optimize stops with (11, or 64). `optimize`
/// is optimize's command: a key only it knows (quiet, json) is not checked here.
std::string optimize_config_problem(const optimizer_options& o, const CLI::App* optimize,
                                    exit_code& code);

/// "" when every word of the command line is a known command or flag of it; else one line that
/// names the first unknown one and the closest valid one ("unknown option --max-iteration for
/// optimize; did you mean --max-iterations?").
std::string unknown_word(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace cuopt
