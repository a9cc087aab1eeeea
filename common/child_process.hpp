#pragma once
/// The one owner of child processes, and the only file that uses Boost.Process: the harness
/// and its workers, compute-sanitizer and ncu, Slurm's commands, a daemon's jobs and `check`
/// all start here. Every child leads a process group of its own (a Ctrl-C aimed at the parent
/// does not kill it mid-attempt; cancelling it reaches what it started), dies with the thread
/// that started it (PR_SET_PDEATHSIG), inherits no descriptor beside its three standard
/// streams (and the one handed down, below), and gets the environment its caller chose
/// (child_environment.hpp's scrubbed one for anything near an untrusted kernel).

#include <sys/types.h>

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cuopt {

/// What the child's stdin, stdout and stderr are: descriptors dup'ed onto 0, 1 and 2 (the
/// caller keeps its own and closes them), or -1 for /dev/null.
struct child_streams {
    int in = -1, out = -1, err = -1;
};

/// A running (or ended) child. Destroying it while the child still runs kills the child.
class child_process {
  public:
    /// Starts argv (argv[0] a path, or a bare name looked up on PATH) in `cwd` ("" here) with
    /// `envp` (null: this process's environment; it must stay valid until the constructor
    /// returns). Throws std::runtime_error "cannot start PROGRAM: why".
    child_process(const std::vector<std::string>& argv, const child_streams& streams,
                  const std::filesystem::path& cwd = {}, char** envp = nullptr);
    ~child_process();
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    pid_t pid() const;
    /// The wait status (as waitpid's) once the child has ended; nullopt while it runs.
    std::optional<int> poll();
    /// Waits for the end; the wait status.
    int wait();

  private:
    struct impl;
    std::unique_ptr<impl> m;
};

/// A descriptor that every child started from now on inherits (under the same number), or -1
/// for none: the run's lock (RUN/.lock, read-only), so that a run stays "still going" while any
/// process it started lives. A harness that outlives a killed optimizer for a moment (its
/// PR_SET_PDEATHSIG arrives only once the optimizer's exit is done) still writes into the run
/// folder; a resume or a restart must wait for it, not race it. The caller keeps `fd` open
/// until it hands down another (-1): a start in flight finishes with it first.
void hand_down_to_children(int fd);

/// Sends `sig` (SIGKILL by default) to the child's whole group: the child and everything it
/// started (ncu's target, a grandchild holding a pipe).
void kill_group(pid_t leader, int sig = 9);

/// A pipe whose both ends are close-on-exec: {read end, write end}. Throws on failure.
std::array<int, 2> make_pipe();

/// Reads two pipes (a child's stdout and stderr) to their ends at once, so neither of the
/// child's writes can block on a full pipe.
void read_pipes_to_end(int out_fd, std::string& out, int err_fd, std::string& err);

}  // namespace cuopt
