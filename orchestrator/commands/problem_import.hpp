#pragma once
/// `cuda-optimizer import SOURCE --out DIR`: a problem where users keep it (a KernelBench
/// file, a FlashInfer-Trace definition with its workloads, or our plain form: a function
/// forward and get_inputs) turned into a problem folder that check and optimize take. The
/// source runs once, confined (python_child.hpp), to say what forward takes and returns at
/// which sizes; everything it answers is checked here as untrusted input before one file is
/// written. The folder keeps the source: PyTorch is its oracle (docs/import.md).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cuopt {

struct import_options {
    std::string source;
    std::string out;
    std::string form = "auto";  // auto | kernelbench | flashinfer | plain
    std::string workloads;      // a FlashInfer-Trace workloads .jsonl
    std::string python;
    std::string name;  // the kernel's name (default: from the source's)
    double timeout_s = 600;
};

/// One tensor or scalar of the problem, as the import found it.
struct imported_arg {
    std::string name;                // a C identifier (a weight's dots become underscores)
    std::string key;                 // a weight's name in the module's state (ln.weight)
    std::string role;                // input | parameter | scalar | output
    std::string dtype;               // ours: f32, bf16, ...
    std::vector<std::string> shape;  // integer expressions over the axes
    std::string init;  // the manifest's init object, as JSON ("" for outputs and scalars)
    double value = 0;  // a scalar's
};

struct imported_axis {
    std::string name;
    std::int64_t value = 0, small = 0;
    bool constant = false;  // a FlashInfer-Trace const axis
};

struct imported_problem {
    std::string form, entry, torch_version;
    std::vector<imported_axis> axes;
    std::vector<imported_arg> args;  // forward's arguments, the weights, then the outputs
    std::vector<std::map<std::string, std::int64_t>> holdout, workloads;
};

/// Reads the PyTorch side's answer (`source` names it in messages). Throws json_error naming the
/// field, or std::runtime_error with the refusal ("forward() draws random numbers ...").
imported_problem read_introspection(const std::string& text, const std::string& source);

/// "void NAME(const float* A, const float* B, float* out, int M, int K, int N)".
std::string imported_signature(const imported_problem& p, const std::string& kernel_name);

/// The kernel's name: --name, else the source's stem without KernelBench's number, as a C
/// identifier ("23_Softmax.py" -> "Softmax").
std::string kernel_name_for(const import_options& o);

/// Writes DIR's files (the source must be copied there already): input_cases.json,
/// holdout_cases.json, pytorch.json and config.json.
void write_problem_folder(const imported_problem& p, const import_options& o,
                          const std::filesystem::path& dir, const std::string& source_file);

void add_import_command(CLI::App& app, import_options& o, CLI::App*& command);
int run_import(const import_options& o);

}  // namespace cuopt
