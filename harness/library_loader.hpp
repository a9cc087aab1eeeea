#pragma once
/// A vendor library (cuBLAS, cuBLASLt) loaded at run time, never linked, so the harness still
/// starts where there is none: dlopen of the first soname that opens and has every entry point
/// the harness calls, and the one message that names every soname tried when none loads. Each
/// library's own file (cublas_library, cublaslt_library) lists its sonames and entry points.

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuopt {

/// No vendor library could be loaded (or a handle could not be made): what() says what was tried.
class vendor_library_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Looks entry points up in one opened library and remembers the first required one missing.
class symbol_resolver {
  public:
    explicit symbol_resolver(void* library) : m_library(library) {}
    /// A required entry point: without it the library is not used.
    template <typename Fn>
    void get(Fn*& fn, const char* symbol) {
        fn = reinterpret_cast<Fn*>(address(symbol));
        if (!fn && m_missing.empty()) m_missing = symbol;
    }
    /// An entry point the harness does without (null where the library lacks it).
    template <typename Fn>
    void get_optional(Fn*& fn, const char* symbol) {
        fn = reinterpret_cast<Fn*>(address(symbol));
    }
    /// The first required entry point not found; "" when all were.
    const std::string& missing() const { return m_missing; }

  private:
    void* address(const char* symbol) const;

    void* m_library;
    std::string m_missing;
};

/// Opens the first of `sonames` that loads and in which `resolve` finds every required entry
/// point, and returns that soname; the library stays loaded for the life of the process.
/// Throws vendor_library_error("<what> not found: tried libx.so.13 (why), libx.so (it has no
/// f), ...").
std::string load_first_library(const std::string& what, const std::vector<std::string>& sonames,
                               const std::function<void(symbol_resolver&)>& resolve);

/// "CUBLAS_STATUS_INVALID_VALUE (the library's text)" from the library's own status name and
/// string (either may be null), else "<what> status 7 (no description)".
std::string describe_library_status(const char* name, const char* text, const std::string& what,
                                    int status);

}  // namespace cuopt
