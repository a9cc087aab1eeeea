#pragma once
/// How cuda-optimizer's children are started, shared by the one-shot runner and the harness
/// workers (the two files that use Boost.Process): each child leads a process group of its
/// own, so a Ctrl-C aimed at the optimizer does not kill a harness mid-attempt, and dies
/// with the optimizer (PR_SET_PDEATHSIG), so a SIGKILLed run leaves nothing behind writing
/// into a folder its history does not list; and each gets the scrubbed environment
/// (child_environment.hpp), never the optimizer's keys.

#include <linux/close_range.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/process/extend.hpp>
#include <csignal>
#include <memory>

#include "orchestrator/evaluation/child_environment.hpp"

namespace cuopt {

struct own_process_group : boost::process::extend::handler {
    pid_t parent = ::getpid();
    template <typename Executor>
    void on_exec_setup(Executor&) const {
        // Nothing the optimizer holds open (another worker's pipes, a lock) reaches the child:
        // a worker must see EOF when its own stdin closes, and a crash must close its stdout.
        // (The child's 0-2 are dup2'ed copies, which never carry close-on-exec.)
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    }
};

/// Hands execve the scrubbed environment, or leaves the child the optimizer's own (a Slurm
/// command). Not bp::env, whose lookup in Boost 1.74 reads past its buffer: the executor's
/// envp is set directly, in the parent before the fork.
struct child_env : boost::process::extend::handler {
    std::shared_ptr<scrubbed_environment> scrubbed;  // null: inherited
    explicit child_env(bool scrub)
        : scrubbed(scrub ? std::make_shared<scrubbed_environment>() : nullptr) {}
    template <typename Executor>
    void on_setup(Executor& exec) const {
        if (scrubbed) exec.env = scrubbed->envp();
    }
};

/// The child and everything it started (ncu's target, a grandchild holding a pipe).
inline void kill_group(pid_t leader) {
    if (leader > 0) ::kill(-leader, SIGKILL);
}

}  // namespace cuopt
