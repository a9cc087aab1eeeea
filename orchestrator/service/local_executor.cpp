// The local executor: each job is a child process of the daemon, in a process group of its own,
// killed with the daemon (PR_SET_PDEATHSIG), so that a SIGKILLed daemon leaves no job running
// that a restarted one could not see: it resumes them instead.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "common/child_process.hpp"
#include "orchestrator/service/job_executor.hpp"

namespace cuopt {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::chrono::seconds k_cancel_grace{10};  // SIGTERM, then SIGKILL after this

struct running_child {
    std::unique_ptr<child_process> child;
    std::optional<clock_type::time_point> cancelled;
};

class local_executor final : public job_executor {
  public:
    explicit local_executor(std::size_t slots) : m_slots(slots) {}
    std::string name() const override { return "local"; }
    bool runs_jobs_here() const override { return true; }
    double min_poll_s() const override { return 0.05; }
    std::size_t slots() const override { return m_slots; }

    std::string start(const job_launch& launch) override {
        // Appended to by the job (no temp + rename: the job's output streams into it), so it is
        // opened O_NOFOLLOW: a link planted at JOB/job.log is refused, never written through.
        const int fd = ::open(launch.log.c_str(),
                              O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) throw std::runtime_error(launch.log.string() + ": cannot open the job's log");
        std::unique_ptr<child_process> c;
        try {
            c = std::make_unique<child_process>(launch.argv, child_streams{-1, fd, fd},
                                                launch.job_dir);
        } catch (...) {
            ::close(fd);
            throw;
        }
        ::close(fd);
        const std::string handle = std::to_string(c->pid());
        m_children.emplace(handle, running_child{std::move(c), std::nullopt});
        return handle;
    }

    std::optional<job_exit> poll(const std::string& handle) override {
        const auto it = m_children.find(handle);
        if (it == m_children.end()) return job_exit{-1, 0, "", "the daemon lost the process"};
        running_child& rc = it->second;
        const std::optional<int> ended = rc.child->poll();
        if (!ended) {
            if (rc.cancelled && clock_type::now() - *rc.cancelled > k_cancel_grace)
                kill_group(rc.child->pid());
            return std::nullopt;
        }
        job_exit out;
        const int status = *ended;
        if (WIFSIGNALED(status)) {
            out.signal = WTERMSIG(status);
            out.reason = std::string("killed by signal ") + std::to_string(out.signal);
        } else {
            out.exit_code = WEXITSTATUS(status);
        }
        kill_group(rc.child->pid());  // anything the job left behind in its group
        m_children.erase(it);
        return out;
    }

    void cancel(const std::string& handle) override {
        const auto it = m_children.find(handle);
        if (it == m_children.end() || it->second.cancelled) return;
        it->second.cancelled = clock_type::now();
        kill_group(it->second.child->pid(), SIGTERM);  // the optimizer stops after its attempt
    }

    bool attach(const std::string&, const job_launch&) override {
        return false;  // a local job died with the daemon that started it
    }

  private:
    std::size_t m_slots;
    std::map<std::string, running_child> m_children;
};

}  // namespace

std::unique_ptr<job_executor> make_local_executor(const std::vector<int>& devices) {
    return std::make_unique<local_executor>(devices.size());
}

}  // namespace cuopt
