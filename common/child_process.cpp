#include "common/child_process.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

// Boost.Process offers vfork (bp::posix::use_vfork) only where this macro is set, which its
// config leaves unset on a glibc that follows POSIX 2008 (where vfork left the standard; Linux
// and glibc keep it).
#define BOOST_POSIX_HAS_VFORK 1
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>

namespace cuopt {

namespace bp = boost::process;

namespace {

// The descriptor handed down, and who reads or changes it: a start reads it and keeps it open
// until its child has exec'd (shared); a change waits for the starts in flight (exclusive).
int g_handed_down = -1;
std::shared_mutex g_handed_down_use;

// Runs in the child between vfork and exec (system calls only, on the parent's memory): the
// standard streams, nothing else inherited, its own group, death with its parent.
struct child_setup : bp::extend::handler {
    int in, out, err;
    int handed_down = -1;
    pid_t parent = ::getpid();
    char** envp = nullptr;
    template <typename Executor>
    void on_setup(Executor& exec) const {
        // Set directly, not through bp::env, whose lookup in Boost 1.74 reads past its buffer.
        if (envp) exec.env = envp;
    }
    template <typename Executor>
    void on_exec_setup(Executor&) const {
        const int null_fd = ::open("/dev/null", O_RDWR);
        if (::dup2(in >= 0 ? in : null_fd, 0) < 0 || ::dup2(out >= 0 ? out : null_fd, 1) < 0 ||
            ::dup2(err >= 0 ? err : null_fd, 2) < 0)
            ::_exit(127);
        // Nothing the parent holds open (another worker's pipes, a lock) reaches the child: a
        // worker must see EOF when its own stdin closes, and a crash must close its stdout.
        // (0-2 are dup2'ed copies, which never carry close-on-exec.)
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        if (handed_down > 2) ::fcntl(handed_down, F_SETFD, 0);  // the run's lock: kept
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    }
};

}  // namespace

struct child_process::impl {
    bp::child child;
    std::optional<int> status;
};

child_process::child_process(const std::vector<std::string>& argv, const child_streams& streams,
                             const std::filesystem::path& cwd, char** envp)
    : m(std::make_unique<impl>()) {
    if (argv.empty()) throw std::runtime_error("cannot start a child: no program given");
    // A bare name ("ncu", "sbatch") is looked up on PATH, as a shell would.
    const boost::filesystem::path program = argv[0].find('/') == std::string::npos
                                                ? bp::search_path(argv[0])
                                                : boost::filesystem::path(argv[0]);
    if (program.empty())
        throw std::runtime_error("cannot start " + argv[0] + ": not found on PATH");
    std::shared_lock<std::shared_mutex> hand_down(g_handed_down_use);  // until the exec
    const child_setup setup{{},         streams.in, streams.out, streams.err, g_handed_down,
                            ::getpid(), envp};
    std::error_code ec;
    const std::vector<std::string> args(argv.begin() + 1, argv.end());
    // vfork: the parent's page tables are never copied (a fork of an optimizer holding a large
    // case's outputs copied them, and each later write of the parent's paid a copy-on-write
    // fault until the child's exec). The child runs only child_setup's system calls.
    if (cwd.empty())
        m->child = bp::child(bp::exe = program, bp::args = args, setup, bp::posix::use_vfork, ec);
    else
        m->child = bp::child(bp::exe = program, bp::args = args, bp::start_dir = cwd.string(),
                             setup, bp::posix::use_vfork, ec);
    if (ec) throw std::runtime_error("cannot start " + argv[0] + ": " + ec.message());
}

void hand_down_to_children(int fd) {
    std::unique_lock<std::shared_mutex> change(g_handed_down_use);
    g_handed_down = fd;
}

child_process::~child_process() {
    if (m && !m->status) {
        kill_group(pid());
        wait();
    }
}

pid_t child_process::pid() const {
    return m->child.id();
}

std::optional<int> child_process::poll() {
    if (m->status) return m->status;
    int status = 0;
    const pid_t r = ::waitpid(pid(), &status, WNOHANG);
    if (r == pid() || (r < 0 && errno == ECHILD)) {
        m->status = r == pid() ? status : 0;
        m->child.detach();  // reaped here: Boost must not wait for it again
    }
    return m->status;
}

int child_process::wait() {
    while (!m->status) {
        int status = 0;
        const pid_t r = ::waitpid(pid(), &status, 0);
        if (r == pid())
            m->status = status;
        else if (r < 0 && errno != EINTR)
            m->status = 0;
    }
    m->child.detach();  // reaped here: Boost must not wait for it again
    return *m->status;
}

void kill_group(pid_t leader, int sig) {
    if (leader > 0) ::kill(-leader, sig);
}

std::array<int, 2> make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    return {fds[0], fds[1]};
}

void read_pipes_to_end(int out_fd, std::string& out, int err_fd, std::string& err) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    std::string* into[2] = {&out, &err};
    int open = 2;
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[65536];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                into[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open;
            }
        }
    }
}

}  // namespace cuopt
