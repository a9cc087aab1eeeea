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
#include "common/inputs_key.hpp"
#include "common/name_table.hpp"

namespace cuopt {

/// A scalar argument's value as the request gives it: an exact integer (signed, or
/// unsigned above 2^63) or a real number.
using scalar_number = std::variant<std::int64_t, std::uint64_t, double>;

/// What the launches other than the checked one see in an input buffer. `perturbed`: a file
/// input is cyclically rotated by a different shift every launch (same values, other places),
/// so a kernel that remembers an earlier launch's result gains nothing; the checked launch
/// sees the file exactly. A generator's values are governed by timing.fresh_inputs.
/// `as_given`: every launch sees the input as given (a generator is not regenerated: every
/// launch sees the checked launch's values).
enum class timing_inputs { perturbed, as_given };

inline constexpr auto k_timing_inputs = make_name_table<timing_inputs>(
    {{timing_inputs::perturbed, "perturbed"}, {timing_inputs::as_given, "as_given"}});

/// An output the harness checks against the oracle itself, on the GPU (support_kernels'
/// compare, element_check.h's rule), instead of leaving the bytes to the optimizer: only the
/// tally comes back, and the output file is written only when the check fails.
struct output_check_spec {
    std::filesystem::path expected_file;  // count x dtype bytes, the oracle's
    std::string expected_sha256;          // the harness refuses a file with another digest
    double atol = 0, rtol = 0, rms_atol = 0;
};

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
    std::optional<output_check_spec> check;  // outputs only
    // As the request gives it (buffers with an input only); perturbed_for_timing() decides.
    std::optional<timing_inputs> timing_inputs_mode;
    /// A perturbed file input's rotations under the request's inputs_key (set by the reader):
    /// absent, the public rotation_shift sequence.
    std::optional<std::array<std::uint32_t, 8>> rotation_key;
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

/// The vendor library a request calls instead of compiling a kernel. cub: CUB, through the
/// small launcher library built beside the harness (libcuopt_cub.so).
enum class vendor_library { cublas, cublaslt, cub };
inline constexpr auto k_vendor_libraries =
    make_name_table<vendor_library>({{vendor_library::cublas, "cublas"},
                                     {vendor_library::cublaslt, "cublaslt"},
                                     {vendor_library::cub, "cub"}});

/// A vendor library's routine that a case calls instead of launching a kernel (the
/// baseline a hand-written kernel is measured against). The gemms: C = A x B, alpha 1, beta 0;
/// e4m3_gemm (cuBLASLt) scales the product: D = scale_a * scale_b * (A x B). segmented_sum
/// (CUB): per-row sums y[r] = sum_j x[r][j] of a row-major rows x cols f32 x.
enum class vendor_op { sgemm, dgemm, hgemm, e4m3_gemm, segmented_sum };
/// row_major_bt: A row-major m x k, B stored row-major n x k (transposed, as a linear layer's
/// weight: C[i][j] = sum_p A[i][p] * B[j][p]), C row-major m x n; cuBLASLt's FP8 "TN" form.
enum class matrix_layout { row_major, col_major, row_major_bt };

inline constexpr auto k_vendor_ops =
    make_name_table<vendor_op>({{vendor_op::sgemm, "sgemm"},
                                {vendor_op::dgemm, "dgemm"},
                                {vendor_op::hgemm, "hgemm"},
                                {vendor_op::e4m3_gemm, "e4m3_gemm"},
                                {vendor_op::segmented_sum, "segmented_sum"}});
inline constexpr auto k_matrix_layouts =
    make_name_table<matrix_layout>({{matrix_layout::row_major, "row_major"},
                                    {matrix_layout::col_major, "col_major"},
                                    {matrix_layout::row_major_bt, "row_major_bt"}});

/// The library that provides an op: cuBLASLt for e4m3_gemm, CUB for segmented_sum, cuBLAS for
/// the others.
inline vendor_library vendor_library_of(vendor_op op) {
    return op == vendor_op::e4m3_gemm       ? vendor_library::cublaslt
           : op == vendor_op::segmented_sum ? vendor_library::cub
                                            : vendor_library::cublas;
}

/// Whether an op sums rows (rows, cols, x, y) rather than multiplies matrices (m, n, k, a, b, c).
inline bool is_row_sum(vendor_op op) {
    return op == vendor_op::segmented_sum;
}

/// The element type of A and B for an op (x for segmented_sum): f32, f64, f16, f8e4m3.
inline dtype vendor_input_dtype(vendor_op op) {
    switch (op) {
        case vendor_op::dgemm:
            return dtype::f64;
        case vendor_op::hgemm:
            return dtype::f16;
        case vendor_op::e4m3_gemm:
            return dtype::f8e4m3;
        default:
            return dtype::f32;
    }
}

/// Whether C (y) may be of dtype `t`: A's dtype for the cuBLAS gemms and segmented_sum; bf16 or
/// f32 for e4m3_gemm.
inline bool vendor_output_dtype_ok(vendor_op op, dtype t) {
    if (op == vendor_op::e4m3_gemm) return t == dtype::bf16 || t == dtype::f32;
    return t == vendor_input_dtype(op);
}

/// What vendor_output_dtype_ok accepts, for messages: "f32", "bf16 or f32".
inline std::string vendor_output_dtypes(vendor_op op) {
    return op == vendor_op::e4m3_gemm ? "bf16 or f32"
                                      : std::string(dtype_name(vendor_input_dtype(op)));
}

/// cuBLASLt's FP8 matmul wants m, n and k multiples of this.
inline constexpr int k_fp8_gemm_multiple = 16;

/// What the request and manifest readers refuse in an op's pairing with a library and a
/// layout: the field at fault ("op" or "layout") and why, in one line; nullopt when it pairs.
/// e4m3_gemm takes only row_major_bt, segmented_sum only row_major.
struct vendor_pairing_problem {
    const char* field;
    std::string message;
};
inline std::optional<vendor_pairing_problem> check_vendor_pairing(vendor_op op,
                                                                  vendor_library library,
                                                                  matrix_layout layout) {
    const std::string name = k_vendor_ops.name(op);
    if (vendor_library_of(op) != library) {
        std::string ops;
        for (const auto& [value, word] : k_vendor_ops.entries)
            if (vendor_library_of(value) == library)
                ops += (ops.empty() ? "" : ", ") + std::string(word);
        return vendor_pairing_problem{
            "op", name + " is a " + k_vendor_libraries.name(vendor_library_of(op)) +
                      " op but the library is " + k_vendor_libraries.name(library) +
                      "; expected one of " + ops};
    }
    if (op == vendor_op::e4m3_gemm && layout != matrix_layout::row_major_bt)
        return vendor_pairing_problem{
            "layout",
            "e4m3_gemm takes only row_major_bt (A row-major m x k, B row-major n x k, "
            "C row-major m x n: the TN form cuBLASLt's FP8 needs); got " +
                std::string(k_matrix_layouts.name(layout))};
    if (op == vendor_op::segmented_sum && layout != matrix_layout::row_major)
        return vendor_pairing_problem{
            "layout",
            "segmented_sum takes only row_major (x row-major rows x cols, one sum per "
            "row into y); got " +
                std::string(k_matrix_layouts.name(layout))};
    return std::nullopt;
}

/// Why one of m, n, k (`value`) does not suit `op`, in one line; "" when it does.
inline std::string vendor_dimension_problem(vendor_op op, std::int64_t value) {
    if (op != vendor_op::e4m3_gemm || value % k_fp8_gemm_multiple == 0) return "";
    return std::to_string(value) + " is not a multiple of " + std::to_string(k_fp8_gemm_multiple) +
           "; cuBLASLt's FP8 e4m3_gemm needs m, n and k multiples of 16";
}

struct vendor_call {
    vendor_op op = vendor_op::sgemm;
    matrix_layout layout = matrix_layout::row_major;
    // The gemms: their sizes and the names of buffer args of the case: A (m x k), B (k x n;
    // n x k for row_major_bt), C (m x n).
    int m = 0, n = 0, k = 0;
    std::string a, b, c;
    // e4m3_gemm only: names of f32 scalar args of the case; "" for 1.0.
    std::string scale_a, scale_b;
    // segmented_sum only: its sizes and buffer args, x (rows x cols, row-major) and y (rows).
    int rows = 0, cols = 0;
    std::string x, y;
};

struct run_case {
    std::string name;
    bool measure = true;
    std::uint64_t launch_index_base = 0;  // launch index of the case's first launch
    launch_config launch;                 // kernel requests only
    std::optional<vendor_call> vendor;    // vendor requests only: what each launch calls
    std::vector<kernel_arg> args;
};

/// How many timed launches a case gets: always `iterations` (fixed), or as many as it takes for
/// the median's noise to reach target_rse (adaptive), with `iterations` as the cap.
enum class timing_mode { fixed, adaptive };
inline constexpr auto k_timing_modes = make_name_table<timing_mode>(
    {{timing_mode::fixed, "fixed"}, {timing_mode::adaptive, "adaptive"}});

/// Which clock times a launch: CUPTI's kernel records where CUPTI loads and is free (auto),
/// or CUDA events only (events). Both channels are measured whenever CUPTI is on.
enum class timer_choice { automatic, events };
inline constexpr auto k_timer_choices = make_name_table<timer_choice>(
    {{timer_choice::automatic, "auto"}, {timer_choice::events, "events"}});

struct timing_config {
    int warmup = 10;
    /// fixed: the timed launches; adaptive: the most timed launches. The checked launch
    /// (outputs kept) is launch checked_offset() after the case's base.
    int iterations = 100;
    bool flush_l2 = true;
    bool fresh_inputs = false;
    timing_mode mode = timing_mode::fixed;
    timer_choice timer = timer_choice::automatic;
    // adaptive only: stop once at least min_samples samples and min_time_ms of summed sample
    // time are in and the median's relative standard error is at most target_rse.
    int min_samples = 20;
    double min_time_ms = 10;
    double target_rse = 0.005;
    /// The 0-based position among the timed launches whose outputs are kept (the checked
    /// launch); absent: the last. Fixed mode: below iterations; adaptive: below min_samples,
    /// the timed launches an adaptive loop always takes.
    std::optional<int> checked_launch;
    /// The checked launch's position is the inputs key's secret (keyed_checked_position of the
    /// request's key and round): the request says only this, never the position, since a
    /// kernel's compile can read the request. The reader sets checked_launch from the key.
    bool checked_launch_keyed = false;

    /// The checked launch of a measured case, counted from the case's base: launch 0 is the
    /// first (untimed) launch, warm-up launches follow, then the timed ones.
    std::uint64_t checked_offset() const {
        return static_cast<std::uint64_t>(warmup) +
               static_cast<std::uint64_t>(checked_launch ? *checked_launch + 1 : iterations);
    }
};

struct kernel_spec {
    std::string source;                 // the text itself
    std::string source_name;            // file name or "inline.cu"
    std::filesystem::path source_path;  // the file it was read from; empty for an inline source
    /// What NVRTC's messages call the source (the request's kernel.source_name): the user's
    /// own file where source_file is a copy of it. Empty: source_name.
    std::string display_name;
    std::string entry;
    std::vector<std::string> compile_options;
    std::vector<std::pair<std::string, std::string>> defines;  // sorted by name
    /// Compile for the GPU's architecture-specific target (sm_90a on an sm_90 GPU: wgmma,
    /// setmaxnreg), the manifest's arch_specific; the cubin then runs on that one architecture.
    bool arch_specific = false;

    /// The name NVRTC's log and the harness's messages give the source.
    const std::string& shown_name() const {
        return display_name.empty() ? source_name : display_name;
    }
};

struct request {
    std::filesystem::path file;    // the request JSON
    std::filesystem::path folder;  // its folder: the root for every relative path
    /// The folder tree the harness may read (its --root; a worker's is the run folder): a
    /// check's expected_file may lie anywhere in it, outside the request's folder, so the
    /// oracle is never in the folder a candidate's compile can read.
    std::filesystem::path root;
    bool upstream_layout = false;  // converted from the v0.0 single-case layout
    /// The run's secret that keys every generated input (and file rotation); absent: the public
    /// generator. `inputs_key_id` names the key (never the key) for the response.
    std::optional<inputs_key_ref> inputs_key;
    std::string inputs_key_id;
    kernel_spec kernel;                    // empty for a vendor request
    std::optional<vendor_library> vendor;  // set: every case has a vendor_call, no kernel
    int device = 0;
    timing_config timing;
    std::vector<run_case> cases;
};

}  // namespace cuopt
