#pragma once
/// A winner as a PyTorch extension package (`export --torch DIR`): the kernel behind a
/// `cuda_optimizer::ENTRY` operator with a check on every call, a fake implementation for
/// torch.compile, a setup.py built with torch.utils.cpp_extension, a test against the run's
/// own reference, a timing script, and a README with the run's verdict. The op's arguments
/// come from the manifest: its input buffers become tensors whose shape is their count's
/// factors ("m*k": a is m x k), the case parameters are read from those shapes where they
/// appear, and only what no tensor carries (a float scalar, a parameter of no input's shape)
/// stays an argument. Outputs are allocated by the op and returned.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/artifacts/kernel_export.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

/// A case the package's test runs and its timing script times.
struct export_case {
    std::string name;
    std::string kind;  // correctness | performance | holdout
    expression_variables params;
    double run_median_ms = 0;  // the winner's median in the run (performance cases), else 0
};

/// An imported problem's PyTorch side (the run's pytorch/ copy of pytorch.json and its source):
/// the package's test builds the module as the run did, and replace(model) swaps its forward
/// for the op.
struct export_module {
    std::string form;         // kernelbench | plain
    std::string source_text;  // the module's file, copied into the package as reference.py
    std::vector<std::string> axes;
    std::vector<std::string> forward;  // forward's arguments, in order
    struct mapped {
        std::string arg;   // the manifest's (the op's) name
        std::string from;  // forward | module
        std::string key;   // forward's argument name, or the weight's attribute path
    };
    std::vector<mapped> args;
};

/// What the package says about where it came from.
struct export_facts {
    std::vector<export_case> cases;
    std::string verdict;       // "go", or what --force exported
    std::string verdict_line;  // "go 2.310x [2.20, 2.40] over PyTorch eager"
    double speedup = 0, low = 0, high = 0;
    std::string gpu, date, run_dir, tool_version;
    bool forced = false;
    std::optional<export_module> module;  // an imported problem's
};

/// The reason the manifest's arguments cannot become a PyTorch op ("" when they can): an
/// unsigned 16/32/64-bit buffer (no tensor type on every PyTorch version), a half-precision
/// scalar, an integer scalar given as a float, no input buffer (no device to run on), an
/// argument named like the op's own C++ (at, c10, cuopt_...), an entry that is a Python keyword.
std::string torch_export_refusal(const manifest& m, const std::string& entry);

/// The package's files, each a path relative to DIR and its text: csrc/ENTRY.cuh (the header
/// export --header writes), csrc/ENTRY_kernel.cu, csrc/ENTRY_op.cpp, for a CUDA reference its
/// renamed twin (csrc/ENTRY_reference*), setup.py, pyproject.toml, cuopt_ENTRY/__init__.py,
/// cuopt_ENTRY/_runtime.py, cuopt_ENTRY/export.json, tests/test_ENTRY.py, bench.py, README.md.
/// `reference` is absent for an imported problem, whose reference is its PyTorch module.
std::map<std::string, std::string> torch_package_files(
    const exported_kernel& k, const std::optional<exported_kernel>& reference, const manifest& m,
    const export_facts& f);

/// A buffer's shape as its count's factors: "m*k" -> {"m", "k"}, "rows" -> {"rows"}, "4*n" ->
/// {"4", "n"}; nullopt for any other count ("ceil(n/2)", "m*k+1"), which is then a flat tensor
/// of that many elements.
std::optional<std::vector<std::string>> shape_of_count(const std::string& count);

}  // namespace cuopt
