// The dashboard's token file: read and held to its rules (owner, mode, strength), or made
// with 32 random bytes in hex, 0600, when missing.
#include "orchestrator/service/dashboard_token_file.hpp"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// The dashboard's token file, held to the rules OpenSSH holds a private key to: a regular file
// (not a link), owned by serve's user, readable by nobody else, holding a token of 128 bits at
// least: 32 or more hex digits, or 22 or more characters of base64url (or base64), nothing
// else but a final newline. serve makes a missing file itself: 32 random bytes in hex, 0600.
constexpr std::size_t k_min_hex_token_chars = 32;     // 4 bits a character
constexpr std::size_t k_min_base64_token_chars = 22;  // 6 bits a character
constexpr std::size_t k_max_token_file_bytes = 4096;

std::string token_strength_problem(const std::string& t) {
    bool all_hex = true;
    for (const unsigned char c : t) {
        if (!std::isalnum(c) && c != '-' && c != '_' && c != '+' && c != '/' && c != '=')
            return "the token may hold only hex digits or base64url characters (one line)";
        all_hex = all_hex && std::isxdigit(c);
    }
    if (all_hex && t.size() < k_min_hex_token_chars)
        return "the token has " + std::to_string(t.size()) +
               " hex digits; 32 at least (128 bits), e.g. openssl rand -hex 32";
    if (t.size() < k_min_base64_token_chars)
        return "the token has " + std::to_string(t.size()) +
               " characters; 22 base64url characters at least (128 bits)";
    return "";
}

std::string make_token_file(const fs::path& file) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes");
    std::ostringstream hex;
    for (const unsigned char b : bytes)
        hex << std::hex << std::setw(2) << std::setfill('0') << int(b);
    const std::string text = hex.str() + "\n";
    // O_EXCL|O_NOFOLLOW: never through a link or over a file someone placed there meanwhile.
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          S_IRUSR | S_IWUSR);
    if (fd < 0)
        throw std::runtime_error(file.string() + ": cannot be made: " + std::strerror(errno));
    const bool ok = ::fchmod(fd, 0600) == 0 &&
                    ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                    ::fsync(fd) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok) throw std::runtime_error(file.string() + ": cannot be written: " + std::strerror(err));
    return hex.str();
}

// What is wrong with the opened token file's owner, type or mode ("" when nothing). Judged on
// the descriptor (fstat), so the file judged is the file read.
std::string token_file_problem(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
    if (!S_ISREG(st.st_mode)) return "is not a regular file";
    if (st.st_uid != ::geteuid())
        return "is owned by uid " + std::to_string(st.st_uid) + ", not by serve's user (uid " +
               std::to_string(::geteuid()) + "); chown it or make a new one";
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return std::string("has mode ") + mode +
               ": other users may read or change it (chmod 600, and make a new token)";
    }
    return "";
}

}  // namespace

// The token from `file` when it is there and passes the rules; else a new one written there.
// Throws std::runtime_error("FILE: what is wrong").
std::string dashboard_token(const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) return make_token_file(file);
    if (fd < 0 && errno == ELOOP)
        throw std::runtime_error(file.string() + ": is a symbolic link; name the file itself");
    if (fd < 0) throw std::runtime_error(file.string() + ": " + std::strerror(errno));
    std::string problem = token_file_problem(fd), t;
    if (problem.empty()) {
        char buf[k_max_token_file_bytes + 1];
        ssize_t n = 0, got = 0;
        while ((n = ::read(fd, buf + got, sizeof buf - static_cast<std::size_t>(got))) > 0)
            got += n;
        t.assign(buf, static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
        if (n < 0) problem = std::string("cannot be read: ") + std::strerror(errno);
        if (t.size() > k_max_token_file_bytes) problem = "is over 4096 bytes: not a token file";
    }
    ::close(fd);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (problem.empty()) problem = token_strength_problem(t);
    if (!problem.empty()) throw std::runtime_error(file.string() + ": " + problem);
    return t;
}

// Without --token-file the token lives in the spool, which is serve's own (secure_spool made
// it, or took group and other bits off it, before this is called).
fs::path default_token_file(const fs::path& spool_dir) {
    return spool_dir / "dashboard.token";
}

}  // namespace cuopt
