#pragma once
/// The Landlock rules a confined child needs to run at all, shared by cuda-harness (which
/// confines itself) and cuda-optimizer (whose PyTorch child confines itself before it starts
/// the interpreter): the folders shared libraries load from, and what the NVIDIA driver,
/// CUPTI and NVML read (their /dev nodes, /proc/driver/nvidia, the GPU's /sys entries and a
/// few of the process's own /proc files, found on an H200 with driver 580, not guessed).

#include <filesystem>
#include <vector>

#include "common/landlock.hpp"

namespace cuopt {

/// /etc/ld.so.cache, the system library folders, $LD_LIBRARY_PATH's and the folders of every
/// library loaded so far (read only): where dlopen finds libcuda, NVML, CUPTI and cuBLAS.
std::vector<landlock_rule> library_rules();

/// The NVIDIA driver's device nodes, /proc and /sys entries, and the process's own /proc
/// files it reads.
std::vector<landlock_rule> driver_rules();

/// Execute access to `program` and to the ELF interpreter (ld-linux) this process was loaded
/// with, which the kernel opens for execution too when `program` starts.
std::vector<landlock_rule> program_rules(const std::filesystem::path& program);

}  // namespace cuopt
