#pragma once
/// Shared by the fuzz targets (libFuzzer): a scratch folder per process holding the files
/// a request or manifest may name, and the input written into it. A target catches only
/// the documented error types of what it drives; anything else escapes and is a finding.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.hpp"

namespace cuopt::fuzz {

/// /tmp/cuopt-fuzz-PID with k.cu, a 64-float x.bin and an 8-byte raw.bin in it.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        const auto d =
            std::filesystem::temp_directory_path() / ("cuopt-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        write_file_atomic(
            d / "k.cu", "extern \"C\" __global__ void twice(const float* x, float* y, int n) {}\n");
        const std::vector<float> x(64, 1.5f);
        write_file_atomic(d / "x.bin", x.data(), x.size() * sizeof(float));
        write_file_atomic(d / "raw.bin", std::string(8, '\x07'));
        return d;
    }();
    return dir;
}

inline std::filesystem::path write_input(const char* name, const std::uint8_t* data,
                                         std::size_t size) {
    const auto file = scratch() / name;
    write_file_atomic(file, data, size);
    return file;
}

}  // namespace cuopt::fuzz
