#pragma once
/// Which kernels may run in a harness that cannot confine itself. Without Landlock (an old
/// kernel, a container's seccomp profile) a kernel's #include or compile option reads any file
/// the user can, and the compile log carries it into history.json, the report and the model's
/// next turn. The user's own initial and reference kernels still run there, with a warning;
/// kernels nobody here reviewed (a model's, a --candidates folder's, everything a daemon job
/// brings) run there only with --allow-unconfined.

#include <string>

#include "common/landlock.hpp"
#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// Whose kernels of this run nobody here reviewed ("the model's kernels", ...); "" when every
/// kernel it runs is the user's own (autotune varies the initial kernel's defines only).
std::string untrusted_kernels(const optimizer_options& o);

/// "" when the run may go on with its harness confined as `harness`; else the one line that
/// refuses it: what would run unconfined, the harness's reason, and the flag.
std::string unconfined_refusal(const confinement& harness, const optimizer_options& o);

/// The warning for a run that goes on with an unconfined harness (its own kernels, or
/// --allow-unconfined); "" when the harness is confined.
std::string unconfined_warning(const confinement& harness, const optimizer_options& o);

/// What to do about a refusal, in a few words (check's fix line).
std::string unconfined_fix(const optimizer_options& o);

}  // namespace cuopt
