#pragma once
/// The turns of a recorded model exchange (model-NNN.json), whichever API spoke: OpenAI Chat
/// Completions (messages, tool_calls), the Responses API (input and output items, reasoning
/// summaries) and Anthropic Messages (content blocks: text, tool_use, tool_result, thinking),
/// read as role + kind + text so the report can show a conversation without knowing the API.

#include <rapidjson/document.h>

#include <string>
#include <vector>

namespace cuopt {

struct conversation_turn {
    std::string role;  // system, user, assistant, tool
    std::string kind;  // text, tool call, tool result, reasoning
    std::string text;  // the words; a tool call as its name, then "argument: value" lines
};

/// The system prompt and every turn the request sent, in order.
std::vector<conversation_turn> request_turns(const rapidjson::Value& request_body);

/// What the reply said (text, tool calls, reasoning the API shows), in order.
std::vector<conversation_turn> reply_turns(const rapidjson::Value& response_body);

}  // namespace cuopt
