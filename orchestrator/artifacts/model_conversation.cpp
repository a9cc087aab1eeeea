#include "orchestrator/artifacts/model_conversation.hpp"

#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

void add_item(const Value& item, const std::string& role, std::vector<conversation_turn>& out);

// A tool call as a reader wants it: the tool's name, then each argument on its own line, a
// string as its own text (a kernel source keeps its lines), anything else as compact JSON;
// arguments that are not a JSON object stay as sent, in parentheses.
std::string call_text(const std::string& name, const Value& v, const char* key) {
    const Value* sent = member(v, key);
    rapidjson::Document parsed;
    const Value* args = sent;
    if (sent && sent->IsString() &&
        try_parse_json(parsed, std::string_view(sent->GetString(), sent->GetStringLength()))
            .empty())
        args = &parsed;
    if (!args || !args->IsObject())
        return name + "(" +
               (!sent              ? ""
                : sent->IsString() ? sent->GetString()
                                   : to_compact_json(*sent)) +
               ")";
    std::string out = name;
    for (const auto& m : args->GetObject()) {
        const std::string value = m.value.IsString()
                                      ? std::string(m.value.GetString(), m.value.GetStringLength())
                                      : to_compact_json(m.value);
        out += "\n" + std::string(m.name.GetString()) + ":" +
               (value.find('\n') == std::string::npos ? " " : "\n") + value;
    }
    return out;
}

// A string, or the text parts of an array of blocks, joined by line breaks.
std::string plain_text(const Value& v) {
    if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
    std::string out;
    if (v.IsArray())
        for (const Value& part : v.GetArray())
            if (const std::string t = text_of(part, "text"); !t.empty())
                out += (out.empty() ? "" : "\n") + t;
    return out;
}

// The reasoning an API shows: Anthropic's thinking, the Responses API's summaries.
void add_reasoning(const Value& block, const std::string& type,
                   std::vector<conversation_turn>& out) {
    std::string text = type == "thinking" ? text_of(block, "thinking") : "";
    for (const Value& s : array_or_empty(block, "summary").GetArray())
        text += (text.empty() ? "" : "\n") + text_of(s, "text");
    if (text.empty()) text = "(reasoning kept private by the API)";
    out.push_back({"assistant", "reasoning", text});
}

// One typed block or item (Anthropic content blocks, Responses API items).
void add_block(const Value& b, const std::string& role, std::vector<conversation_turn>& out) {
    const std::string type = text_of(b, "type");
    if (type == "text" || type == "input_text" || type == "output_text")
        out.push_back({role, "text", text_of(b, "text")});
    else if (type == "tool_use")
        out.push_back({"assistant", "tool call", call_text(text_of(b, "name"), b, "input")});
    else if (type == "function_call")
        out.push_back({"assistant", "tool call", call_text(text_of(b, "name"), b, "arguments")});
    else if (type == "tool_result")
        out.push_back(
            {"tool", "tool result", member(b, "content") ? plain_text(*member(b, "content")) : ""});
    else if (type == "function_call_output")
        out.push_back({"tool", "tool result", text_of(b, "output")});
    else if (type == "thinking" || type == "redacted_thinking" || type == "reasoning")
        add_reasoning(b, type, out);
    else if (type == "message" || member(b, "role"))
        add_item(b, text_of(b, "role").empty() ? role : text_of(b, "role"), out);
}

// A message with a role: its content (a string or blocks) and its tool calls (Chat API).
void add_item(const Value& item, const std::string& role, std::vector<conversation_turn>& out) {
    // A typed block goes to add_block; a message item without a role is read here (add_block
    // sends messages here: passing it back would recurse until the stack ran out).
    if (!member(item, "role") && member(item, "type") && text_of(item, "type") != "message")
        return add_block(item, role, out);
    const std::string r = text_of(item, "role").empty() ? role : text_of(item, "role");
    if (const Value* content = member(item, "content")) {
        if (content->IsString())
            out.push_back({r, r == "tool" ? "tool result" : "text", plain_text(*content)});
        else if (content->IsArray())
            for (const Value& block : content->GetArray()) add_block(block, r, out);
    }
    for (const Value& call : array_or_empty(item, "tool_calls").GetArray()) {
        const Value& f = object_or_empty(call, "function");
        out.push_back({r, "tool call", call_text(text_of(f, "name"), f, "arguments")});
    }
}

}  // namespace

std::vector<conversation_turn> request_turns(const Value& body) {
    std::vector<conversation_turn> out;
    if (const Value* system = member(body, "system"))
        out.push_back({"system", "text", plain_text(*system)});
    if (const std::string instructions = text_of(body, "instructions"); !instructions.empty())
        out.push_back({"system", "text", instructions});
    for (const char* key : {"messages", "input"}) {
        if (const Value* input = member(body, key); input && input->IsString())
            out.push_back({"user", "text", plain_text(*input)});
        for (const Value& item : array_or_empty(body, key).GetArray()) add_item(item, "user", out);
    }
    return out;
}

std::vector<conversation_turn> reply_turns(const Value& body) {
    std::vector<conversation_turn> out;
    for (const Value& choice : array_or_empty(body, "choices").GetArray())
        add_item(object_or_empty(choice, "message"), "assistant", out);
    for (const Value& item : array_or_empty(body, "output").GetArray())
        add_block(item, "assistant", out);
    if (text_of(body, "type") == "message")
        for (const Value& block : array_or_empty(body, "content").GetArray())
            add_block(block, "assistant", out);
    return out;
}

}  // namespace cuopt
