#pragma once
/// Shared by the fuzz targets (libFuzzer): a scratch folder per process holding the files
/// a request or manifest may name, the input written into it, and the invariant checks. A
/// target catches only the documented error types of what it drives; anything else escapes
/// and is a finding, and so is a broken invariant (fail() aborts, libFuzzer keeps the input).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "common/temporary_folder.hpp"

namespace cuopt::fuzz {

/// A fresh folder (mkdtemp: $TMPDIR/cuopt-fuzz-XXXXXX, no name another user can plant first,
/// removed at exit) with k.cu, a 64-float x.bin, an 8-byte raw.bin and a 16-float sub/x.bin in
/// it (a second x.bin: two inputs of one name in different folders).
inline const std::filesystem::path& scratch() {
    static const temporary_folder folder("cuopt-fuzz");
    static const std::filesystem::path dir = [] {
        const std::filesystem::path& d = folder.path();
        write_file_atomic(
            d / "k.cu", "extern \"C\" __global__ void twice(const float* x, float* y, int n) {}\n");
        const std::vector<float> x(64, 1.5f);
        write_file_atomic(d / "x.bin", x.data(), x.size() * sizeof(float));
        write_file_atomic(d / "raw.bin", std::string(8, '\x07'));
        write_file_atomic(d / "sub" / "x.bin", x.data(), 16 * sizeof(float));
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

/// The longest error message a reader may give: room for a file name, a field, a few quoted
/// values (quote_value shows 200 characters of each) and an expression (1000 at most), far
/// below a hostile 64 KiB value echoed whole.
inline constexpr std::size_t k_max_message_bytes = 2048;

/// A broken invariant: says which and with what (quoted, cut), then aborts, so that libFuzzer
/// reports a crash and saves the input as build-asan/crash-TARGET-*.
[[noreturn]] inline void fail(const std::string& invariant, std::string_view detail) {
    std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", invariant.c_str(),
                 quote_value(detail, 600).c_str());
    std::abort();
}

/// A refusal's message is one bounded line, however long the value it is about.
inline void check_message(const std::exception& e) {
    if (const std::size_t n = std::strlen(e.what()); n > k_max_message_bytes)
        fail("a message of " + std::to_string(n) + " bytes (over " +
                 std::to_string(k_max_message_bytes) + ")",
             e.what());
}

/// A name or path a reader accepted is text: no U+0000 (a C string would stop there) and
/// valid UTF-8 (no lone surrogate).
inline void check_text(const std::string& what, std::string_view s) {
    if (s.find('\0') != std::string_view::npos) fail(what + " holds U+0000", s);
    if (const std::string why = text_problem(s); !why.empty()) fail(what + " " + why, s);
}

}  // namespace cuopt::fuzz
