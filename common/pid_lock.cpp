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
    const int fd = ::open(file.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
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

}  // namespace

std::optional<pid_lock> pid_lock::try_take(const std::filesystem::path& file, unsigned mode,
                                           std::string& holder) {
    // O_NOFOLLOW: a link planted at the name is refused, never written through; O_NONBLOCK: a
    // FIFO planted there is opened at once (and refused below), never waited on.
    const int fd =
        ::open(file.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0)
        throw std::runtime_error(file.string() + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw std::runtime_error(file.string() + ": not a regular file");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        holder = text_in(fd);
        ::close(fd);
        if (error == EWOULDBLOCK) return std::nullopt;  // held
        throw std::runtime_error(file.string() + ": cannot lock (" + std::strerror(error) + ")");
    }
    pid_lock out;
    out.m_fd = fd;
    out.m_pid_written = write_pid(file, fd);
    return out;
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
        m_pid_written = o.m_pid_written;
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
