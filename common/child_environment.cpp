#include "common/child_environment.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace cuopt {

namespace {

// Exactly these names.
constexpr std::string_view k_names[] = {
    "PATH",              // a bare "ncu" or a wrapper's own commands are looked up on it
    "HOME",              // the cubin cache's and the tools' default folders
    "LANG",              // messages and number formats as the user reads them
    "TMPDIR",            // where ncu and compute-sanitizer put their temporary files and locks
    "XDG_CACHE_HOME",    // the harness's cubin cache
    "LD_LIBRARY_PATH",   // where the CUDA libraries (NVRTC, CUPTI, cuBLAS) were installed
    "CUDAToolkit_ROOT",  // one of the roots the harness looks in for the toolkit's headers
    "ASAN_OPTIONS",      // a sanitized build's settings (tools/sanitize.sh: no leak check, and a
    "UBSAN_OPTIONS",     // SIGSEGV stays a signal, as the crash tests expect)
    "LSAN_OPTIONS",
};

// Every name that starts with one of these.
constexpr std::string_view k_prefixes[] = {
    "LC_",     // the locale's categories
    "CUDA_",   // the driver's and runtime's (CUDA_VISIBLE_DEVICES, CUDA_CACHE_PATH, CUDA_HOME,
               // CUDA_PATH, CUDA_MODULE_LOADING...) and the harness's own CUDA_HARNESS_*
    "CUOPT_",  // the project's (CUOPT_DIE_WITH_PARENT) and its tests' doubles (CUOPT_FAKE_*)
    "NV_COMPUTE_PROFILER_",   // ncu's, e.g. NV_COMPUTE_PROFILER_LOCAL_CONNECTION_OVERRIDE
    "NV_COMPUTE_SANITIZER_",  // compute-sanitizer's, e.g. ..._LOCAL_CONNECTION_OVERRIDE
};

// A name that says one of these is a credential, whatever its prefix.
constexpr std::string_view k_secret_words[] = {"KEY",   "TOKEN", "SECRET",
                                               "PASSW", "AUTH",  "CREDENTIAL"};

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

bool names_a_secret(std::string_view name) {
    std::string upper(name);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return std::any_of(std::begin(k_secret_words), std::end(k_secret_words),
                       [&](std::string_view w) { return upper.find(w) != std::string::npos; });
}

}  // namespace

bool passed_to_child(std::string_view name) {
    const bool listed =
        std::find(std::begin(k_names), std::end(k_names), name) != std::end(k_names) ||
        std::any_of(std::begin(k_prefixes), std::end(k_prefixes),
                    [&](std::string_view p) { return starts_with(name, p); });
    return listed && !names_a_secret(name);
}

std::vector<std::string> scrubbed_entries(const char* const* environment) {
    std::vector<std::string> out;
    for (const char* const* e = environment; e && *e; ++e) {
        const std::string_view entry(*e);
        const std::size_t eq = entry.find('=');
        if (eq != std::string_view::npos && passed_to_child(entry.substr(0, eq)))
            out.emplace_back(entry);
    }
    return out;
}

scrubbed_environment::scrubbed_environment() : m_entries(scrubbed_entries(::environ)) {
    for (std::string& e : m_entries) m_pointers.push_back(e.data());
    m_pointers.push_back(nullptr);
}

}  // namespace cuopt
