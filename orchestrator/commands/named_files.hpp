#pragma once
/// `optimize --list-files`: every file a run would read, so that whoever queues it (the
/// service's submit) can copy and lock exactly those, asking this program through its command
/// line instead of parsing configs and manifests itself.

#include <filesystem>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// The config, kernels, manifest, holdout, file inputs, expected outputs and --proposer files'
/// candidates of `o`: absolute, lexically normal, sorted, unique. With a `box` (an upload
/// folder) every path is refused before anything reads it when it lies outside the box
/// (symlinks resolved) or is not a regular file (a FIFO, /dev/zero) where a file is wanted:
/// throws std::runtime_error with one line.
std::vector<std::filesystem::path> files_named(const optimizer_options& o,
                                               const std::filesystem::path& box = {});

/// Prints {"files": [...]} on stdout; exit 0, or 11 with one line on stderr.
int run_list_files(const optimizer_options& o, const std::filesystem::path& box);

}  // namespace cuopt
