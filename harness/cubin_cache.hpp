#pragma once
/// A folder of compiled kernels keyed by sha256(source, the name its log gives it, entry,
/// NVRTC options, arch, NVRTC version): a hit skips NVRTC entirely and returns the stored cubin,
/// log and ptxas report. Requests whose options add include paths bypass it, because a header's
/// content is not part of the key.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

class cubin_cache {
  public:
    explicit cubin_cache(std::filesystem::path folder) : m_folder(std::move(folder)) {}

    /// $CUDA_HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/cuda-harness, else ~/.cache/cuda-harness,
    /// else $TMPDIR/cuda-harness-cache-<uid> when it is a private folder of ours, else "" (no
    /// cache, said once on stderr); each only when it is ours alone (folder_for). A cache made from
    /// "" finds nothing and stores nothing.
    static std::filesystem::path default_folder();
    /// --cache-dir's folder when `given` is not empty, else default_folder(); either only when
    /// it is ours alone (a real folder, ours, 0700 where we make it, no one else may write it
    /// or a folder above it), else "" with one line on stderr.
    static std::filesystem::path folder_for(const std::string& given);
    static std::string key_for(const kernel_spec& kernel, const std::string& arch,
                               bool confined = false);
    /// False when the source may depend on files outside it: options (-I, --pre-include,
    /// precompiled headers), or a source or -D value that names_outside_files flags (a header
    /// beside the kernel, whose content the key lacks).
    static bool cacheable(const kernel_spec& kernel);

    std::optional<compile_result> find(const std::string& key) const;
    /// Stores a successful result; failures to write are ignored (the cache is an optimisation).
    void store(const compile_result& result) const noexcept;
    const std::filesystem::path& folder() const { return m_folder; }

  private:
    std::filesystem::path m_folder;
};

/// True unless the source can read nothing but the toolkit's headers: every line that holds
/// "include", "import" or "embed" (a directive, __has_include, a comment, a string alike) is a
/// plain `#include <NAME>` (NAME neither absolute nor climbing), under NVRTC's and GCC's
/// readings of line splices, and no trigraph appears. Fail-safe by design: no tokenizer that
/// could drift from the preprocessor's; a false alarm only costs a compile.
bool names_outside_files(std::string_view source);

/// Compiles through the cache when one is given and the kernel is cacheable; with
/// `confined_to`, in a child confined to that folder (compile_confined), under keys of their
/// own: a kernel compiled unconfined (whose #include may have read anything) is never served
/// to a confined run.
compile_result compile_cached(const kernel_spec& kernel, const std::string& arch,
                              const cubin_cache* cache,
                              const std::filesystem::path* confined_to = nullptr);

}  // namespace cuopt
