#pragma once
/// The Slurm executor with the program runner it uses for sbatch, scontrol, scancel and squeue
/// given by the caller: the tests pass a fake that answers as Slurm would, to check the commands
/// sent and the reading of Slurm's answers without a cluster. (make_slurm_executor(settings) in
/// job_executor.hpp runs the real commands.)

#include <memory>

#include "common/runner_process.hpp"
#include "orchestrator/service/job_executor.hpp"

namespace cuopt {

std::unique_ptr<job_executor> make_slurm_executor(const slurm_settings& settings,
                                                  std::unique_ptr<process_runner> runner);

}  // namespace cuopt
