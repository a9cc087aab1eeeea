#pragma once
/// What each known model family accepts, in one table: its API, its thinking form, the effort
/// values it takes, whether it takes a temperature, and the API version to send. The command
/// line's model flags are checked and mapped through it (commands/model_settings.cpp); a model
/// outside the table keeps the flags as given, with a one-line warning.

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/llm_protocol.hpp"

namespace cuopt {

/// How a model thinks before it answers.
enum class thinking_form {
    none,      // no thinking setting (OpenAI's models reason through the effort instead)
    budget,    // Anthropic extended thinking: {"type": "enabled", "budget_tokens": N}
    adaptive,  // Anthropic adaptive thinking only: {"type": "adaptive"}; a budget is a 400
    either,    // a budget (deprecated where adaptive exists) or adaptive
};

/// Whether a model takes a temperature (and top_p, top_k).
enum class sampling {
    accepted,
    refused,           // a 400 error
    without_reasoning  // OpenAI's reasoning models: only with reasoning effort "none"
};

/// Whether an OpenAI model takes function tools on Chat Completions (the tool always sends
/// its tools; developers.openai.com/api/docs/guides/deployment-checklist).
enum class chat_tools {
    accepted,
    without_reasoning,  // only with reasoning effort "none"
    refused,            // tool calls need the Responses API
};

struct model_family {
    std::string prefix;  // the model id, alone or with a date or -latest ("…-20251001")
    llm_provider provider = llm_provider::openai;
    chat_tools chat = chat_tools::accepted;  // OpenAI: function tools on Chat Completions
    thinking_form thinking = thinking_form::none;
    bool thinking_on_by_default = false;  // Anthropic adaptive models that think unasked
    std::vector<std::string> efforts;     // accepted effort values; empty: no effort setting
    std::string default_effort;           // sent when no --reasoning-effort is given; "": none
    sampling temperature = sampling::refused;
    std::string anthropic_version;  // Anthropic: the anthropic-version header to send
    std::string shuts_down;         // the provider's announced shutdown date, "" if none
    std::string replacement;        // the provider's named replacement
};

/// The day the table was last checked against the providers' documentation.
inline constexpr const char* k_model_table_checked = "2026-12-07";

/// The table's family for a model id: the family's id itself, or followed by a snapshot date
/// (-YYYYMMDD, -YYYY-MM-DD) or -latest; anything else (a newer model, a variant) is unknown.
std::optional<model_family> find_model_family(llm_provider provider, const std::string& model);

/// Every family of the table (for tests and the docs).
const std::vector<model_family>& model_families();

/// True where base_url names the provider's own API host however spelled (https, default port,
/// any letter case, a trailing dot, with or without /v1): it gets the provider's own defaults.
bool is_provider_host(llm_provider provider, const std::string& base_url);

/// "low, medium or high": a list for a one-line message.
std::string word_list(const std::vector<std::string>& words, const char* last_joint = " or ");

}  // namespace cuopt
