#pragma once
/// Small, careful file helpers: whole-file reads, atomic writes (temp file +
/// rename, so a reader never sees half a file) and resolution of a relative path
/// against a base folder that refuses to escape it. Every file the tools write goes through
/// write_file_with: no predictable name, no symlink followed, in any folder.

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuopt {

/// Reads a whole file; throws std::runtime_error naming the path on failure.
std::string read_text_file(const std::filesystem::path& path);
std::vector<unsigned char> read_binary_file(const std::filesystem::path& path);

/// A file another process may have written or planted, read only when it is a regular file
/// opened without following a link (O_NOFOLLOW: the check and the read are one open) and of at
/// most `max_bytes`; otherwise `refused` says why and `text` is empty. Callers word the refusal.
struct untrusted_read {
    enum class refusal { none, cannot_open, link, not_regular, too_big };
    refusal refused = refusal::none;
    int error = 0;                // cannot_open: errno
    unsigned long long size = 0;  // too_big: the file's size
    std::string text;
};
untrusted_read read_untrusted_file(const std::filesystem::path& path, std::size_t max_bytes);
/// The same for `relative` (e.g. "evidence/3.1/significance/round-1/winner/response.json")
/// inside `folder`: opened beneath it without following a link at any component (openat2 with
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so neither a linked file nor a linked folder on the
/// way, nor "..", leads out of it. `folder` itself is followed: it is what the user named.
untrusted_read read_beneath(const std::filesystem::path& folder,
                            const std::filesystem::path& relative, std::size_t max_bytes);
/// read_beneath's text, or std::runtime_error with one line naming FOLDER/RELATIVE and why
/// ("a link, or a folder on the way is one: not followed", "over the 16 MiB ...").
std::string read_text_beneath(const std::filesystem::path& folder,
                              const std::filesystem::path& relative, std::size_t max_bytes);

/// Why the caller must not make files by path inside `folder` ("" when it may): the folder is
/// another user's, or others may write it, so a link could be swapped in between a check and a
/// write ("another user's (uid 65534)", "writable by others"). A folder that cannot be looked at
/// gives its error.
std::string foreign_folder_reason(const std::filesystem::path& folder);

/// A file could not be written (disk full, read-only folder, permissions): what() names it.
class file_write_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
    file_write_error(const std::string& message, int error_number)
        : std::runtime_error(message), m_error_number(error_number) {}
    /// The errno the system refused with (ENOSPC, EFBIG, EACCES, ...); 0 where the refusal is
    /// our own (a folder that is someone else's symlink, a name that is no file name).
    int error_number() const noexcept { return m_error_number; }

  private:
    int m_error_number = 0;
};

/// The one line a program prints when `path` could not be written: "cannot write PATH: No
/// space left on device (errno 28)"; without an errno, the error's own words after the path.
std::string write_failure_line(const std::filesystem::path& path, const file_write_error& e);

/// Writes a file's bytes into the open descriptor it is given; false (errno set) on failure.
using file_filler = std::function<bool(int fd)>;

/// The one way a file is written. Creates parent folders; opens the folder O_NOFOLLOW (a
/// symlink there is followed only when owned by us or root); creates "<name>.tmp-<random>" in it
/// with O_CREAT|O_EXCL|O_NOFOLLOW and `mode`; fills it; fsyncs it when `durable`; renames it
/// over the name (a symlink there is replaced, never written through; its target is untouched);
/// fsyncs the folder when `durable`. On failure the temporary is removed and file_write_error
/// names the path and the system's reason.
void write_file_with(const std::filesystem::path& path, const file_filler& fill, bool durable,
                     unsigned mode = 0644);

/// Writes through write_file_with, so a reader sees the old file or the new one, never half of
/// one. Creates parent folders. Throws file_write_error.
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

/// Copies `from` to `to` through write_file_with (mode 0644). Throws file_write_error.
void copy_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to);

/// Hard-links `from` at `to` (replacing it), or copies it with copy_file_atomic where a link
/// cannot be made (another file system). Creates parent folders.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to);

/// `path` made absolute with its links resolved as far as it exists (weakly_canonical), or
/// only normalised where that fails. How the harness's --root and the paths held against it
/// are resolved, everywhere.
std::filesystem::path resolved_path(const std::filesystem::path& path);

/// Whether `path`, once resolved, lies in `root` (already resolved) or is `root` itself.
bool lies_within(const std::filesystem::path& path, const std::filesystem::path& root);

/// Resolves `relative` against `base`. Throws std::invalid_argument when it is
/// absolute or, after normalisation (.., symlinks of existing parts), lies outside base.
std::filesystem::path resolve_inside(const std::filesystem::path& base,
                                     const std::string& relative);

}  // namespace cuopt
