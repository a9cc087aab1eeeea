#pragma once
/// The daemon's record of what it launched for a job: JOB/launch.json, written by the daemon
/// alone, before the child starts (so a daemon SIGKILLed right after still finds it). A run
/// folder is resumed (`optimize --resume` takes its flags from run.json) only when its run.json
/// carries exactly this command line and working folder; a gate's verdict is trusted only when
/// the daemon started that gate. Anything else in results/ was not made by the daemon's child.

#include <filesystem>
#include <string>
#include <vector>

namespace cuopt {

/// Writes JOB/launch.json (0600, durable): the kind (optimize | gate), the command line and the
/// working folder of a fresh start. Throws file_write_error.
void write_launch_record(const std::filesystem::path& job, const std::string& kind,
                         const std::vector<std::string>& argv);

/// "" when RUN/run.json (or no run.json yet: nothing to resume from) is the run this daemon
/// started for the job at `job`: the command line and working folder recorded in launch.json,
/// and `recorded_run_dir` (state.json's run_dir, "" when not seen yet) naming this folder. Else
/// one line: "results/run-001/run.json is not the run this daemon started".
std::string run_trust_problem(const std::filesystem::path& job, const std::filesystem::path& run,
                              const std::string& recorded_run_dir);

/// True when launch.json records a gate: results/gate was emptied before that gate started,
/// so a gate.json there is the daemon's gate's.
bool gate_started_by_daemon(const std::filesystem::path& job);

}  // namespace cuopt
