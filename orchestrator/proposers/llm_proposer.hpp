#pragma once
/// The model proposer: each iteration is one conversation in which the model sees the
/// task, the device, the cases (shapes, kinds, tolerances; never input values or
/// reference outputs), the current best with its latencies and resources, and a compact
/// history; it may call `compile` (NVRTC only), with --use-nsight `profile`, with
/// --nvidia-research `nvidia_docs` (NVIDIA's documentation, allow-listed hosts only), and
/// ends the iteration with `submit_candidate`. Invalid output gets a correction turn with
/// the exact problem (bounded); then the iteration is recorded as an invalid submission.

#include <functional>
#include <memory>
#include <string>

#include "common/device_facts.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "orchestrator/model/docs_library.hpp"
#include "orchestrator/model/llm_client.hpp"
#include "orchestrator/proposers/proposer.hpp"

namespace cuopt {

struct llm_proposer_settings {
    std::string description;
    std::string signature;
    device_facts device;      // its --device-info block goes into the prompt verbatim
    int max_tool_calls = 8;   // per iteration, all tools together
    int max_corrections = 2;  // correction turns per iteration
    std::size_t history_budget_chars = 6000;
    std::size_t log_budget_chars = 3000;
    std::filesystem::path work_folder;  // compile-tool scratch space
    docs_library* docs = nullptr;       // --nvidia-research: the nvidia_docs tool
};

/// Runs ncu on the current best for one case and returns a small metrics table (or why not).
using profile_function =
    std::function<std::string(const search_state&, const std::string& case_name)>;

std::unique_ptr<proposer> make_llm_proposer(const manifest& m, llm_client& client,
                                            const attempt_evaluator& evaluator,
                                            llm_proposer_settings settings,
                                            profile_function profile = {});

/// The first user message of an iteration (exposed for tests and for the record).
std::string describe_for_model(const search_state& s, const llm_proposer_settings& settings);

}  // namespace cuopt
