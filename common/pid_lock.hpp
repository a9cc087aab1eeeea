#pragma once
/// An flock on a file that names its holder: a run's `RUN/.lock`, a spool's `.daemon.lock`.
/// Taken without waiting (LOCK_NB); the taker's pid is written into the file through a second,
/// short-lived descriptor, so the lock's own descriptor is read-only and can be handed to a
/// child (child_process.hpp's hand_down_to_children) without letting it change the file. The
/// lock lasts until every descriptor of it is closed: the holder's and its children's. A holder
/// may remove the file as it lets go: every taker checks, once it holds the lock, that the name
/// still names the file it locked, and opens the name again when not.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace cuopt {

class pid_lock {
  public:
    pid_lock() = default;
    /// Takes the lock on `file` (made with `mode` when missing; a link planted at the name is
    /// refused, never followed, and so is a hard link: a file of more than one name is another
    /// file's, never truncated); nullopt when another descriptor holds it, `holder` then the
    /// text written in it (a pid; "" when none). Throws std::runtime_error "FILE: cannot open
    /// (why)" when the file cannot be opened, "FILE: cannot lock (why)" when its filesystem
    /// takes no lock, "FILE: not a regular file", "FILE: a hard link (N names) ...".
    static std::optional<pid_lock> try_take(const std::filesystem::path& file, unsigned mode,
                                            std::string& holder);
    /// As try_take, but when the pid written in the file has ended while the lock is still
    /// held (a process it started, handed the descriptor, has not ended yet: a killed
    /// optimizer's harness), waits up to `wait` for the lock, calling `on_wait` once first.
    /// nullopt when a running process holds it (`holder_running` then true; "" is taken for
    /// one) or the wait ran out (false).
    static std::optional<pid_lock> take_after_stragglers(const std::filesystem::path& file,
                                                         unsigned mode,
                                                         std::chrono::milliseconds wait,
                                                         std::string& holder, bool& holder_running,
                                                         const std::function<void()>& on_wait);
    pid_lock(pid_lock&& o) noexcept
        : m_fd(o.m_fd),
          m_file(std::move(o.m_file)),
          m_pid_written(o.m_pid_written),
          m_created(o.m_created) {
        o.m_fd = -1;
    }
    pid_lock& operator=(pid_lock&& o) noexcept;
    pid_lock(const pid_lock&) = delete;
    pid_lock& operator=(const pid_lock&) = delete;
    ~pid_lock();

    /// The lock's descriptor (read-only, close-on-exec); -1 for an empty one.
    int fd() const { return m_fd; }
    /// Whether this process's pid could be written into the file.
    bool pid_written() const { return m_pid_written; }
    /// Whether taking the lock made the file (it was not there).
    bool created() const { return m_created; }
    /// Lets go of the lock, removing the file where that is safe: the name still names the
    /// locked file and, once this descriptor is closed, nobody holds the lock (a child it was
    /// handed down to that still lives keeps the file, and the lock with it; so does a taker
    /// that locked it meanwhile). Whether the file was removed.
    bool release_removing();

  private:
    int m_fd = -1;
    std::filesystem::path m_file;
    bool m_pid_written = false;
    bool m_created = false;
};

/// Whether `pid` names a process that still runs: not a zombie (its descriptors are closed, its
/// children signalled) and not one being torn down after its end (PF_EXITING), which runs no
/// code any more. False for a text that is not a pid.
bool process_running(const std::string& pid);

/// The holder as a message names it: the pid, "?" when none was written, anything else quoted.
std::string holder_text(const std::string& holder);

}  // namespace cuopt
