#include "orchestrator/service/job_recovery.hpp"

#include <algorithm>
#include <iostream>

#include "orchestrator/service/job_starter.hpp"

namespace cuopt {

job_recovery::job_recovery(job_queue& queue, job_executor& executor)
    : m_queue(queue), m_executor(executor) {}

void job_recovery::recover() {
    m_queue.scan(true);
    for (const auto& [id, state] : m_queue.known()) {
        if (state != job_state::running) continue;
        m_queue.for_job(id, [&, id = id] {
            const job_status st = m_queue.jobs().read_status(id);
            if (st.executor == "slurm" && st.executor != m_executor.name()) {
                // It may still run in Slurm: running it here too could run it twice.
                std::cerr << "serve: " << id << " was started in Slurm (job " << st.handle
                          << "); left alone: serve this spool with --executor slurm\n";
                return;
            }
            if (st.executor == "slurm")
                m_queue.to_reattach().push_back(id);
            else
                m_queue.to_resume().push_back(id);
        });
    }
    reattach();
}

void job_recovery::reattach() {
    const std::vector<std::string> ids = m_queue.to_reattach();
    for (const std::string& id : ids) {
        job_status st;
        try {
            st = m_queue.jobs().read_status(id);
        } catch (const std::exception& e) {
            m_queue.fail_alone(id, e.what());
            continue;
        }
        std::string handle = st.handle;
        bool attached = false;
        try {
            const job_launch launch = launch_of(m_queue.jobs(), id, st);
            if (handle.empty()) handle = m_executor.find_by_name(launch);
            attached = !handle.empty() && m_executor.attach(handle, launch);
        } catch (const std::exception& e) {
            std::cerr << "serve: " << id << ": cannot ask Slurm yet (" << e.what() << ")\n";
            return;
        }
        auto& waiting = m_queue.to_reattach();
        waiting.erase(std::remove(waiting.begin(), waiting.end(), id), waiting.end());
        if (!attached) {
            m_queue.to_resume().push_back(id);
            continue;
        }
        m_queue.for_job(id, [&] {
            st.handle = handle;
            m_queue.save(st);
            m_queue.active()[id] = active_job{handle, st.device, false, true};
            m_queue.log(id, "re-attached to Slurm job " + handle);
        });
    }
}

}  // namespace cuopt
