#pragma once
/// Small, careful file helpers: whole-file reads, atomic writes (temp file +
/// rename, so a reader never sees half a file) and resolution of a relative path
/// against a base folder that refuses to escape it.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

/// Reads a whole file; throws std::runtime_error naming the path on failure.
std::string read_text_file(const std::filesystem::path& path);
std::vector<unsigned char> read_binary_file(const std::filesystem::path& path);

/// A file could not be written (disk full, read-only folder, permissions): what() names it.
class file_write_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Writes to "<path>.tmp-<pid>" then renames over path, so a reader sees the old file or
/// the new one, never half of one. Creates parent folders. Throws file_write_error.
void write_file_atomic(const std::filesystem::path& path, const void* data, std::size_t size);
inline void write_file_atomic(const std::filesystem::path& path, std::string_view text) {
    write_file_atomic(path, text.data(), text.size());
}

/// write_file_atomic that also survives a power loss: the temp file is fsynced before the
/// rename and the folder after it, so the file is the old one or the new one, whole, once this
/// returns. For the run's records (history.json, run.json, candidates.json, summary.json);
/// slower, so not for the harness's large output files. Throws file_write_error.
void write_file_durable(const std::filesystem::path& path, const void* data, std::size_t size);
inline void write_file_durable(const std::filesystem::path& path, std::string_view text) {
    write_file_durable(path, text.data(), text.size());
}

/// Hard-links `from` at `to` (replacing it), or copies it where a link cannot be made
/// (another file system). Creates parent folders.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to);

/// Resolves `relative` against `base`. Throws std::invalid_argument when it is
/// absolute or, after normalisation (.., symlinks of existing parts), lies outside base.
std::filesystem::path resolve_inside(const std::filesystem::path& base,
                                     const std::string& relative);

}  // namespace cuopt
