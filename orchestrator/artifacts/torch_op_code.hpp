#pragma once
/// The C++ side of an exported PyTorch op (torch_export.hpp): how the op's arguments map onto
/// the manifest's (op_binding), and the generated kernel wrapper and op registration. Internal
/// to the export: torch_export.cpp assembles the package from these.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/artifacts/kernel_export.hpp"
#include "orchestrator/artifacts/torch_export.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

/// A manifest dtype in PyTorch: at::kFloat, torch.float32, and the C type a scalar of it is
/// passed as (null: no scalar of that type).
struct torch_type {
    const char* scalar_type;
    const char* python;
    const char* c_type;
};
/// nullopt: no PyTorch tensor of that type on every version (u16, u32, u64).
std::optional<torch_type> torch_type_of(dtype t);

/// Where the op reads a case parameter: dimension `dim` of tensor `arg`, or (dim -1) an int
/// argument of the op called `arg` (a scalar of the manifest that carries it, or its own).
struct param_source {
    std::string arg;
    int dim = -1;
};

/// How the op's arguments map onto the manifest's: worked out once and written both into the
/// C++ and into export.json, so that the fake implementation and the test read exactly what
/// the op reads.
struct op_binding {
    std::vector<std::string> params;  // every case parameter, sorted
    std::map<std::string, param_source> source;
    std::map<std::string, std::vector<std::string>> shape;  // buffers whose count factors
    std::vector<const manifest_arg*> tensors;               // inputs and inouts, in order
    std::vector<const manifest_arg*> outputs;               // outputs, in order
    std::vector<const manifest_arg*> ints;    // scalars the op takes (no shape carries them)
    std::vector<std::string> free;            // parameters the op takes as int arguments
    std::vector<const manifest_arg*> floats;  // float scalars: arguments with defaults
};

op_binding binding_of(const manifest& m);
/// "(Tensor a, Tensor b) -> Tensor": the op's schema after its name.
std::string schema_of(const op_binding& b);
/// "m x k".
std::string shape_text(const std::vector<std::string>& dims);

/// PREFIX_kernel.cu: ENTRY.cuh behind PREFIX_launch and PREFIX_values, two plain functions.
std::string kernel_cu(const exported_kernel& k, const manifest& m, const op_binding& b,
                      const std::string& prefix);
/// PREFIX_op.cpp: the op `op` (its checks, its outputs, the launch on the current stream) and
/// its registration; `warn`: the warning outside the sizes of `f`'s cases.
std::string op_cpp(const op_binding& b, const manifest& m, const std::string& op,
                   const std::string& prefix, const export_facts& f, bool warn);

}  // namespace cuopt
