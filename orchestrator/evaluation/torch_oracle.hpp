#pragma once
/// PyTorch as the oracle of an imported problem: the problem's own forward, run in its confined
/// child (python_child.hpp) on exactly the inputs a reference launch saw (the harness's dump of
/// them, or the manifest's files), once per set of inputs, never inside the harness and never
/// with a candidate's files. Its outputs become the (case, output) files candidates are held to.

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/evaluation/python_child.hpp"

namespace cuopt {

/// pytorch.json, as `cuda-optimizer import` writes it.
struct torch_problem {
    std::filesystem::path file;  // pytorch.json
    std::string form, entry;
    std::filesystem::path source, workloads;  // absolute
    std::vector<std::string> axes;
    struct tensor {
        std::string name, key, role, dtype;  // role: input | parameter | scalar | output
        std::vector<std::string> shape;
        double value = 0;
    };
    std::vector<tensor> args;  // forward's, in order, then the weights
    std::vector<tensor> outputs;
};

/// Reads and checks pytorch.json against the manifest (every tensor an argument of it, of the
/// same dtype). Throws json_error naming the file and field.
torch_problem read_torch_problem(const std::filesystem::path& file, const manifest& m);

struct torch_reference {
    torch_problem problem;
    python_interpreter python;
    bool gpu = false;  // run forward on the GPU (the machine's torch sees one)
};

/// A kernel with `signature` ("void f(const float* x, ...)") that does nothing: launched as the
/// reference of an imported problem, it makes the harness dump the inputs its launch saw.
std::string inputs_only_kernel(const std::string& signature);

/// Runs forward for every case of `m` on the inputs dumped under `folder`/inputs; writes
/// `folder`/torch/CASE.OUTPUT.bin. Throws python_error when the child fails.
oracle_files run_torch_oracle(const torch_reference& t, const manifest& m,
                              const std::filesystem::path& folder, process_runner& runner);

}  // namespace cuopt
