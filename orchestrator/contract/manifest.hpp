#pragma once
/// The user's contract of success (input_cases.json, schemas/manifest.schema.json):
/// the kernel's arguments in parameter order with how each input is made and how
/// close each output must be, the launch as expressions over case parameters and
/// tunables, and the named correctness and performance cases. Read once, checked
/// whole (every expression evaluated for every case) before anything runs.

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/json_fields.hpp"
#include "common/request.hpp"
#include "orchestrator/contract/integer_expression.hpp"
#include "orchestrator/contract/tolerance.hpp"

namespace cuopt {

enum class arg_kind { input, output, inout, scalar };
enum class case_kind { correctness, performance };

/// How an input buffer is filled: a file (relative to the manifest) or a generator.
struct input_init {
    std::optional<std::filesystem::path> file;
    generator_spec generator;
};

struct manifest_arg {
    std::string name;
    dtype type = dtype::f32;
    arg_kind kind = arg_kind::input;
    std::string count;             // expression (buffers)
    std::string value;             // expression or number literal (scalars)
    bool value_is_number = false;  // a float literal, not an integer expression
    input_init init;               // inputs and inouts
    tolerance tol;                 // outputs and inouts
    /// outputs and inouts: the reduction length's expression over the case's params
    /// (tolerance.reduction_length); "" = none. Set: each case's tolerance comes from the
    /// reduction rule, and `tol` is unused.
    std::string reduction_length;
    std::optional<timing_inputs> timing;  // inputs and inouts; absent: the harness's default

    bool is_buffer() const { return kind != arg_kind::scalar; }
    bool has_input() const { return kind == arg_kind::input || kind == arg_kind::inout; }
    bool has_output() const { return kind == arg_kind::output || kind == arg_kind::inout; }
    /// The tolerance this output is held to in a case with these params: the reduction rule
    /// at the case's reduction length where one is named, else `tol`.
    tolerance tolerance_in(const expression_variables& params) const;
};

/// grid, block and shared bytes as expressions; empty strings inherit the default.
struct launch_expressions {
    std::array<std::string, 3> grid{"1", "1", "1"};
    std::array<std::string, 3> block{"1", "1", "1"};
    std::string dynamic_shared_bytes = "0";
};

/// C = A * B through a vendor library, as expressions over the case's params; the buffers
/// by name (default: the first two inputs and the first output). e4m3_gemm (cuBLASLt) scales
/// the product by two f32 scalar arguments, named. segmented_sum (CUB) sums each row of x
/// (rows x cols) into y (default: the first input and the first output).
struct vendor_baseline_spec {
    std::string library = "cublas";    // cublas, cublaslt, cub (the schema's enum)
    std::string op;                    // sgemm, dgemm, hgemm (cublas); e4m3_gemm (cublaslt);
                                       // segmented_sum (cub)
    std::string layout = "row_major";  // e4m3_gemm: row_major_bt, its only one
    std::string m, n, k;               // the gemms only
    std::string a, b, c;
    std::string scale_a, scale_b;  // e4m3_gemm only; "" for 1
    std::string rows, cols;        // segmented_sum only
    std::string x, y;
};

struct manifest_case {
    std::string name;
    case_kind kind = case_kind::performance;
    expression_variables params;
    std::optional<launch_expressions> launch;               // replaces the manifest's launch
    std::map<std::string, input_init> inputs;               // per-case input overrides
    std::map<std::string, std::filesystem::path> expected;  // output name -> exact expected values
    std::string flops;                                      // expression; "" = not given
    std::optional<vendor_baseline_spec> vendor;             // after the manifest's default
};

struct manifest {
    std::filesystem::path file;
    std::filesystem::path folder;
    std::string description;
    std::map<std::string, std::vector<std::int64_t>> tunables;
    launch_expressions launch;
    std::optional<launch_expressions> reference_launch;   // the reference kernel's own launch
    std::optional<vendor_baseline_spec> vendor_baseline;  // every case's, unless it says otherwise
    /// requires.mma: the MMA class the winner's SASS must hold (fp8, f16, bf16, tf32, int8, f64,
    /// any: instruction_audit.hpp); "" when the manifest requires none.
    std::string required_mma;
    /// arch_specific: every kernel is compiled for the GPU's architecture-specific target
    /// (sm_90a on sm_90), where wgmma lives; false: the portable sm_XY.
    bool arch_specific = false;
    std::vector<manifest_arg> args;
    std::vector<manifest_case> cases;

    /// The first value of every tunable: the configuration a kernel gets by default.
    std::map<std::string, std::int64_t> default_tunables() const;
    /// Case parameters plus the given tunable values (tunables win on a name clash: never,
    /// checked).
    expression_variables variables(const manifest_case& c,
                                   const std::map<std::string, std::int64_t>& tunables) const;
    const input_init& init_for(const manifest_case& c, const manifest_arg& a) const;
    /// Where an input file of this manifest lies in an attempt's inputs/ folder: its own file
    /// name ("x.bin"), or for a second file of that name in another folder "2/x.bin", and so
    /// on, so two inputs never share one link (a/x.bin and b/x.bin).
    std::string input_link(const std::filesystem::path& file) const;
    /// The argument with this name, or nullptr.
    const manifest_arg* find_arg(const std::string& name) const;
    /// The case with this name, or nullptr.
    const manifest_case* find_case(const std::string& name) const;
};

/// Reads and checks a manifest; throws json_error naming the file and field.
manifest read_manifest(const std::filesystem::path& file);

/// The tolerance output `arg` is held to in the case called `case_name` of `m` (the reduction
/// rule at that case's length, or the output's numbers). A case `m` lacks is a logic_error: every
/// case a run judges comes from its manifest.
tolerance tolerance_in_case(const manifest& m, const manifest_arg& arg,
                            const std::string& case_name);

/// A holdout file (--holdout-cases): manifest format. It may give only `cases` (and
/// schema_version); then the arguments, launch and tunables are the main manifest's.
/// When it gives its own `args`, they must match the main manifest's (names, dtypes,
/// kinds). Its cases need not be performance cases: a holdout is only checked, never timed.
manifest read_holdout_manifest(const std::filesystem::path& file, const manifest& main);

/// A launch object ({grid, block, dynamic_shared_bytes}, numbers or expressions) over `base`:
/// given dimensions replace the base's, missing trailing ones are 1.
launch_expressions read_launch_expressions(const json_field& v, const launch_expressions& base);

/// An evaluated launch for one case under one tunable configuration.
launch_config evaluate_launch(const launch_expressions& l, const expression_variables& vars);

}  // namespace cuopt
