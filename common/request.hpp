#pragma once
/// The parsed, validated request: plain immutable data, every path already
/// resolved inside the request folder and every size checked, so the compile and
/// timing code never look at JSON again.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/dtype.hpp"
#include "common/generator_spec.hpp"
#include "common/name_table.hpp"

namespace cuopt {

/// A scalar argument's value as the request gives it: an exact integer (signed, or
/// unsigned above 2^63) or a real number.
using scalar_number = std::variant<std::int64_t, std::uint64_t, double>;

/// What the launches other than the checked one see in an input buffer. `perturbed`: a file
/// input is cyclically rotated by a different shift every launch (same values, other places),
/// so a kernel that remembers an earlier launch's result gains nothing; the checked launch
/// sees the file exactly. A generator's values are governed by timing.fresh_inputs.
/// `as_given`: every launch sees the input as given (a generator is not regenerated).
enum class timing_inputs { perturbed, as_given };

inline constexpr auto k_timing_inputs = make_name_table<timing_inputs>(
    {{timing_inputs::perturbed, "perturbed"}, {timing_inputs::as_given, "as_given"}});

struct kernel_arg {
    std::string name;
    dtype type = dtype::f32;
    bool is_buffer = false;
    // buffer
    std::uint64_t count = 0;
    std::optional<std::filesystem::path> input_file;
    std::optional<generator_spec> generator;
    std::optional<std::filesystem::path> output_file;
    std::optional<std::filesystem::path> input_dump_file;
    std::optional<timing_inputs>
        timing_inputs_mode;  // as the request gives it (buffers with input)
    // scalar
    scalar_number scalar = 0.0;               // as written in the request
    std::vector<unsigned char> scalar_bytes;  // what the kernel receives (set by the reader)

    std::uint64_t bytes() const { return count * dtype_size(type); }
    bool has_input() const { return input_file || generator; }
    bool is_output() const { return output_file.has_value(); }
    /// The timing_inputs in force: as given, else perturbed for a floating-point input_file
    /// buffer (rotating integers could turn indices or sizes into wrong ones) and as_given
    /// otherwise.
    bool perturbed_for_timing() const {
        if (timing_inputs_mode) return *timing_inputs_mode == timing_inputs::perturbed;
        return input_file.has_value() && is_float(type);
    }
};

struct launch_config {
    std::array<unsigned, 3> grid{1, 1, 1};
    std::array<unsigned, 3> block{1, 1, 1};
    unsigned dynamic_shared_bytes = 0;
};

struct run_case {
    std::string name;
    bool measure = true;
    std::uint64_t launch_index_base = 0;  // launch index of the case's first launch
    launch_config launch;
    std::vector<kernel_arg> args;
};

struct timing_config {
    int warmup = 10;
    int iterations = 100;
    bool flush_l2 = true;
    bool fresh_inputs = false;
};

struct kernel_spec {
    std::string source;                 // the text itself
    std::string source_name;            // file name or "<inline>"
    std::filesystem::path source_path;  // the file it was read from; empty for an inline source
    std::string entry;
    std::vector<std::string> compile_options;
    std::vector<std::pair<std::string, std::string>> defines;  // sorted by name
};

struct request {
    std::filesystem::path file;    // the request JSON
    std::filesystem::path folder;  // its folder: the root for every relative path
    bool upstream_layout = false;  // converted from the v0.0 single-case layout
    kernel_spec kernel;
    int device = 0;
    timing_config timing;
    std::vector<run_case> cases;
};

}  // namespace cuopt
