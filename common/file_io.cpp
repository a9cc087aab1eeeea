#include "file_io.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/message_text.hpp"

namespace cuopt {

namespace fs = std::filesystem;

std::string read_text_file(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec))  // opening one succeeds; reading it fails
        throw std::runtime_error(path.string() + ": is a directory; expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path.string() + ": cannot open (" + std::strerror(errno) + ")");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<unsigned char> read_binary_file(const fs::path& path) {
    const std::string text = read_text_file(path);
    return {text.begin(), text.end()};
}

namespace {

// Owns one file descriptor and closes it when it goes.
class file_descriptor {
  public:
    explicit file_descriptor(int fd = -1) : m_fd(fd) {}
    ~file_descriptor() {
        if (m_fd >= 0) ::close(m_fd);
    }
    file_descriptor(file_descriptor&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    file_descriptor& operator=(file_descriptor&& o) noexcept {
        std::swap(m_fd, o.m_fd);
        return *this;
    }
    file_descriptor(const file_descriptor&) = delete;
    file_descriptor& operator=(const file_descriptor&) = delete;
    int get() const { return m_fd; }
    /// Closes it now: a write's late error (NFS, a full disk) shows only here.
    bool close() {
        const int fd = m_fd;
        m_fd = -1;
        return fd < 0 || ::close(fd) == 0;
    }

  private:
    int m_fd;
};

}  // namespace

namespace {

// The checks and the read of an opened descriptor (closed here); `opened` < 0: the open's errno.
untrusted_read read_opened(int opened, std::size_t max_bytes) {
    untrusted_read r;
    const file_descriptor fd(opened);
    if (fd.get() < 0) {
        r.error = errno;
        r.refused =
            r.error == ELOOP ? untrusted_read::refusal::link : untrusted_read::refusal::cannot_open;
        return r;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        r.refused = untrusted_read::refusal::not_regular;
        return r;
    }
    r.size = static_cast<unsigned long long>(st.st_size);
    if (r.size > max_bytes) {
        r.refused = untrusted_read::refusal::too_big;
        return r;
    }
    r.text.resize(static_cast<std::size_t>(r.size));
    std::size_t done = 0;
    while (done < r.text.size()) {  // a file that shrank meanwhile ends early
        const ssize_t n = ::read(fd.get(), r.text.data() + done, r.text.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    r.text.resize(done);
    return r;
}

}  // namespace

untrusted_read read_untrusted_file(const fs::path& path, std::size_t max_bytes) {
    return read_opened(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK),
                       max_bytes);
}

untrusted_read read_beneath(const fs::path& folder, const fs::path& relative,
                            std::size_t max_bytes) {
    const file_descriptor dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return read_opened(-1, max_bytes);
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
    // RESOLVE_BENEATH refuses ".." out of the folder and absolute paths (EXDEV); a link on the
    // way is ELOOP, which the read reports as one.
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const int fd =
        static_cast<int>(::syscall(SYS_openat2, dir.get(), relative.c_str(), &how, sizeof(how)));
    return read_opened(fd, max_bytes);
}

std::string foreign_folder_reason(const fs::path& folder) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) return std::strerror(errno);
    if (st.st_uid != ::geteuid()) return "another user's (uid " + std::to_string(st.st_uid) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "writable by others";
    return "";
}

std::string read_text_beneath(const fs::path& folder, const fs::path& relative,
                              std::size_t max_bytes) {
    untrusted_read r = read_beneath(folder, relative, max_bytes);
    const std::string file = (folder / relative).string();
    switch (r.refused) {
        case untrusted_read::refusal::none:
            return std::move(r.text);
        case untrusted_read::refusal::link:
            throw std::runtime_error(file +
                                     ": cannot be read (a link, or a folder on the way is one: "
                                     "not followed)");
        case untrusted_read::refusal::cannot_open:
            throw std::runtime_error(file + ": cannot be read (" +
                                     (r.error == EXDEV
                                          ? std::string("it leads out of ") + folder.string()
                                          : std::string(std::strerror(r.error))) +
                                     ")");
        case untrusted_read::refusal::not_regular:
            throw std::runtime_error(file + ": not a regular file");
        case untrusted_read::refusal::too_big:
            break;
    }
    throw std::runtime_error(file + ": " + std::to_string(r.size) + " bytes, over the " +
                             std::to_string(max_bytes >> 20) + " MiB such a file may have");
}

namespace {

std::string error_text(int err) {
    return std::strerror(err);
}

// Opens the folder `file` is written in, not following a symlink at its last component, so a
// link another user planted where the folder should be ("/tmp/x" -> "/root/.ssh") is refused.
// A link owned by us or by root is followed, as the kernel's fs.protected_symlinks does in sticky
// folders: the user's own "results -> /scratch/results" keeps working, and another user can
// neither make a link owned by us nor move ours. Earlier components of the path are followed:
// they are the user's choice, and an attacker can change them only where the user writes into a
// folder the attacker can rename things in.
file_descriptor open_folder_of(const fs::path& file) {
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    file_descriptor fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() >= 0) return fd;
    int why = errno;
    struct stat link {};
    if ((why == ELOOP || why == ENOTDIR) && ::lstat(dir.c_str(), &link) == 0 &&
        S_ISLNK(link.st_mode)) {
        if (link.st_uid != ::geteuid() && link.st_uid != 0)
            throw file_write_error(file.string() + ": its folder " + dir.string() +
                                   " is a symlink owned by uid " + std::to_string(link.st_uid) +
                                   ", not by us; refusing to write through it");
        fd = file_descriptor(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (fd.get() >= 0) return fd;
        why = errno;
    }
    throw file_write_error(file.string() + ": cannot open its folder (" + error_text(why) + ")",
                           why);
}

// "<name>.tmp-<16 random hex digits>": a name nobody can guess and plant beforehand.
std::string temporary_name(const std::string& name) {
    unsigned char bytes[8];
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno != EINTR) {
            const int why = errno;
            throw file_write_error(name + ": no random bytes (" + error_text(why) + ")", why);
        }
        if (n > 0) got += static_cast<std::size_t>(n);
    }
    static const char hex[] = "0123456789abcdef";
    std::string out = name + ".tmp-";
    for (const unsigned char b : bytes) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

// Creates a fresh temporary file in `dir`: O_EXCL|O_NOFOLLOW, so it is never an existing file
// nor a link someone planted; a name taken already (by chance or by anyone) is drawn again.
file_descriptor create_temporary(const file_descriptor& dir, const fs::path& file, unsigned mode,
                                 std::string& tmp) {
    for (int tries = 0; tries < 100; ++tries) {
        tmp = temporary_name(file.filename().string());
        file_descriptor fd(::openat(dir.get(), tmp.c_str(),
                                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
        if (fd.get() >= 0) return fd;
        if (const int why = errno; why != EEXIST)
            throw file_write_error(file.string() + ": cannot create (" + error_text(why) + ")",
                                   why);
    }
    throw file_write_error(file.string() + ": cannot create (no free temporary name)");
}

bool write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// Replaces `name` in `dir` by the temporary `tmp`. rename() replaces whatever the final name is,
// a symlink included, and never writes through it: a link planted at the final name is gone
// afterwards and its target is untouched.
void replace_with(const file_descriptor& dir, const std::string& tmp, const fs::path& file) {
    if (::renameat(dir.get(), tmp.c_str(), dir.get(), file.filename().c_str()) == 0) return;
    const int why = errno;
    struct stat st {};
    const bool folder =
        ::fstatat(dir.get(), file.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode);
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    throw file_write_error(file.string() + ": cannot replace (" +
                               (folder ? std::string("is a directory") : error_text(why)) + ")",
                           folder ? EISDIR : why);
}

void create_parent_folders(const fs::path& path) {
    if (!path.has_parent_path()) return;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
        throw file_write_error(
            path.parent_path().string() + ": cannot create (" + ec.message() + ")",
            ec.category() == std::generic_category() || ec.category() == std::system_category()
                ? ec.value()
                : 0);
}

}  // namespace

void write_file_with(const fs::path& path, const file_filler& fill, bool durable, unsigned mode) {
    if (path.filename().empty() || path.filename() == "." || path.filename() == "..")
        throw file_write_error(path.string() + ": not a file name");
    create_parent_folders(path);
    const file_descriptor dir = open_folder_of(path);
    std::string tmp;
    file_descriptor fd = create_temporary(dir, path, mode, tmp);
    std::string failure;
    int why = 0;  // the errno of the failure, where the system gave one
    auto failed = [&] {
        why = errno;
        failure = "write failed (" + error_text(why) + ")";
    };
    try {
        if (!fill(fd.get())) failed();
    } catch (const file_write_error& e) {
        failure = e.what();
        why = e.error_number();
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (failure.empty() && durable && ::fsync(fd.get()) != 0) failed();
    if (!fd.close() && failure.empty()) failed();
    if (!failure.empty()) {
        ::unlinkat(dir.get(), tmp.c_str(), 0);
        throw file_write_error(path.string() + ": " + failure, why);
    }
    replace_with(dir, tmp, path);
    if (durable && ::fsync(dir.get()) != 0) {
        why = errno;
        throw file_write_error(path.string() + ": folder sync failed (" + error_text(why) + ")",
                               why);
    }
}

void write_file_atomic(const fs::path& path, const void* data, std::size_t size) {
    const file_filler bytes = [&](int fd) { return write_all(fd, data, size); };
    write_file_with(path, bytes, false);
}

void write_file_durable(const fs::path& path, const void* data, std::size_t size) {
    const file_filler bytes = [&](int fd) { return write_all(fd, data, size); };
    write_file_with(path, bytes, true);
}

std::string write_failure_line(const fs::path& path, const file_write_error& e) {
    const std::string line = "cannot write " + path.string() + ": ";
    if (const int why = e.error_number())
        return line + error_text(why) + " (errno " + std::to_string(why) + ")";
    std::string detail = e.what();
    const std::string named = path.string() + ": ";
    if (detail.compare(0, named.size(), named) == 0) detail.erase(0, named.size());
    return line + detail;
}

void copy_file_atomic(const fs::path& from, const fs::path& to) {
    const file_descriptor in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) {
        const int why = errno;
        throw file_write_error(from.string() + ": cannot open (" + error_text(why) + ")", why);
    }
    const file_filler copy = [&](int out) {
        std::vector<char> buffer(1 << 20);
        for (;;) {
            const ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int why = errno;
                throw file_write_error(
                    "reading " + from.string() + " failed (" + error_text(why) + ")", why);
            }
            if (n == 0) return true;
            if (!write_all(out, buffer.data(), static_cast<std::size_t>(n))) return false;
        }
    };
    write_file_with(to, copy, false);
}

fs::path resolve_inside(const fs::path& base, const std::string& relative) {
    const fs::path rel(relative);
    if (relative.empty()) throw std::invalid_argument("path is empty");
    if (rel.is_absolute())
        throw std::invalid_argument(quote_value(relative) +
                                    " is absolute; expected a path relative to " + base.string());
    fs::path root, full;
    try {
        root = fs::weakly_canonical(base);
        full = fs::weakly_canonical(root / rel);
    } catch (const fs::filesystem_error& e) {  // a name too long for the file system, ...
        throw std::invalid_argument(quote_value(relative) + ": " + e.code().message());
    }
    const auto mismatch = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
    if (mismatch.first != root.end())
        throw std::invalid_argument(quote_value(relative) + " escapes the request folder " +
                                    root.string());
    return full;
}

void link_or_copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to.parent_path());
    std::error_code ec;
    fs::remove(to, ec);
    // link() makes a new name and never follows one already there (EEXIST: then we copy).
    fs::create_hard_link(from, to, ec);
    if (ec) copy_file_atomic(from, to);
}

fs::path resolved_path(const fs::path& path) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    const fs::path canonical = fs::weakly_canonical(absolute, ec);
    return ec ? absolute.lexically_normal() : canonical;
}

bool lies_within(const fs::path& path, const fs::path& root) {
    const fs::path p = resolved_path(path);
    return std::mismatch(root.begin(), root.end(), p.begin(), p.end()).first == root.end();
}

}  // namespace cuopt
