#include "file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

// fsyncs the folder `dir` so a rename in it is on disk.
void sync_folder(const fs::path& dir, const fs::path& file) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw file_write_error(file.string() + ": cannot open its folder to sync (" +
                               std::strerror(errno) + ")");
    const bool ok = ::fsync(fd) == 0;
    const int why = errno;
    ::close(fd);
    if (!ok)
        throw file_write_error(file.string() + ": folder sync failed (" + std::strerror(why) + ")");
}

void write_file(const fs::path& path, const void* data, std::size_t size, bool durable) {
    if (path.has_parent_path()) {
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        if (ec)
            throw file_write_error(path.parent_path().string() + ": cannot create (" +
                                   ec.message() + ")");
    }
    const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f)
        throw file_write_error(path.string() + ": cannot create (" + std::strerror(errno) + ")");
    const bool ok = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0 &&
                    (!durable || ::fsync(::fileno(f)) == 0);
    const int write_errno = errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) {
        const int why = ok ? errno : write_errno;
        std::error_code ec;
        fs::remove(tmp, ec);
        throw file_write_error(path.string() + ": write failed (" + std::strerror(why) + ")");
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code dir_ec;
        const std::string why = fs::is_directory(path, dir_ec) ? "is a directory" : ec.message();
        fs::remove(tmp, ec);
        throw file_write_error(path.string() + ": cannot replace (" + why + ")");
    }
    if (durable) sync_folder(path.parent_path(), path);
}

}  // namespace

void write_file_atomic(const fs::path& path, const void* data, std::size_t size) {
    write_file(path, data, size, false);
}

void write_file_durable(const fs::path& path, const void* data, std::size_t size) {
    write_file(path, data, size, true);
}

fs::path resolve_inside(const fs::path& base, const std::string& relative) {
    const fs::path rel(relative);
    if (relative.empty()) throw std::invalid_argument("path is empty");
    if (rel.is_absolute())
        throw std::invalid_argument("'" + relative + "' is absolute; expected a path relative to " +
                                    base.string());
    fs::path root, full;
    try {
        root = fs::weakly_canonical(base);
        full = fs::weakly_canonical(root / rel);
    } catch (const fs::filesystem_error& e) {  // a name too long for the file system, ...
        throw std::invalid_argument("'" + relative.substr(0, 80) +
                                    (relative.size() > 80 ? "...'" : "'") + ": " +
                                    e.code().message());
    }
    const auto mismatch = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
    if (mismatch.first != root.end())
        throw std::invalid_argument("'" + relative + "' escapes the request folder " +
                                    root.string());
    return full;
}

void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::filesystem::create_directories(to.parent_path());
    std::error_code ec;
    std::filesystem::remove(to, ec);
    std::filesystem::create_hard_link(from, to, ec);
    if (ec) std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

}  // namespace cuopt
