#pragma once
/// How cuda-optimizer's children are started, shared by the one-shot runner and the harness
/// workers (the two files that use Boost.Process): each child leads a process group of its
/// own, so a Ctrl-C aimed at the optimizer does not kill a harness mid-attempt, and dies
/// with the optimizer (PR_SET_PDEATHSIG), so a SIGKILLed run leaves nothing behind writing
/// into a folder its history does not list.

#include <linux/close_range.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/process/extend.hpp>
#include <csignal>

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

/// The child and everything it started (ncu's target, a grandchild holding a pipe).
inline void kill_group(pid_t leader) {
    if (leader > 0) ::kill(-leader, SIGKILL);
}

}  // namespace cuopt
