#pragma once
/// The options optimize and check share, defined once on a CLI11 app (each with its help,
/// the defaults shown being optimizer_options' own), and --config: a JSON object with the
/// same keys, applied to every option the command line did not give.

#include <CLI/CLI.hpp>

#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

void define_run_options(CLI::App* app, optimizer_options& o);

/// Reads o.config (paths relative to the file) onto the options not given as flags; throws
/// json_error naming the file and the field for an unknown key or a value of the wrong kind.
void apply_config(CLI::App* app, optimizer_options& o);

/// The same from JSON text (`file` names it in messages and anchors its relative paths).
void apply_config_text(CLI::App* app, optimizer_options& o, const std::string& text,
                       const std::filesystem::path& file);

}  // namespace cuopt
