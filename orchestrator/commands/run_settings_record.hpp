#pragma once
/// The run's settings of record: run.json's settings, every flag that decides what a run finds
/// (with the cost sheet's economics where given). `optimize --resume` holds them against the
/// run's (resume_run's check_unchanged); `report RUN_DIR` shows the economics without the flags.

#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// Fills info.settings from the options; `device` is the first of --devices.
void record_settings(const optimizer_options& o, int device, run_info& info);

}  // namespace cuopt
