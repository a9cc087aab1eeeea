#include "orchestrator/service/job_queue.hpp"

#include <algorithm>
#include <iostream>

#include "common/utc_time.hpp"

namespace cuopt {

namespace fs = std::filesystem;

job_queue::job_queue(const spool& s, std::vector<int> devices, bool quiet)
    : m_spool(s), m_devices(std::move(devices)), m_quiet(quiet) {}

bool job_queue::scan(bool force) {
    const auto now = daemon_clock::now();
    if (!force && now - m_last_scan < std::chrono::milliseconds(200)) return false;
    m_last_scan = now;
    // A job's spec and state are read once: only this daemon changes a queued job's state.
    for (const std::string& id : m_spool.job_ids()) {
        if (m_jobs.count(id) || m_dropped.count(id)) continue;
        job_status st;
        try {
            st = m_spool.read_status(id);
        } catch (const std::exception& e) {
            fail_alone(id, std::string("cannot read the job's state: ") + e.what());
            continue;
        }
        int priority = 0;
        if (!is_final(st.state)) try {
                priority = m_spool.read_spec(id).priority;
            } catch (const std::exception& e) {
                fail_alone(id, std::string("cannot read the job: ") + e.what());
                continue;
            }
        m_jobs[id] = known_job{st.state, priority};
    }
    return true;
}

std::vector<std::pair<std::string, job_state>> job_queue::known() const {
    std::vector<std::pair<std::string, job_state>> out;
    for (const auto& [id, k] : m_jobs) out.emplace_back(id, k.state);
    return out;
}

std::vector<std::string> job_queue::queued_in_order() const {
    std::vector<std::pair<int, std::string>> queued;
    for (const auto& [id, k] : m_jobs)
        if (k.state == job_state::queued) queued.emplace_back(-k.priority, id);
    std::sort(queued.begin(), queued.end());
    std::vector<std::string> ids;
    for (auto& q : queued) ids.push_back(std::move(q.second));
    return ids;
}

std::vector<int> job_queue::free_devices() const {
    std::vector<int> free = m_devices;
    for (const auto& [id, a] : m_active)
        free.erase(std::remove(free.begin(), free.end(), a.device), free.end());
    return free;
}

void job_queue::start_what_fits(std::size_t slots, bool slurm, const job_start& start) {
    // Those waiting when the tick began: a job that must wait again (start puts it back) is
    // tried at the next tick, never twice in one.
    const std::vector<std::string> waiting = m_to_resume;
    for (const std::string& id : waiting) {
        if (m_active.size() >= slots) return;
        int device = 0;
        try {
            if (!slurm) device = m_spool.read_status(id).device;
        } catch (const std::exception& e) {
            fail_alone(id, e.what());  // out of m_to_resume
            continue;
        }
        const std::vector<int> free = free_devices();
        if (!slurm && std::find(free.begin(), free.end(), device) == free.end()) {
            if (std::find(m_devices.begin(), m_devices.end(), device) != m_devices.end())
                continue;  // its GPU is busy: it waits for it
            if (free.empty()) return;
            device = free.front();  // its GPU is not served any more
        }
        const auto at = std::find(m_to_resume.begin(), m_to_resume.end(), id);
        if (at == m_to_resume.end()) continue;  // gone meanwhile (failed alone)
        m_to_resume.erase(at);
        if (!start(id, device)) return;
    }
    for (const std::string& id : queued_in_order()) {
        if (m_active.size() >= slots) return;
        const std::vector<int> free = free_devices();
        if (!slurm && free.empty()) return;
        if (!start(id, slurm ? 0 : free.front())) return;
    }
}

bool job_queue::busy() const {
    if (!m_active.empty() || !m_to_resume.empty()) return true;
    for (const auto& [id, k] : m_jobs)
        if (k.state == job_state::queued) return true;
    return false;
}

void job_queue::save(const job_status& st) {
    m_spool.write_status(st);
    m_jobs[st.id].state = st.state;
}

void job_queue::finalise(job_status st, job_state state, const std::string& reason, int code) {
    st.state = state;
    st.reason = reason;
    st.exit_code = code;
    st.finished = utc_now();
    st.handle.clear();
    save(st);
    log(st.id, to_string(state) + ": " + reason);
    if (state == job_state::cancelled) {  // a cancelled job gives its bytes back
        try {
            const std::uintmax_t freed = free_job_bytes(m_spool, st.id);
            if (freed > 0) log(st.id, "freed " + std::to_string(freed >> 10) + " KiB");
        } catch (const std::exception& e) {
            std::cerr << "serve: " << st.id << ": " << e.what() << " (its files stay)\n";
        }
    }
}

void job_queue::for_job(const std::string& id, const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        fail_alone(id, e.what());
    }
}

void job_queue::fail_alone(const std::string& id, const std::string& why) {
    forget(id);
    std::error_code ec;
    // Never write into a folder that is gone: state.json alone there would make a job of it.
    if (fs::is_regular_file(m_spool.job_dir(id) / "job.json", ec)) {
        job_status st;
        st.id = id;
        try {
            st = m_spool.read_status(id);
        } catch (const std::exception&) {  // unreadable: a fresh record says why
        }
        try {
            finalise(st, job_state::failed, why, -1);
            std::cerr << "serve: " << id << ": " << why << " (the job failed)\n";
            return;
        } catch (const std::exception&) {
            // Not even the failed record could be written: said on the line below.
        }
    }
    m_dropped.insert(id);
    m_jobs.erase(id);
    std::cerr << "serve: " << id << ": " << why
              << " (dropped from the queue: nothing can be written there)\n";
}

// Out of the waiting lists; a running job stays polled (its process is reaped when it ends).
void job_queue::forget(const std::string& id) {
    m_to_resume.erase(std::remove(m_to_resume.begin(), m_to_resume.end(), id), m_to_resume.end());
    m_reattach.erase(std::remove(m_reattach.begin(), m_reattach.end(), id), m_reattach.end());
}

void job_queue::log(const std::string& id, const std::string& what) const {
    if (!m_quiet) std::cout << utc_now() << " " << id << " " << what << std::endl;
}

}  // namespace cuopt
