#include "harness/harness_sandbox.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "common/sandbox_rules.hpp"
#include "harness/cub_library.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

confinement& the_confinement() {
    static confinement c = [] {
        confinement none;
        none.reason = "not confined";
        return none;
    }();
    return c;
}

// ncu sets NV_TPS_LAUNCH_TOKEN and NV_NSIGHT_INJECTION_* for the process it launches (seen on
// the H200, ncu 2025.3); CUDA_INJECTION64_PATH appears only once its preloaded library runs.
bool under_profiler() {
    for (const char* name :
         {"CUDA_INJECTION64_PATH", "NV_TPS_LAUNCH_TOKEN", "NV_NSIGHT_INJECTION_PORT_BASE"})
        if (const char* v = std::getenv(name); v && *v) return true;
    return false;
}

bool& compiles_confined_flag() {
    static bool confined = false;
    return confined;
}

fs::path& the_root() {
    static fs::path root;
    return root;
}

void append(std::vector<landlock_rule>& to, const std::vector<landlock_rule>& rules) {
    to.insert(to.end(), rules.begin(), rules.end());
}

}  // namespace

std::vector<landlock_rule> toolkit_rules() {
    const fs::path include = toolkit_include_dir();
    return {{include, landlock_access::read}, {include.parent_path(), landlock_access::read}};
}

std::vector<landlock_rule> harness_rules(const fs::path& root,
                                         const std::vector<fs::path>& writable, bool compile_only) {
    std::vector<landlock_rule> rules{{root, landlock_access::read_write}};
    append(rules, program_rules(harness_executable()));  // confined compiles start it again
    for (const fs::path& w : writable) rules.push_back({w, landlock_access::read_write});
    append(rules, toolkit_rules());
    append(rules, library_rules());
    // The bundled CUB launcher beside this binary, read when a cub vendor request loads it.
    for (const std::string& cub : cub_library_paths())
        if (fs::path(cub).is_absolute()) rules.push_back({cub, landlock_access::read});
    if (!compile_only) append(rules, driver_rules());
    return rules;
}

std::vector<landlock_rule> compile_rules(const fs::path& request_folder) {
    std::vector<landlock_rule> rules{{request_folder, landlock_access::read},
                                     {toolkit_include_dir(), landlock_access::read},
                                     {"/etc/ld.so.cache", landlock_access::read}};
    std::error_code ec;
    const std::string& nvrtc = nvrtc_library();  // loaded now, before the child confines itself
    if (!nvrtc.empty()) {
        const fs::path folder = fs::canonical(nvrtc, ec).parent_path();
        for (const auto& entry : fs::directory_iterator(folder, ec))
            if (entry.path().filename().string().rfind("libnvrtc-builtins", 0) == 0)
                rules.push_back({entry.path(), landlock_access::read});
    }
    return rules;
}

const fs::path& harness_executable() {
    static const fs::path exe = fs::read_symlink("/proc/self/exe");
    return exe;
}

fs::path harness_root(const harness_options& o) {
    return resolved_path(!o.root.empty() ? fs::path(o.root)
                         : o.worker      ? fs::current_path()
                                         : fs::absolute(o.request).parent_path());
}

const confinement& confine_harness(const harness_options& o) {
    confinement& c = the_confinement();
    if (o.unconfined) {
        c.reason = "--unconfined was given";
        return c;
    }
    if (under_profiler()) {
        // ncu's injected library binds TCP ports, reads /etc/passwd and /proc/self/cmdline and
        // makes pipes under /tmp (seen with strace on the H200): this process runs unconfined
        // on purpose, and its compiles, the one place a kernel's source reads files, stay
        // confined in their own process.
        c.reason =
            "a profiler is injected (ncu) and needs the network and /tmp; compiles are still "
            "confined";
        std::string why;
        compiles_confined_flag() = landlock_abi(&why) > 0;
        return c;
    }
    const fs::path root = harness_root(o);
    std::vector<fs::path> writable;
    if (!o.worker && !o.request.empty()) {
        const fs::path response = resolved_path(response_path(o));
        if (!lies_within(response, root)) writable.push_back(response.parent_path());
        if (!o.cubin_out.empty()) {
            const fs::path cubin = resolved_path(fs::absolute(o.cubin_out));
            if (!lies_within(cubin, root)) writable.push_back(cubin.parent_path());
        }
    }
    if (!o.no_cache) {
        const fs::path cache = cubin_cache::folder_for(o.cache_dir);
        std::error_code ec;
        fs::create_directories(cache, ec);
        if (!ec) writable.push_back(cache);
    }
    // NVRTC is loaded while its library can still be read (cache keys and responses name its
    // version); where it cannot be, the first compile says why.
    try {
        nvrtc_library();
    } catch (const nvrtc_error&) {
    }
    c = restrict_self(harness_rules(root, writable, o.compile_only), true);
    if (c.confined()) the_root() = root;
    compiles_confined_flag() = c.confined();
    return c;
}

bool compiles_confined() {
    return compiles_confined_flag();
}

bool confine_harness_or_say(const harness_options& o) {
    try {
        const confinement& c = confine_harness(o);
        if (!c.confined())
            std::fprintf(
                stderr, "cuda-harness: warning: not confined (%s)%s\n", c.reason.c_str(),
                compiles_confined() ? "" : ": a kernel's #include can read any file this user can");
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda-harness: cannot confine this process: %s\n", e.what());
        return false;
    }
}

const confinement& process_confinement() {
    return the_confinement();
}

std::string outside_root_problem(const fs::path& path, const char* what) {
    if (the_root().empty() || lies_within(path, the_root())) return "";
    const fs::path target = resolved_path(path);
    const bool linked = target != fs::absolute(path).lexically_normal();
    return std::string(what) + " " + quote_value(path.string()) +
           (linked ? " leads to " + quote_value(target.string()) + ", which" : std::string()) +
           " is outside " + the_root().string() +
           ", the folder this harness is confined to (--root)";
}

}  // namespace cuopt
