#pragma once
/// What every proposer returns: a kernel source with the defines, NVRTC options and
/// launch it should run with, why, and which iteration it grew from. Plain data.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/name_table.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

/// Who wrote a candidate.
enum class proposer_kind { initial, reference, autotune, files, llm };

inline constexpr auto k_proposer_kinds =
    make_name_table<proposer_kind>({{proposer_kind::initial, "initial"},
                                    {proposer_kind::reference, "reference"},
                                    {proposer_kind::autotune, "autotune"},
                                    {proposer_kind::files, "files"},
                                    {proposer_kind::llm, "llm"}});

inline const char* to_string(proposer_kind k) {
    return k_proposer_kinds.name(k);
}

struct candidate {
    std::string source;
    std::string entry;
    std::map<std::string, std::string> defines;
    std::vector<std::string> compile_options;
    std::optional<launch_expressions> launch;  // replaces the manifest's default launch
    std::map<std::string, launch_expressions> case_launch;  // per-case launch, by case name
    std::map<std::string, std::int64_t> tunables;  // bound tunables (also passed as defines)
    std::string rationale;
    std::optional<int> parent_iteration;
    proposer_kind proposer = proposer_kind::initial;
    std::string label;     // short name for tables: a file name, "TILE=32 BK=8", ...
    std::string rejected;  // set by a proposer that gave up on this iteration: recorded, never run
    /// An imported problem's baseline: "eager" or "compile" is PyTorch's forward timed in the
    /// PyTorch child (torch_baseline.hpp), not a kernel the harness runs; "" for CUDA.
    std::string pytorch_mode;
};

/// The launch a candidate runs a case with: its per-case launch, else its default,
/// else the case's, else the manifest's.
const launch_expressions& launch_for(const candidate& c, const manifest& m,
                                     const manifest_case& mc);

/// NVRTC options a candidate may not use: relocatable device code, include paths
/// outside the toolkit and the run folder, output redirection. "" when all are allowed.
std::string check_compile_options(const std::vector<std::string>& options,
                                  const std::string& run_folder);

}  // namespace cuopt
