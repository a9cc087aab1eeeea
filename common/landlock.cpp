#include "common/landlock.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace cuopt {

namespace {

// The kernel's interface (include/uapi/linux/landlock.h), spelled out here because the build
// machine's headers may predate the ABI the running kernel offers.
#ifndef SYS_landlock_create_ruleset
constexpr long SYS_landlock_create_ruleset = 444;
constexpr long SYS_landlock_add_rule = 445;
constexpr long SYS_landlock_restrict_self = 446;
#endif
constexpr std::uint32_t k_create_ruleset_version = 1u << 0;
constexpr int k_rule_path_beneath = 1;

struct ruleset_attr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;  // ABI 4
    std::uint64_t scoped;              // ABI 6
};

struct __attribute__((packed)) path_beneath_attr {
    std::uint64_t allowed_access;
    std::int32_t parent_fd;
};

namespace fs_right {
constexpr std::uint64_t execute = 1ull << 0, write_file = 1ull << 1, read_file = 1ull << 2,
                        read_dir = 1ull << 3, remove_dir = 1ull << 4, remove_file = 1ull << 5,
                        make_dir = 1ull << 7, make_reg = 1ull << 8, refer = 1ull << 13,
                        truncate = 1ull << 14, ioctl_dev = 1ull << 15;
// The rights a rule on a file (not a folder) may carry.
constexpr std::uint64_t on_files = execute | write_file | read_file | truncate | ioctl_dev;
}  // namespace fs_right

constexpr std::uint64_t k_net_bind_tcp = 1ull << 0, k_net_connect_tcp = 1ull << 1;
constexpr std::uint64_t k_scope_abstract_unix = 1ull << 0, k_scope_signal = 1ull << 1;

// Every file-system right the ABI knows: all of them are handled, so all are denied but for
// what a rule grants.
std::uint64_t handled_fs(int abi) {
    std::uint64_t all = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
    if (abi >= 2) all |= fs_right::refer;
    if (abi >= 3) all |= fs_right::truncate;
    if (abi >= 5) all |= fs_right::ioctl_dev;
    return all;
}

std::uint64_t rights_of(landlock_access a) {
    using namespace fs_right;
    switch (a) {
        case landlock_access::read:
            return read_file | read_dir;
        case landlock_access::read_write:
            return read_file | read_dir | write_file | truncate | make_reg | make_dir |
                   remove_file | remove_dir | refer;
        case landlock_access::device:
            return read_file | read_dir | write_file | ioctl_dev;
        case landlock_access::execute:
            return read_file | execute;
        case landlock_access::write_only:  // fopen(..., "w") truncates
            return write_file | truncate;
    }
    return 0;
}

class owned_fd {
  public:
    explicit owned_fd(int fd) : m_fd(fd) {}
    ~owned_fd() {
        if (m_fd >= 0) ::close(m_fd);
    }
    owned_fd(const owned_fd&) = delete;
    owned_fd& operator=(const owned_fd&) = delete;
    int get() const { return m_fd; }

  private:
    int m_fd;
};

// Adds one rule; false when its path does not exist (left out). The path's descriptor is kept
// open on purpose (see restrict_self).
bool add_rule(int ruleset, const landlock_rule& rule, int abi) {
    static std::vector<int> pinned;
    const int fd = ::open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return false;
        throw std::runtime_error("landlock: cannot open " + rule.path.string() + " (" +
                                 std::strerror(errno) + ")");
    }
    pinned.push_back(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::runtime_error("landlock: cannot stat " + rule.path.string());
    std::uint64_t allowed = rights_of(rule.access) & handled_fs(abi);
    if (!S_ISDIR(st.st_mode)) allowed &= fs_right::on_files;
    const path_beneath_attr attr{allowed, fd};
    if (::syscall(SYS_landlock_add_rule, ruleset, k_rule_path_beneath, &attr, 0) != 0)
        throw std::runtime_error("landlock: the kernel refused the rule for " + rule.path.string() +
                                 " (" + std::strerror(errno) + ")");
    return true;
}

}  // namespace

int landlock_abi(std::string* why) {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, k_create_ruleset_version);
    if (abi > 0) return static_cast<int>(abi);
    if (why)
        *why = errno == ENOSYS ? "this kernel has no Landlock (Linux 5.13 or later, built with "
                                 "CONFIG_SECURITY_LANDLOCK)"
               : errno == EOPNOTSUPP
                   ? "Landlock is built into this kernel but not enabled (add landlock to the "
                     "lsm= boot parameter)"
                   : std::string("Landlock is not available here: ") + std::strerror(errno) +
                         " (a container's seccomp profile may block its system calls)";
    return 0;
}

confinement restrict_self(const std::vector<landlock_rule>& rules, bool deny_network) {
    confinement c;
    c.abi = landlock_abi(&c.reason);
    if (c.abi == 0) return c;
    ruleset_attr attr{handled_fs(c.abi), 0, 0};
    std::size_t size = sizeof attr.handled_access_fs;
    if (deny_network && c.abi >= 4) {
        attr.handled_access_net = k_net_bind_tcp | k_net_connect_tcp;
        size = offsetof(ruleset_attr, scoped);
    }
    if (deny_network && c.abi >= 6) {
        attr.scoped = k_scope_abstract_unix | k_scope_signal;
        size = sizeof attr;
    }
    const owned_fd ruleset(
        static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
    if (ruleset.get() < 0)
        throw std::runtime_error(std::string("landlock: cannot create a ruleset (") +
                                 std::strerror(errno) + ")");
    for (const landlock_rule& rule : rules) {
        if (!add_rule(ruleset.get(), rule, c.abi)) continue;
        const bool writes = rule.access == landlock_access::read_write ||
                            rule.access == landlock_access::write_only;
        (writes ? c.write : c.read).push_back(rule.path.string());
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw std::runtime_error(std::string("cannot set no_new_privs (") + std::strerror(errno) +
                                 ")");
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
        throw std::runtime_error(std::string("landlock: the kernel refused to restrict this "
                                             "process (") +
                                 std::strerror(errno) + ")");
    c.mode = "landlock";
    return c;
}

}  // namespace cuopt
