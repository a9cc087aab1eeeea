#pragma once
/// The oracle's values that outputs are checked against on the GPU (a request's
/// outputs[].check), read and hashed once per file and kept in this process's memory from one
/// request to the next: a worker checks many candidates against the same file. They stay on
/// the host while a candidate runs, because a kernel can read any address of its context: the
/// case runner uploads them only after the candidate's last launch, and zeroes and frees that
/// copy right after the check.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/request.hpp"

namespace cuopt {

struct expected_values {
    std::vector<unsigned char> bytes;
    std::string sha256;
    double finite_rms = 0;  // of the finite elements (floats), for the reduction rule's term
};

/// The expected values of `arg`'s check, from the cache while the file (same device, inode,
/// size and modification time, under any name: attempt folders hard-link it) is unchanged,
/// else read and hashed again. Throws
/// std::runtime_error naming the file when it cannot be read, holds another number of bytes
/// than count x dtype, or its SHA-256 is not the check's expected_sha256.
const expected_values& expected_values_for(const kernel_arg& arg);

/// Drops every cached file: on a device whose kernels can read pageable host memory, the next
/// candidate must not find the oracle in this process.
void forget_expected_values();

/// How many files are cached and their bytes (tests; the cache keeps at most 2 GiB).
std::pair<std::size_t, std::uint64_t> expected_cache_size();

}  // namespace cuopt
