// The requests: a conversation encoded for Chat Completions, the Responses API or Anthropic's
// Messages, and the endpoint each goes to. Replies: llm_reply_parsing.cpp.
#include "orchestrator/model/llm_protocol.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/model/model_families.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

Value parsed(const std::string& json, json_allocator& a, const std::string& what) {
    rapidjson::Document d;
    if (const std::string why = try_parse_json(d, json); !why.empty())
        throw model_protocol_error(what + " is not valid JSON (" + why +
                                   "): " + json.substr(0, 200));
    return Value(d, a);
}

// A previous reply's items (Responses output items, Anthropic content blocks), kept as the model
// sent them, moved onto the end of `into`.
void append_verbatim(const std::string& raw_json, Value& into, json_allocator& a,
                     const std::string& what) {
    Value raw = parsed(raw_json, a, what);
    if (raw.IsArray())
        for (Value& item : raw.GetArray()) into.PushBack(item, a);
}

// A tool's parameters as the APIs want them: no $schema or title at the top, definitions under
// $defs (references rewritten to match).
Value tool_parameters(const tool_spec& t, json_allocator& a) {
    std::string text = t.parameters_schema;
    for (std::size_t p; (p = text.find("#/definitions/")) != std::string::npos;)
        text.replace(p, 14, "#/$defs/");
    Value v = parsed(text, a, "tool " + t.name + " schema");
    if (!v.IsObject()) return v;
    v.RemoveMember("$schema");
    v.RemoveMember("title");
    if (v.HasMember("definitions") && !v.HasMember("$defs")) {
        Value defs(std::move(v["definitions"]));
        v.RemoveMember("definitions");
        json_object(v, a).add("$defs", std::move(defs));
    }
    return v;
}

std::string trim_slash(std::string s) {
    while (!s.empty() && s.back() == '/') s.pop_back();
    return s;
}

// The headers and fields every request shares.
http_request json_post(const llm_settings& s, const rapidjson::Document& d) {
    http_request r;
    r.url = model_endpoint_url(s);
    r.headers["Content-Type"] = "application/json";
    r.body = to_compact_json(d);
    r.timeout = s.timeout;
    return r;
}

// A tool call's arguments as they go back to the model: what it sent when that is a JSON
// object, else "{}" (the tool's answer says what was wrong). Servers that parse the echoed
// arguments (Ollama) refuse the whole request over one malformed call.
std::string echoed_arguments(const std::string& arguments) {
    rapidjson::Document d;
    return try_parse_json(d, arguments).empty() && d.IsObject() ? arguments : "{}";
}

Value openai_message(const chat_turn& t, json_allocator& a) {
    json_object m(a);
    if (t.who == chat_turn::role::tool_result) {
        m.add("role", "tool").add("tool_call_id", t.tool_call_id).add("content", t.text);
        return m.take();
    }
    m.add("role", t.who == chat_turn::role::user ? "user" : "assistant").add("content", t.text);
    if (t.calls.empty()) return m.take();
    json_array calls(a);
    for (const tool_call& c : t.calls) {
        json_object fn(a), call(a);
        fn.add("name", c.name).add("arguments", echoed_arguments(c.arguments_json));
        call.add("id", c.id).add("type", "function").add("function", fn);
        calls.push(call);
    }
    m.add("tool_calls", calls);
    return m.take();
}

http_request openai_request(const llm_settings& s, const std::string& key,
                            const std::string& system, const std::vector<chat_turn>& turns,
                            const std::vector<tool_spec>& tools) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    json_object sys(a);
    sys.add("role", "system").add("content", system);
    json_array messages(a);
    messages.push(sys);
    for (const chat_turn& t : turns) messages.push(openai_message(t, a));
    json_array ts(a);
    for (const tool_spec& t : tools) {
        json_object tool(a), fn(a);
        fn.add("name", t.name)
            .add("description", t.description)
            .add("parameters", tool_parameters(t, a));
        tool.add("type", "function").add("function", fn);
        ts.push(tool);
    }
    json_object o(d);
    o.add("model", s.model)
        .add("messages", messages)
        .add_if(!tools.empty(), "tools", ts)
        .add_if(!s.reasoning_effort.empty(), "reasoning_effort", s.reasoning_effort);
    if (s.temperature) o.add("temperature", *s.temperature);
    o.add("max_completion_tokens", s.max_output_tokens);
    // Other servers' own models (Ollama, older vLLM) read only the older name; OpenAI's
    // models refuse it, wherever they are served (Azure, a gateway).
    if (!s.base_url.empty() && !is_provider_host(llm_provider::openai, s.base_url) &&
        !find_model_family(llm_provider::openai, s.model))
        o.add("max_tokens", s.max_output_tokens);
    http_request r = json_post(s, d);
    if (!key.empty())
        r.headers["Authorization"] = "Bearer " + key;  // local servers often need none
    return r;
}

// One conversation turn as Responses API input items (appended to `input`).
void add_response_items(const chat_turn& t, Value& input, json_allocator& a) {
    if (t.who == chat_turn::role::tool_result) {
        json_object item(a);
        item.add("type", "function_call_output")
            .add("call_id", t.tool_call_id)
            .add("output", t.text);
        input.PushBack(item.take(), a);
        return;
    }
    if (t.who == chat_turn::role::assistant && !t.raw_items_json.empty()) {
        Value items(rapidjson::kArrayType);
        append_verbatim(t.raw_items_json, items, a, "a previous reply's output items");
        // A reasoning item must be followed by the item it led to: a reply cut after its
        // reasoning (incomplete) would be refused with it, so its trailing reasoning goes.
        while (!items.Empty() && items[items.Size() - 1].IsObject() &&
               items[items.Size() - 1].HasMember("type") &&
               items[items.Size() - 1]["type"] == "reasoning")
            items.PopBack();
        for (Value& item : items.GetArray()) input.PushBack(item, a);
        return;
    }
    if (!t.text.empty() || t.who == chat_turn::role::user) {
        json_object msg(a);
        msg.add("role", t.who == chat_turn::role::user ? "user" : "assistant")
            .add("content", t.text);
        input.PushBack(msg.take(), a);
    }
    for (const tool_call& c : t.calls) {
        json_object call(a);
        call.add("type", "function_call")
            .add("call_id", c.id)
            .add("name", c.name)
            .add("arguments", echoed_arguments(c.arguments_json));
        input.PushBack(call.take(), a);
    }
}

// POST /v1/responses (platform.openai.com/docs/api-reference/responses/create): stateless
// (store: false) with the reasoning items' encrypted content carried in the conversation.
http_request responses_request(const llm_settings& s, const std::string& key,
                               const std::string& system, const std::vector<chat_turn>& turns,
                               const std::vector<tool_spec>& tools) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    Value input(rapidjson::kArrayType);
    for (const chat_turn& t : turns) add_response_items(t, input, a);
    json_array ts(a);
    for (const tool_spec& t : tools) {
        json_object tool(a);
        tool.add("type", "function")
            .add("name", t.name)
            .add("description", t.description)
            .add("parameters", tool_parameters(t, a))
            .add("strict", false);  // our schemas have optional fields
        ts.push(tool);
    }
    json_object o(d);
    o.add("model", s.model).add("instructions", system).add("input", std::move(input));
    o.add_if(!tools.empty(), "tools", ts);
    if (!s.reasoning_effort.empty()) {
        json_object reasoning(a);
        reasoning.add("effort", s.reasoning_effort);
        o.add("reasoning", reasoning);
    }
    if (s.temperature) o.add("temperature", *s.temperature);
    o.add("max_output_tokens", s.max_output_tokens)
        .add("store", false)
        .add("include", std::vector<std::string>{"reasoning.encrypted_content"});
    http_request r = json_post(s, d);
    if (!key.empty()) r.headers["Authorization"] = "Bearer " + key;
    return r;
}

// An Anthropic reply's content blocks as the model sent them: thinking and redacted_thinking
// blocks must come back complete and unchanged before the tool results. A reply without a tool
// call (one cut while thinking) loses its trailing thinking: only a tool-use turn's thinking
// must come back, and a turn of thinking alone is refused.
void append_reply_blocks(const std::string& raw_json, Value& content, json_allocator& a) {
    append_verbatim(raw_json, content, a, "a previous reply's content blocks");
    const auto type_of = [](const Value& block) { return string_of(block, "type").value_or(""); };
    const bool tool_use = std::any_of(content.Begin(), content.End(),
                                      [&](const Value& b) { return type_of(b) == "tool_use"; });
    while (!tool_use && !content.Empty() &&
           (type_of(content[content.Size() - 1]) == "thinking" ||
            type_of(content[content.Size() - 1]) == "redacted_thinking"))
        content.PopBack();
}

// Temperature, thinking and effort as the settings say (model_settings checked them against
// the model's family).
void add_anthropic_sampling(const llm_settings& s, json_object& d) {
    // Extended thinking refuses a changed temperature (the settings refuse the pair too).
    if (s.temperature && s.thinking_budget == 0) d.add("temperature", *s.temperature);
    if (s.thinking_budget > 0 || s.adaptive_thinking) {
        json_object thinking(d.allocator());
        thinking.add("type", s.thinking_budget > 0 ? "enabled" : "adaptive")
            .add_if(s.thinking_budget > 0, "budget_tokens", s.thinking_budget);
        d.add("thinking", thinking);
    }
    if (!s.reasoning_effort.empty()) {  // models with effort take it here, not in thinking
        json_object output_config(d.allocator());
        output_config.add("effort", s.reasoning_effort);
        d.add("output_config", output_config);
    }
}

// A turn's content blocks: a tool result, a reply as sent, or text and tool calls.
Value anthropic_content(const chat_turn& t, json_allocator& a) {
    Value content(rapidjson::kArrayType);
    if (t.who == chat_turn::role::tool_result) {
        json_object block(a);
        block.add("type", "tool_result")
            .add("tool_use_id", t.tool_call_id)
            .add("content", t.text)
            .add_if(t.is_error, "is_error", true);
        content.PushBack(block.take(), a);
    } else if (t.who == chat_turn::role::assistant && !t.raw_items_json.empty()) {
        append_reply_blocks(t.raw_items_json, content, a);
    } else {
        if (!t.text.empty()) {
            json_object block(a);
            block.add("type", "text").add("text", t.text);
            content.PushBack(block.take(), a);
        }
        for (const tool_call& c : t.calls) {
            json_object block(a);
            block.add("type", "tool_use")
                .add("id", c.id)
                .add("name", c.name)
                .add("input", parsed(c.arguments_json, a, "tool call " + c.name + " input"));
            content.PushBack(block.take(), a);
        }
    }
    return content;
}

http_request anthropic_request(const llm_settings& s, const std::string& key,
                               const std::string& system, const std::vector<chat_turn>& turns,
                               const std::vector<tool_spec>& tools) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    Value messages(rapidjson::kArrayType);
    for (const chat_turn& t : turns) {
        Value content = anthropic_content(t, a);
        // Consecutive tool results travel in one user message, as the API requires.
        if (t.who == chat_turn::role::tool_result && !messages.Empty()) {
            Value& last = messages[messages.Size() - 1];
            if (std::string(last["role"].GetString()) == "user" && last["content"].IsArray() &&
                last["content"].Size() > 0 &&
                std::string(last["content"][0]["type"].GetString()) == "tool_result") {
                last["content"].PushBack(content[0], a);
                continue;
            }
        }
        if (content.Empty()) continue;  // an empty turn is refused (400): never echo one
        json_object m(a);
        m.add("role", t.who != chat_turn::role::assistant ? "user" : "assistant")
            .add("content", std::move(content));
        messages.PushBack(m.take(), a);
    }
    json_array ts(a);
    for (const tool_spec& t : tools) {
        json_object tool(a);
        tool.add("name", t.name)
            .add("description", t.description)
            .add("input_schema", tool_parameters(t, a));
        ts.push(tool);
    }
    json_object o(d);
    o.add("model", s.model)
        .add("max_tokens", s.max_output_tokens)
        .add("system", system)
        .add("messages", std::move(messages))
        .add_if(!tools.empty(), "tools", ts);
    add_anthropic_sampling(s, o);
    http_request r = json_post(s, d);
    r.headers["anthropic-version"] = s.anthropic_version;
    if (!key.empty()) r.headers["x-api-key"] = key;
    return r;
}

}  // namespace

std::string anthropic_messages_url(const std::string& base_url) {
    const std::string base = trim_slash(base_url.empty() ? "https://api.anthropic.com" : base_url);
    const bool has_v1 = base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0;
    return base + (has_v1 ? "/messages" : "/v1/messages");  // both forms are in use
}

std::string model_endpoint_url(const llm_settings& s) {
    if (s.provider == llm_provider::anthropic) return anthropic_messages_url(s.base_url);
    std::string base = trim_slash(s.base_url.empty() ? "https://api.openai.com/v1" : s.base_url);
    // OpenAI's own hosts serve /v1/...: a bare host (any case, :443, a trailing slash) gets it.
    if (is_provider_host(llm_provider::openai, base)) {
        const std::size_t host_start = base.find("://") + 3;
        base = base.substr(0, base.find('/', host_start)) + "/v1";
    }
    return base + (s.api == openai_api::responses ? "/responses" : "/chat/completions");
}

http_request build_model_request(const llm_settings& s, const std::string& key,
                                 const std::string& system, const std::vector<chat_turn>& turns,
                                 const std::vector<tool_spec>& tools) {
    if (s.provider == llm_provider::anthropic)
        return anthropic_request(s, key, system, turns, tools);
    return s.api == openai_api::responses ? responses_request(s, key, system, turns, tools)
                                          : openai_request(s, key, system, turns, tools);
}

}  // namespace cuopt
