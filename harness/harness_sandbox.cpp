#include "harness/harness_sandbox.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "common/file_io.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

int add_loaded_folder(dl_phdr_info* info, std::size_t, void* data) {
    if (info->dlpi_name && info->dlpi_name[0] == '/')
        static_cast<std::set<fs::path>*>(data)->insert(fs::path(info->dlpi_name).parent_path());
    return 0;
}

// The folders /etc/ld.so.conf names (following its `include` globs): where the loader's cache
// finds libcuda and NVML (/usr/local/nvidia/lib64 on a driver container, for instance).
void add_loader_folders(const fs::path& conf, std::set<fs::path>& folders, int depth = 0) {
    std::ifstream in(conf);
    std::string line;
    while (depth < 4 && std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string first, pattern;
        if (!(words >> first)) continue;
        if (first != "include") {
            if (first[0] == '/') folders.insert(first);
            continue;
        }
        while (words >> pattern) {
            glob_t found{};
            if (::glob(pattern.c_str(), 0, nullptr, &found) == 0)
                for (std::size_t i = 0; i < found.gl_pathc; ++i)
                    add_loader_folders(found.gl_pathv[i], folders, depth + 1);
            ::globfree(&found);
        }
    }
}

std::vector<landlock_rule> read_rules(const std::set<fs::path>& paths) {
    std::vector<landlock_rule> rules;
    for (const fs::path& p : paths) rules.push_back({p, landlock_access::read});
    return rules;
}

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

std::vector<landlock_rule> library_rules() {
    std::set<fs::path> folders{
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/lib",
        "/lib64",           "/usr/lib",        "/usr/lib64",        "/usr/local/lib"};
    if (const char* v = std::getenv("LD_LIBRARY_PATH"); v && *v) {
        const std::string list = v;
        std::size_t start = 0;
        while (start <= list.size()) {
            std::size_t end = list.find(':', start);
            if (end == std::string::npos) end = list.size();
            if (end > start) folders.insert(list.substr(start, end - start));
            start = end + 1;
        }
    }
    add_loader_folders("/etc/ld.so.conf", folders);
    dl_iterate_phdr(add_loaded_folder, &folders);
    return read_rules(folders);
}

std::vector<landlock_rule> driver_rules() {
    std::vector<landlock_rule> rules;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/dev", ec))
        if (entry.path().filename().string().rfind("nvidia", 0) == 0)
            rules.push_back({entry.path(), landlock_access::device});
    rules.push_back({"/dev/null", landlock_access::device});
    // Seen opened by libcuda 580, CUPTI and NVML on an H200 (an LD_PRELOAD trace of open,
    // fopen and opendir; .probe/ in the evidence). /proc/self/... name this process's own
    // entries (a rule binds the file, not the name): never its environ, cmdline or fds.
    append(rules, read_rules({"/dev/urandom", "/proc/driver/nvidia", "/proc/self/maps",
                              "/proc/self/status", "/proc/cpuinfo", "/proc/devices",
                              "/proc/sys/vm/mmap_min_addr", "/proc/sys/kernel/osrelease",
                              "/proc/sys/crypto/fips_enabled", "/sys/devices", "/sys/bus/pci",
                              "/sys/module/nvidia", "/etc/nvidia", "/usr/share/nvidia",
                              "/etc/localtime"}));
    // libcuda names the threads it starts (pthread_setname_np writes
    // /proc/self/task/TID/comm) and fails cuInit with CUDA_ERROR_OPERATING_SYSTEM when it
    // cannot: writing, never reading, this process's own task entries.
    rules.push_back({"/proc/self/task", landlock_access::write_only});
    // The driver's cache of JIT-compiled PTX (CUPTI's and the libraries' kernels).
    const char* cache = std::getenv("CUDA_CACHE_PATH");
    const char* home = std::getenv("HOME");
    const fs::path compute_cache = cache && *cache ? fs::path(cache)
                                   : home && *home ? fs::path(home) / ".nv" / "ComputeCache"
                                                   : fs::path();
    if (!compute_cache.empty()) {
        std::error_code ec;
        fs::create_directories(compute_cache, ec);
        if (!ec) rules.push_back({compute_cache, landlock_access::read_write});
    }
    return rules;
}

std::vector<landlock_rule> harness_rules(const fs::path& root,
                                         const std::vector<fs::path>& writable, bool compile_only) {
    std::vector<landlock_rule> rules{{root, landlock_access::read_write},
                                     {harness_executable(), landlock_access::execute}};
    // Starting it again also runs its ELF interpreter (ld-linux), which the kernel opens for
    // execution too.
    Dl_info interpreter{};
    if (::dladdr(reinterpret_cast<void*>(::getauxval(AT_BASE)), &interpreter) &&
        interpreter.dli_fname)
        rules.push_back({interpreter.dli_fname, landlock_access::execute});
    for (const fs::path& w : writable) rules.push_back({w, landlock_access::read_write});
    append(rules, toolkit_rules());
    append(rules, library_rules());
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
        const fs::path cache =
            o.cache_dir.empty() ? cubin_cache::default_folder() : fs::path(o.cache_dir);
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
    return std::string(what) + " " + path.string() + " is outside " + the_root().string() +
           ", the folder this harness is confined to (--root)";
}

}  // namespace cuopt
