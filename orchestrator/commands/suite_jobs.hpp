#pragma once
/// `suite --submit SPOOL`: the deck's problems as jobs of the daemon that serves SPOOL (it runs
/// them on its GPUs, or through Slurm), each collected when it ends. Only this program's own
/// `submit` and `status` are used, in children, so a team daemon's spool (reached through its
/// socket) works the way a local one does; the job's summary.json comes back in status's answer.

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/runner_process.hpp"
#include "orchestrator/commands/suite_command.hpp"

namespace cuopt {

/// A job the daemon would not take, or a status that cannot be read: one line.
class suite_job_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Queues `config` (a problem folder's config.json) on `spool` with the optimize words; the job
/// id. Throws suite_job_error with submit's own line when it refuses.
std::string submit_problem(const std::filesystem::path& self, const std::string& spool,
                           const std::filesystem::path& config,
                           const std::vector<std::string>& optimize_args, process_runner& runner);

/// Job `id`'s record once it has ended (done, failed or cancelled); nullopt while it is queued
/// or running. Throws suite_job_error when status cannot say.
std::optional<suite_record> ended_job(const std::filesystem::path& self, const std::string& spool,
                                      const std::string& id, process_runner& runner);

/// The record in `status --json JOB`'s answer (nullopt: not ended): the summary's figures where
/// it has one, else the state's verdict, speedup and reason; wall time from started to
/// finished. Throws suite_job_error on an answer that is not status's.
std::optional<suite_record> record_from_status(const std::string& status_json,
                                               const std::string& spool);

}  // namespace cuopt
