#pragma once
/// The two model APIs as data: a provider-neutral conversation (system text, user and
/// assistant turns, tool calls and their results, tool definitions) encoded as an OpenAI
/// Chat Completions or an Anthropic Messages request, and their replies decoded back
/// (text, tool calls, usage). No I/O here; credentials go only into request headers,
/// and record_request() is the one way a request is written down (credentials removed).

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/name_table.hpp"
#include "orchestrator/model/http_client.hpp"

namespace cuopt {

enum class llm_provider { openai, anthropic };

inline constexpr auto k_llm_providers = make_name_table<llm_provider>(
    {{llm_provider::openai, "openai"}, {llm_provider::anthropic, "anthropic"}});

/// The model a provider gets when none is named: the one place these names live. Checked on
/// 2026-11-30 against the providers' deprecation pages: gpt-5-mini shuts down 2026-12-11
/// (replacement gpt-6.1-terra, tools through the Responses API), claude-sonnet-4-5 retires
/// 2026-11-30 (replacement Claude Sonnet 5.5, adaptive thinking on by default). Override with
/// --model or CUDA_OPTIMIZER_MODEL; a retired name fails in one line naming both.
constexpr const char* default_model(llm_provider p) {
    return p == llm_provider::anthropic ? "claude-sonnet-5-5" : "gpt-6.1-terra";
}

/// Which OpenAI API: the Responses API (OpenAI's own host: its reasoning models take function
/// tools with a reasoning effort only there) or Chat Completions (OpenAI-compatible servers:
/// vLLM, llama.cpp, Ollama, SGLang).
enum class openai_api { responses, chat };

inline constexpr auto k_openai_apis =
    make_name_table<openai_api>({{openai_api::responses, "responses"}, {openai_api::chat, "chat"}});

/// Anthropic's API version before 2026-10-21 (which removes the sampling parameters); still
/// accepted, and sent for models outside the table of model families.
inline constexpr const char* k_anthropic_version_2023 = "2023-06-01";

struct llm_settings {
    llm_provider provider = llm_provider::openai;
    openai_api api = openai_api::chat;  // OpenAI only
    std::string model = default_model(llm_provider::openai);
    std::string base_url;  // "" = the provider's own
    /// OpenAI: reasoning.effort (Responses) or reasoning_effort (Chat); Anthropic:
    /// output_config.effort. "" leaves it out (the model's default).
    std::string reasoning_effort = "medium";
    std::optional<double> temperature;  // only where the model accepts it
    int max_output_tokens = 16000;
    /// A reply cut at max_output_tokens is sent again once with this limit (0: never; the
    /// proposer then asks for a shorter reply instead).
    int retry_output_tokens = 0;
    int thinking_budget = 0;         // Anthropic: extended thinking's budget_tokens; 0 = not sent
    bool adaptive_thinking = false;  // Anthropic: thinking {"type": "adaptive"}
    std::string anthropic_version = k_anthropic_version_2023;  // the anthropic-version header
    std::chrono::milliseconds timeout{600000};
};

struct tool_spec {
    std::string name;
    std::string description;
    std::string parameters_schema;  // JSON Schema text of the arguments object
};

struct tool_call {
    std::string id;
    std::string name;
    std::string arguments_json;  // as the model sent it (validated by the caller)
};

struct chat_turn {
    enum class role { user, assistant, tool_result } who = role::user;
    std::string text;              // user/assistant text, or the tool result
    std::vector<tool_call> calls;  // assistant turns
    std::string tool_call_id;      // tool results
    std::string tool_name;         // tool results (OpenAI wants it implicit, Anthropic by id)
    /// Assistant turns of the Responses API: the reply's output items verbatim (a JSON array),
    /// so reasoning items (with their encrypted content) go back to the model as it sent them.
    std::string raw_items_json;
    bool is_error = false;  // tool results: the call failed (Anthropic's is_error)

    /// A user turn of plain text.
    static chat_turn from_user(std::string words) {
        chat_turn t;
        t.text = std::move(words);
        return t;
    }
};

/// Token counts in one convention for every API: `prompt` is every input token (OpenAI's
/// prompt_tokens / input_tokens; Anthropic's input_tokens + cache_read_input_tokens +
/// cache_creation_input_tokens), `cached` the part read from a prompt cache, `cache_written`
/// the part written to one (Anthropic bills it at 1.25x the input price), `completion` every
/// output token billed (Anthropic's output_tokens include its thinking), `reasoning` the part
/// of `completion` the API reports as reasoning or thinking (OpenAI's reasoning_tokens,
/// Anthropic's output_tokens_details.thinking_tokens; see reasoning_reported).
struct token_usage {
    long long prompt = 0, completion = 0, reasoning = 0, cached = 0, cache_written = 0;
    bool reasoning_reported = true;  // false: reasoning is inside completion, not counted apart
};

struct model_reply {
    std::string text;
    std::vector<tool_call> calls;
    token_usage usage;
    std::string stop_reason;     // "incomplete: max_output_tokens", "refusal", ... where said
    std::string raw_items_json;  // Responses API: the output items, to carry into the next turn
};

/// A reply that does not have the shape the API documents; what() says what is missing.
class model_protocol_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The Messages endpoint for a base URL given with or without its /v1 (http://host/v1, the form
/// vLLM documents, and http://host both work).
std::string anthropic_messages_url(const std::string& base_url);

/// The endpoint the settings' requests go to: Responses, Chat Completions or Messages, on the
/// base URL or the provider's own host.
std::string model_endpoint_url(const llm_settings& s);

http_request build_model_request(const llm_settings& s, const std::string& api_key,
                                 const std::string& system, const std::vector<chat_turn>& turns,
                                 const std::vector<tool_spec>& tools);

model_reply parse_model_reply(llm_provider provider, const std::string& body);

/// A Responses API reply: output items (message text and refusals, function_call items,
/// reasoning items kept verbatim in raw_items_json), status and usage.
model_reply parse_responses_reply(const std::string& body);

/// The reply decoder for these settings.
model_reply parse_reply(const llm_settings& s, const std::string& body);

/// The request as JSON for model-NNN.json: url, headers without any credential, body;
/// then every secret string scrubbed from the result as a second guard.
std::string record_request(const http_request& request, const std::vector<std::string>& secrets);

/// Replaces every occurrence of each non-empty secret with "[REDACTED]".
std::string redact(std::string text, const std::vector<std::string>& secrets);

/// "http://user:KEY@host/v1" -> "http://[REDACTED]@host/v1", for every URL in the text (redact()
/// does this too): a key typed into --base-url never reaches an artifact or a log line.
std::string redact_url_credentials(std::string text);

}  // namespace cuopt
