#pragma once
/// `cuda-optimizer export RUN --header DIR`: a run's winner as C++ its user builds into their
/// own program (artifacts/kernel_export.hpp): DIR/ENTRY.cuh and DIR/ENTRY.cmake. Only a run whose
/// verdict is go, unless --force, which the header then says. The run folder is read as
/// untrusted: no file in it is followed through a link, none over 16 MiB is read.

#include <CLI/CLI.hpp>
#include <string>

namespace cuopt {

struct export_options {
    std::string run;      // the run folder
    std::string header;   // --header DIR
    std::string torch;    // --torch DIR
    bool verify = false;  // --verify: build, test and time the package on this GPU
    std::string python;   // --python: the interpreter --verify uses
    bool force = false;   // --force: a run that is not a go
};

CLI::App* add_export_command(CLI::App& app, export_options& o);

/// 0 written; 11 a run folder that cannot be exported (not a go without --force, no winner, a
/// file missing, linked or too big), with one line naming it; 26 DIR cannot be written.
int run_export(const export_options& o);

}  // namespace cuopt
