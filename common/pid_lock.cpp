#include "common/pid_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

// The text in the file, its last line (at most 31 bytes: a pid).
std::string text_in(int fd) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    return last_line(std::string_view(buf, n > 0 ? static_cast<std::size_t>(n) : 0));
}

// Through a second descriptor, of the same file (a name swapped meanwhile is not written).
bool write_pid(const std::filesystem::path& file, int lock_fd) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat a {
    }, b{};
    const std::string pid = std::to_string(::getpid()) + "\n";
    const bool ok = ::fstat(fd, &a) == 0 && ::fstat(lock_fd, &b) == 0 && a.st_dev == b.st_dev &&
                    a.st_ino == b.st_ino && ::ftruncate(fd, 0) == 0 &&
                    ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
    ::close(fd);  // another descriptor of the file: the flock stays with the lock's own
    return ok;
}

// How often a lock file removed or replaced while it was being taken is opened again.
constexpr int k_max_reopens = 100;

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether `file` (not followed) names the file open as `fd`.
bool names(const std::filesystem::path& file, int fd) {
    struct stat by_name {
    }, open{};
    return ::lstat(file.c_str(), &by_name) == 0 && ::fstat(fd, &open) == 0 &&
           same_file(by_name, open);
}

// `file`, opened read-only, or made with `mode` where it is missing (`created` then true); -1
// with errno otherwise (EEXIST: made by another between the two opens). O_NOFOLLOW: a link
// planted at the name is refused, never written through; O_NONBLOCK: a FIFO planted there is
// opened at once (and refused by the caller), never waited on.
int open_lock_file(const std::filesystem::path& file, unsigned mode, bool& created) {
    constexpr int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    created = false;
    const int fd = ::open(file.c_str(), flags);
    if (fd >= 0 || errno != ENOENT) return fd;
    const int made = ::open(file.c_str(), flags | O_CREAT | O_EXCL, mode);
    created = made >= 0;
    return made;
}

}  // namespace

std::optional<pid_lock> pid_lock::try_take(const std::filesystem::path& file, unsigned mode,
                                           std::string& holder) {
    for (int opened = 0; opened < k_max_reopens; ++opened) {
        bool created = false;
        const int fd = open_lock_file(file, mode, created);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0)
            throw std::runtime_error(file.string() + ": cannot open (" + std::strerror(errno) +
                                     ")");
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd);
            throw std::runtime_error(file.string() + ": not a regular file");
        }
        if (st.st_nlink > 1) {  // a name of another file, planted: never locked nor truncated
            ::close(fd);
            throw std::runtime_error(file.string() + ": a hard link (" +
                                     std::to_string(st.st_nlink) +
                                     " names); expected a lock file of its own, not written");
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int error = errno;
            holder = text_in(fd);
            ::close(fd);
            if (error == EWOULDBLOCK) return std::nullopt;  // held
            throw std::runtime_error(file.string() + ": cannot lock (" + std::strerror(error) +
                                     ")");
        }
        // The holder before may have removed the file as it let go (release_removing): a lock
        // on a file the name no longer names is no lock (the next taker makes a new file and
        // locks that one), so the name is opened again.
        if (!names(file, fd)) {
            ::close(fd);
            continue;
        }
        pid_lock out;
        out.m_fd = fd;
        out.m_file = file;
        out.m_created = created;
        out.m_pid_written = write_pid(file, fd);
        return out;
    }
    throw std::runtime_error(file.string() + ": cannot lock (removed or replaced " +
                             std::to_string(k_max_reopens) + " times while it was taken)");
}

bool pid_lock::release_removing() {
    if (m_fd < 0) return false;
    // A second open file description of the same file: once this one is closed, a child it
    // was handed down to still holds the flock through its copy, and then this one cannot take
    // it. Only a lock nobody holds is removed: taken again here, the name checked and unlinked
    // while held, so a taker that opened the file meanwhile locks it only once it is closed
    // below, finds the name gone (names() in try_take) and opens the name again.
    const int again = ::open(m_file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    const bool same = again >= 0 && names(m_file, again) && names(m_file, m_fd);
    ::close(m_fd);
    m_fd = -1;
    const bool removed = same && ::flock(again, LOCK_EX | LOCK_NB) == 0 && names(m_file, again) &&
                         ::unlink(m_file.c_str()) == 0;
    if (again >= 0) ::close(again);
    return removed;
}

std::optional<pid_lock> pid_lock::take_after_stragglers(const std::filesystem::path& file,
                                                        unsigned mode,
                                                        std::chrono::milliseconds wait,
                                                        std::string& holder, bool& holder_running,
                                                        const std::function<void()>& on_wait) {
    const auto give_up = std::chrono::steady_clock::now() + wait;
    for (bool told = false;; told = true) {
        holder_running = false;
        if (std::optional<pid_lock> taken = try_take(file, mode, holder)) return taken;
        holder_running = holder.empty() || process_running(holder);
        if (holder_running || std::chrono::steady_clock::now() >= give_up) return std::nullopt;
        if (!told && on_wait) on_wait();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

pid_lock& pid_lock::operator=(pid_lock&& o) noexcept {
    if (this != &o) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = o.m_fd;
        m_file = std::move(o.m_file);
        m_pid_written = o.m_pid_written;
        m_created = o.m_created;
        o.m_fd = -1;
    }
    return *this;
}

pid_lock::~pid_lock() {
    if (m_fd >= 0) ::close(m_fd);
}

namespace {

bool is_pid(const std::string& text) {
    return !text.empty() && text.size() <= 10 &&
           text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string holder_text(const std::string& holder) {
    if (holder.empty()) return "?";
    return is_pid(holder) ? holder : quote_value(holder, 20);
}

bool process_running(const std::string& pid) {
    if (!is_pid(pid)) return false;
    const long long n = std::stoll(pid);
    if (n <= 0 || n > std::numeric_limits<pid_t>::max()) return false;
    if (::kill(static_cast<pid_t>(n), 0) != 0 && errno != EPERM) return false;
    // /proc/PID/stat: "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS ...": a zombie (Z, X)
    // has ended; one with PF_EXITING in its flags is being torn down after its kill (a large
    // process takes a while), runs no code any more, and soon lets its locks go.
    std::ifstream stat("/proc/" + pid + "/stat");
    const std::string line((std::istreambuf_iterator<char>(stat)),
                           std::istreambuf_iterator<char>());
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) {  // gone meanwhile, or no /proc to ask (then: running)
        std::error_code ec;
        return !std::filesystem::exists("/proc/self/stat", ec);
    }
    std::istringstream fields(line.substr(close + 1));
    std::string state, skip;
    unsigned long flags = 0;
    fields >> state >> skip >> skip >> skip >> skip >> skip >> flags;
    constexpr unsigned long k_pf_exiting = 0x4;
    return state != "Z" && state != "X" && (flags & k_pf_exiting) == 0;
}

}  // namespace cuopt
