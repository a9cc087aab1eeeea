#pragma once
/// What a daemon finds at start that the last one left running: a Slurm job is re-attached by
/// its recorded id (or found by name when that daemon died before recording it); a local job
/// died with that daemon and waits to be resumed (the starter checks its run folder first). A
/// job started in Slurm is left alone by a daemon that cannot ask Slurm.

#include "orchestrator/service/job_executor.hpp"
#include "orchestrator/service/job_queue.hpp"

namespace cuopt {

class job_recovery {
  public:
    job_recovery(job_queue& queue, job_executor& executor);
    /// Reads the spool and sorts its running jobs into re-attach and resume.
    void recover();
    /// Re-attaches the Slurm jobs waiting for it; a job Slurm no longer has is resumed. Slurm
    /// not answering leaves the rest to the next try.
    void reattach();

  private:
    job_queue& m_queue;
    job_executor& m_executor;
};

}  // namespace cuopt
