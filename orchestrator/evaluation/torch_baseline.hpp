#pragma once
/// PyTorch as the baseline of an imported problem: its forward, eager or through torch.compile,
/// timed in the confined PyTorch child by the harness's rules (the same GPU, warm-up launches,
/// fresh inputs before every timed launch, a cold L2 cache, one GPU time per launch from CUDA
/// events around the call, medians), and handed back as an attempt like any kernel's, so the
/// search, the re-ranking and the interleaved significance rounds compare candidates with it.

#include <filesystem>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// Times `c` (its pytorch_mode: eager or compile) on the performance cases of `m` in `folder`.
/// A child that fails gives a harness_error attempt with its reason, never an exception.
attempt_result time_pytorch(const candidate& c, const std::filesystem::path& folder,
                            const manifest& m, const evaluator_settings& s, process_runner& runner);

/// The baseline candidate for an imported problem: `mode` eager or compile, labelled
/// "pytorch-eager" / "pytorch-compile", its source the problem's Python (what a model is shown).
candidate pytorch_candidate(const torch_reference& t, const std::string& mode,
                            const std::string& entry);

}  // namespace cuopt
