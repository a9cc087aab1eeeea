#pragma once
/// What a case leaves: the outputs of its checked launch (copied aside when later timed
/// launches follow it, put back after the loop), written to their files with their sha256 and
/// the count of elements still holding the poison pattern; a reference run's generated inputs
/// dumped as that launch saw them; and the input guard's verdict on which declared inputs the
/// launch wrote into. The case runner's members for this are defined in case_outputs.cpp.

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/request.hpp"
#include "harness/cuda_handles.hpp"

namespace cuopt {

/// One file a case wrote: an output, or an input dump.
struct output_record {
    std::string arg;
    std::string role;  // "output" or "input_dump"
    std::filesystem::path file;
    dtype type = dtype::f32;
    std::uint64_t count = 0;
    std::string sha256;
    std::uint64_t unwritten = 0;  // elements still holding the poison pattern
};

/// Copies `a`'s bytes from the device at `from` into `file` (atomically) and describes them.
output_record save_buffer(const kernel_arg& a, CUdeviceptr from, const std::filesystem::path& file,
                          const char* role);

}  // namespace cuopt
