#pragma once
/// Linux Landlock, the kernel's unprivileged access control (since 5.13): a process names the
/// folders and files it may still use, then restricts itself, and no later code in it (a
/// compiler reading an `#include`, a library, a kernel's host side) can reach anything else.
/// Layers only ever narrow. Uses the highest ABI the running kernel offers; needs no library.
/// Where the kernel has no Landlock the caller gets the reason, never an exception.

#include <filesystem>
#include <string>
#include <vector>

namespace cuopt {

/// What one rule grants beneath its path (a folder's whole tree, or one file).
enum class landlock_access {
    read,        // open files for reading, list folders
    read_write,  // also create, write, truncate, rename and remove files and folders
    device,      // read and write a device file, and its ioctls (the GPU's /dev nodes)
    execute,     // read and execute a file (a program this process starts)
    write_only,  // open existing files for writing, nothing else (the driver names its threads
                 // through /proc/self/task/TID/comm)
};

struct landlock_rule {
    std::filesystem::path path;
    landlock_access access = landlock_access::read;
};

/// How a process ended up confined: mode "landlock" with the ABI and what it may read and
/// write, or mode "none" with the reason (the response's `confinement` block).
struct confinement {
    std::string mode = "none";
    int abi = 0;
    std::string reason;
    std::vector<std::string> read;   // readable trees and files (devices included)
    std::vector<std::string> write;  // writable trees
    bool confined() const { return mode == "landlock"; }
};

/// The Landlock ABI the running kernel offers; 0 with `why` set when it offers none (an old
/// kernel, Landlock left out of the LSM list, a container's seccomp profile).
int landlock_abi(std::string* why);

/// Sets no_new_privs, then restricts the calling thread (and every thread and child it starts
/// later) to `rules`: no other file can be opened, created or removed, and with
/// `deny_network`, no TCP bind or connect, no abstract UNIX socket and no signal outside the
/// process. A rule whose path does not exist is left out (and not listed). Each rule's path
/// stays open (O_PATH) for the process's life: procfs makes a new inode for an entry evicted
/// from the dentry cache, which the rule (bound to the old inode) would no longer match. Call it
/// before any other thread starts. Where Landlock is missing, returns mode "none" and restricts
/// nothing. Throws std::runtime_error when the kernel refuses a rule or the restriction itself.
confinement restrict_self(const std::vector<landlock_rule>& rules, bool deny_network);

}  // namespace cuopt
