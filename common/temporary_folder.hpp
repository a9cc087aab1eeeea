#pragma once
/// A fresh folder for one job's scratch files: made by mkdtemp (a name nobody can predict,
/// mode 0700, so nobody else can plant or read anything in it) and removed with everything in
/// it when the owner goes. Never a fixed or pid-derived name in a folder others can write.

#include <filesystem>
#include <string>

namespace cuopt {

class temporary_folder {
  public:
    /// Makes PARENT/PREFIX-XXXXXX (PARENT: $TMPDIR, else /tmp, when empty). Throws
    /// file_write_error naming the folder and the system's reason.
    explicit temporary_folder(const std::string& prefix, const std::filesystem::path& parent = {});
    /// Removes the folder and its contents; never throws.
    ~temporary_folder();
    temporary_folder(temporary_folder&& other) noexcept;
    temporary_folder& operator=(temporary_folder&& other) noexcept;
    temporary_folder(const temporary_folder&) = delete;
    temporary_folder& operator=(const temporary_folder&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

  private:
    void remove() noexcept;
    std::filesystem::path m_path;
};

}  // namespace cuopt
