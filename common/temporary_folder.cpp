#include "common/temporary_folder.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/file_io.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

fs::path default_parent() {
    std::error_code ec;
    fs::path p = fs::temp_directory_path(ec);  // $TMPDIR when it is a folder
    return ec ? fs::path("/tmp") : p;
}

}  // namespace

temporary_folder::temporary_folder(const std::string& prefix, const fs::path& parent) {
    const fs::path where = parent.empty() ? default_parent() : parent;
    std::string name = (where / (prefix + "-XXXXXX")).string();
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data()))  // O_EXCL-like: fails rather than reuse an existing name
        throw file_write_error(name + ": cannot create a temporary folder (" +
                               std::strerror(errno) + ")");
    m_path = buffer.data();
}

temporary_folder::~temporary_folder() {
    remove();
}

temporary_folder::temporary_folder(temporary_folder&& other) noexcept
    : m_path(std::move(other.m_path)) {
    other.m_path.clear();
}

temporary_folder& temporary_folder::operator=(temporary_folder&& other) noexcept {
    if (this != &other) {
        remove();
        m_path = std::move(other.m_path);
        other.m_path.clear();
    }
    return *this;
}

void temporary_folder::remove() noexcept {
    if (m_path.empty()) return;
    std::error_code ec;
    fs::remove_all(m_path, ec);  // removes links inside, never what they point at
    m_path.clear();
}

}  // namespace cuopt
