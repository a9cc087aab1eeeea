#include "common/sandbox_rules.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/auxv.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

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

void append(std::vector<landlock_rule>& to, const std::vector<landlock_rule>& rules) {
    to.insert(to.end(), rules.begin(), rules.end());
}

}  // namespace

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

std::vector<landlock_rule> program_rules(const fs::path& program) {
    std::vector<landlock_rule> rules{{program, landlock_access::execute}};
    Dl_info interpreter{};
    if (::dladdr(reinterpret_cast<void*>(::getauxval(AT_BASE)), &interpreter) &&
        interpreter.dli_fname)
        rules.push_back({interpreter.dli_fname, landlock_access::execute});
    return rules;
}

}  // namespace cuopt
