// Every request shape the model client sends, field by field against the providers' API
// references: URL, headers, the exact set of top-level body keys with their types and values,
// tool definitions, and the message / input item / content block each kind of turn becomes.
// Objects are compared in a canonical form (keys sorted), so a stray or missing key fails.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "common/json_document.hpp"
#include "orchestrator/model/llm_protocol.hpp"

using namespace cuopt;
using rapidjson::Value;

namespace {

const char* k_key = "sk-shape-9e8d7c6b5a";
const char* k_system = "You optimise CUDA kernels.";

// Carries the two things the APIs do not want in a tool schema ($schema, title).
const tool_spec k_compile{"compile", "Compile a kernel and report its registers",
                          R"({"$schema": "http://json-schema.org/draft-07/schema#",
                              "title": "compile_arguments", "type": "object",
                              "properties": {"source": {"type": "string"}},
                              "required": ["source"]})"};
const char* k_compile_parameters =
    R"({"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]})";

// JSON text with every object's keys sorted: equal texts mean equal documents.
std::string canonical(const Value& v) {
    if (v.IsObject()) {
        std::map<std::string, std::string> members;
        for (const auto& m : v.GetObject()) members[m.name.GetString()] = canonical(m.value);
        std::string out;
        for (const auto& [name, value] : members) {
            const Value key(rapidjson::StringRef(name.c_str(), name.size()));
            out += (out.empty() ? "{" : ",") + to_compact_json(key) + ":" + value;
        }
        return out.empty() ? "{}" : out + "}";
    }
    if (v.IsArray()) {
        std::string out;
        for (const Value& e : v.GetArray()) out += (out.empty() ? "[" : ",") + canonical(e);
        return out.empty() ? "[]" : out + "]";
    }
    return to_compact_json(v);
}

std::string canonical(const std::string& json) {
    return canonical(parse_json(json, "expected"));
}

std::set<std::string> keys_of(const Value& object) {
    std::set<std::string> keys;
    for (const auto& m : object.GetObject()) keys.insert(m.name.GetString());
    return keys;
}

chat_turn user(const std::string& text) {
    return chat_turn::from_user(text);
}

chat_turn assistant(const std::string& text, std::vector<tool_call> calls,
                    const std::string& raw_items = "") {
    return {chat_turn::role::assistant, text, std::move(calls), "", "", raw_items, false};
}

chat_turn tool_result(const std::string& id, const std::string& name, const std::string& text,
                      bool is_error = false) {
    chat_turn t{chat_turn::role::tool_result, text, {}, id, name, "", false};
    t.is_error = is_error;
    return t;
}

const tool_call k_call_a{"call_a", "compile", R"({"source": "a"})"};
const tool_call k_call_b{"call_b", "compile", R"({"source": "b"})"};

// One conversation holding every kind of turn: the first user turn, an assistant turn with
// text and two tool calls, their results (the second one failed), an assistant turn carrying
// the raw items its API sent (with one call), that call's result, a text-only assistant turn
// and the correction user turn that answers it.
std::vector<chat_turn> every_kind_of_turn(const std::string& raw_items, const tool_call& raw_call) {
    return {user("Make the kernel faster."),
            assistant("Compiling two variants.", {k_call_a, k_call_b}),
            tool_result("call_a", "compile", "registers: 32"),
            tool_result("call_b", "compile", "error: expected ';'", true),
            assistant("Profiling.", {raw_call}, raw_items),
            tool_result(raw_call.id, raw_call.name, "dram throughput: 81%"),
            assistant("I think it is fast now.", {}),
            user("That was not a tool call: call submit_candidate.")};
}

// The written-down form of a request: url, headers and body, no credential header, no key.
void check_record(const http_request& r) {
    const std::string text = record_request(r, {k_key});
    CHECK(text.find(k_key) == std::string::npos);
    const auto record = parse_json(text, "record");
    CHECK(keys_of(record) == std::set<std::string>{"url", "headers", "body"});
    CHECK(std::string(record["url"].GetString()) == r.url);
    for (const std::string& h : keys_of(record["headers"])) {
        CHECK(h != "Authorization");
        CHECK(h != "x-api-key");
        CHECK(r.headers.count(h) == 1);
    }
    CHECK(canonical(record["body"]) == canonical(r.body));
}

http_request build(const llm_settings& s, const std::vector<chat_turn>& turns,
                   const std::vector<tool_spec>& tools = {k_compile},
                   const std::string& key = k_key) {
    return build_model_request(s, key, k_system, turns, tools);
}

llm_settings openai_settings(openai_api api) {
    llm_settings s;
    s.provider = llm_provider::openai;
    s.api = api;
    s.model = "gpt-shape-test";
    return s;
}

llm_settings anthropic_settings(int thinking_budget) {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    s.model = "claude-shape-test";
    s.reasoning_effort = "";  // what read_model_config gives Anthropic
    s.thinking_budget = thinking_budget;
    return s;
}

// Anthropic content blocks of one reply: thinking first (as extended thinking returns them),
// then text and the tool call.
const char* k_anthropic_raw_with_thinking =
    R"([{"type":"thinking","thinking":"Profile before tiling.","signature":"EqQBsig=="},)"
    R"({"type":"redacted_thinking","data":"EmwKAhredacted"},)"
    R"({"type":"text","text":"Profiling."},)"
    R"({"type":"tool_use","id":"toolu_c","name":"profile","input":{}}])";
const char* k_anthropic_raw = R"([{"type":"text","text":"Profiling."},)"
                              R"({"type":"tool_use","id":"toolu_c","name":"profile","input":{}}])";

}  // namespace

// https://platform.openai.com/docs/api-reference/chat/create
// POST {base}/chat/completions, Authorization: Bearer; body: model, messages (system, user,
// assistant with tool_calls [{id, type: function, function: {name, arguments}}], tool with
// tool_call_id), tools [{type: function, function: {name, description, parameters}}],
// reasoning_effort, temperature, max_completion_tokens.
TEST_CASE("a Chat Completions request has the documented URL, headers, top-level keys and tools",
          "[request_shapes]") {
    llm_settings s = openai_settings(openai_api::chat);
    const http_request r = build(s, {user("Make the kernel faster.")});
    CHECK(r.url == "https://api.openai.com/v1/chat/completions");
    CHECK(r.headers ==
          std::map<std::string, std::string>{{"Content-Type", "application/json"},
                                             {"Authorization", std::string("Bearer ") + k_key}});
    check_record(r);
    const auto d = parse_json(r.body, "request");
    CHECK(keys_of(d) == std::set<std::string>{"model", "messages", "tools", "reasoning_effort",
                                              "max_completion_tokens"});
    CHECK(canonical(d["model"]) == R"("gpt-shape-test")");
    CHECK(canonical(d["reasoning_effort"]) == R"("medium")");
    REQUIRE(d["max_completion_tokens"].IsInt());
    CHECK(d["max_completion_tokens"].GetInt() == 16000);
    CHECK(canonical(d["tools"]) ==
          canonical(std::string(R"([{"type": "function", "function": {"name": "compile",
              "description": "Compile a kernel and report its registers", "parameters": )") +
                    k_compile_parameters + "}}]"));
    CHECK(canonical(d["messages"]) ==
          canonical(R"([{"role": "system", "content": "You optimise CUDA kernels."},
                        {"role": "user", "content": "Make the kernel faster."}])"));

    // A local server: its own base URL, no key (no Authorization at all), a temperature, no
    // reasoning effort, no tools (an empty tools array is refused, so none is sent).
    s.base_url = "http://127.0.0.1:8000/v1/";
    s.reasoning_effort = "";
    s.temperature = 0.25;
    const http_request local = build(s, {user("hi")}, {}, "");
    CHECK(local.url == "http://127.0.0.1:8000/v1/chat/completions");
    CHECK(local.headers ==
          std::map<std::string, std::string>{{"Content-Type", "application/json"}});
    const auto l = parse_json(local.body, "request");
    // Both limits: Ollama and older servers read only max_tokens (OpenAI's host refuses it).
    CHECK(keys_of(l) == std::set<std::string>{"model", "messages", "temperature",
                                              "max_completion_tokens", "max_tokens"});
    REQUIRE(l["temperature"].IsNumber());
    CHECK(l["temperature"].GetDouble() == 0.25);
    REQUIRE(l["max_tokens"].IsInt());
    CHECK(l["max_tokens"].GetInt() == l["max_completion_tokens"].GetInt());
    // OpenAI's own models refuse max_tokens wherever they are served (Azure, a gateway).
    s.base_url = "https://example.openai.azure.com/openai/v1";
    s.model = "gpt-5";
    const auto azure = parse_json(build(s, {user("hi")}, {}, "").body, "request");
    CHECK_FALSE(azure.HasMember("max_tokens"));
    CHECK(azure.HasMember("max_completion_tokens"));
}

TEST_CASE("a tool call's malformed arguments go back to the model as {}", "[request_shapes]") {
    std::vector<chat_turn> turns = {user("Make the kernel faster.")};
    turns.push_back({chat_turn::role::assistant,
                     "",
                     {{"call_x", "compile", "{\"source\": "}},
                     "",
                     "",
                     "",
                     false});
    for (const openai_api api : {openai_api::chat, openai_api::responses}) {
        const std::string body = build(openai_settings(api), turns).body;
        CHECK_THAT(body, !Catch::Contains("{\\\"source\\\": \""));
        CHECK_THAT(body, Catch::Contains("\"arguments\":\"{}\""));
    }
}

// https://platform.openai.com/docs/api-reference/chat/create (messages: system, user,
// assistant, tool). Chat has no items to carry back: a turn's raw items never reach it.
TEST_CASE("a Chat Completions request turns every kind of turn into the documented message",
          "[request_shapes]") {
    const tool_call raw_call{"call_c", "profile", "{}"};
    const auto d = parse_json(
        build(openai_settings(openai_api::chat), every_kind_of_turn(k_anthropic_raw, raw_call))
            .body,
        "request");
    const Value& m = d["messages"];
    REQUIRE(m.Size() == 9);
    CHECK(canonical(m[0]) ==
          canonical(R"({"role": "system", "content": "You optimise CUDA kernels."})"));
    CHECK(canonical(m[1]) ==
          canonical(R"({"role": "user", "content": "Make the kernel faster."})"));
    CHECK(canonical(m[2]) ==
          canonical(R"({"role": "assistant", "content": "Compiling two variants.",
        "tool_calls": [
          {"id": "call_a", "type": "function", "function": {"name": "compile", "arguments": "{\"source\": \"a\"}"}},
          {"id": "call_b", "type": "function", "function": {"name": "compile", "arguments": "{\"source\": \"b\"}"}}]})"));
    CHECK(canonical(m[3]) ==
          canonical(R"({"role": "tool", "tool_call_id": "call_a", "content": "registers: 32"})"));
    // The Chat tool message has no error flag: the failure is in its text.
    CHECK(canonical(m[4]) ==
          canonical(
              R"({"role": "tool", "tool_call_id": "call_b", "content": "error: expected ';'"})"));
    CHECK(canonical(m[5]) == canonical(R"({"role": "assistant", "content": "Profiling.",
        "tool_calls": [{"id": "call_c", "type": "function", "function": {"name": "profile", "arguments": "{}"}}]})"));
    CHECK(canonical(m[6]) ==
          canonical(
              R"({"role": "tool", "tool_call_id": "call_c", "content": "dram throughput: 81%"})"));
    CHECK(canonical(m[7]) ==
          canonical(R"({"role": "assistant", "content": "I think it is fast now."})"));
    CHECK(
        canonical(m[8]) ==
        canonical(
            R"({"role": "user", "content": "That was not a tool call: call submit_candidate."})"));
}

// https://platform.openai.com/docs/api-reference/responses/create
// POST {base}/responses; body: model, instructions, input, tools [{type: function, name,
// description, parameters, strict}], reasoning {effort}, temperature, max_output_tokens,
// store, include ["reasoning.encrypted_content"] (stateless use with reasoning items).
TEST_CASE("a Responses API request has the documented URL, headers, top-level keys and tools",
          "[request_shapes]") {
    llm_settings s = openai_settings(openai_api::responses);
    const http_request r = build(s, {user("Make the kernel faster.")});
    CHECK(r.url == "https://api.openai.com/v1/responses");
    CHECK(r.headers ==
          std::map<std::string, std::string>{{"Content-Type", "application/json"},
                                             {"Authorization", std::string("Bearer ") + k_key}});
    check_record(r);
    const auto d = parse_json(r.body, "request");
    CHECK(keys_of(d) == std::set<std::string>{"model", "instructions", "input", "tools",
                                              "reasoning", "max_output_tokens", "store",
                                              "include"});
    CHECK(canonical(d["model"]) == R"("gpt-shape-test")");
    CHECK(canonical(d["instructions"]) == R"("You optimise CUDA kernels.")");
    CHECK(canonical(d["reasoning"]) == R"({"effort":"medium"})");
    REQUIRE(d["max_output_tokens"].IsInt());
    CHECK(d["max_output_tokens"].GetInt() == 16000);
    CHECK(canonical(d["store"]) == "false");
    CHECK(canonical(d["include"]) == R"(["reasoning.encrypted_content"])");
    CHECK(canonical(d["tools"]) == canonical(std::string(R"([{"type": "function", "name": "compile",
              "description": "Compile a kernel and report its registers", "strict": false,
              "parameters": )") + k_compile_parameters +
                                             "}]"));
    CHECK(canonical(d["input"]) ==
          canonical(R"([{"role": "user", "content": "Make the kernel faster."}])"));

    s.base_url = "http://127.0.0.1:9000/v1";
    s.reasoning_effort = "";
    s.temperature = 0.5;
    const http_request other = build(s, {user("hi")}, {}, "");
    CHECK(other.url == "http://127.0.0.1:9000/v1/responses");
    CHECK(other.headers ==
          std::map<std::string, std::string>{{"Content-Type", "application/json"}});
    CHECK(keys_of(parse_json(other.body, "request")) ==
          std::set<std::string>{"model", "instructions", "input", "temperature",
                                "max_output_tokens", "store", "include"});
}

// https://platform.openai.com/docs/api-reference/responses/create (input items: input message,
// function_call, function_call_output) and https://platform.openai.com/docs/guides/reasoning
// (with store: false, the reply's reasoning items go back in the input as they came).
TEST_CASE("a Responses API request turns every kind of turn into the documented input items",
          "[request_shapes]") {
    const std::string raw =
        R"([{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABenc=="},)"
        R"({"type":"message","id":"msg_1","role":"assistant","status":"completed",)"
        R"("content":[{"type":"output_text","text":"Profiling.","annotations":[]}]},)"
        R"({"type":"function_call","id":"fc_1","status":"completed","call_id":"call_c",)"
        R"("name":"profile","arguments":"{}"}])";
    const tool_call raw_call{"call_c", "profile", "{}"};
    const auto d = parse_json(
        build(openai_settings(openai_api::responses), every_kind_of_turn(raw, raw_call)).body,
        "request");
    const Value& in = d["input"];
    REQUIRE(in.Size() == 12);
    CHECK(canonical(in[0]) ==
          canonical(R"({"role": "user", "content": "Make the kernel faster."})"));
    CHECK(canonical(in[1]) ==
          canonical(R"({"role": "assistant", "content": "Compiling two variants."})"));
    CHECK(
        canonical(in[2]) ==
        canonical(
            R"({"type": "function_call", "call_id": "call_a", "name": "compile", "arguments": "{\"source\": \"a\"}"})"));
    CHECK(
        canonical(in[3]) ==
        canonical(
            R"({"type": "function_call", "call_id": "call_b", "name": "compile", "arguments": "{\"source\": \"b\"}"})"));
    CHECK(
        canonical(in[4]) ==
        canonical(
            R"({"type": "function_call_output", "call_id": "call_a", "output": "registers: 32"})"));
    // function_call_output has no error flag: the failure is in its output.
    CHECK(
        canonical(in[5]) ==
        canonical(
            R"({"type": "function_call_output", "call_id": "call_b", "output": "error: expected ';'"})"));
    // The raw items, exactly as the reply sent them, instead of the turn's text and calls.
    const auto raw_items = parse_json(raw, "raw");
    for (rapidjson::SizeType i = 0; i < 3; ++i)
        CHECK(canonical(in[6 + i]) == canonical(raw_items[i]));
    CHECK(
        canonical(in[9]) ==
        canonical(
            R"({"type": "function_call_output", "call_id": "call_c", "output": "dram throughput: 81%"})"));
    CHECK(canonical(in[10]) ==
          canonical(R"({"role": "assistant", "content": "I think it is fast now."})"));
    CHECK(
        canonical(in[11]) ==
        canonical(
            R"({"role": "user", "content": "That was not a tool call: call submit_candidate."})"));
}

// https://docs.anthropic.com/en/api/messages
// POST {base}/v1/messages with x-api-key and anthropic-version; body: model, max_tokens,
// system, messages, tools [{name, description, input_schema}], temperature.
TEST_CASE(
    "an Anthropic Messages request has the documented URL, headers, top-level keys and "
    "tools",
    "[request_shapes]") {
    llm_settings s = anthropic_settings(0);
    const http_request r = build(s, {user("Make the kernel faster.")});
    CHECK(r.url == "https://api.anthropic.com/v1/messages");
    CHECK(r.headers == std::map<std::string, std::string>{{"Content-Type", "application/json"},
                                                          {"anthropic-version", "2023-06-01"},
                                                          {"x-api-key", k_key}});
    check_record(r);
    const auto d = parse_json(r.body, "request");
    CHECK(keys_of(d) ==
          std::set<std::string>{"model", "max_tokens", "system", "messages", "tools"});
    CHECK(canonical(d["model"]) == R"("claude-shape-test")");
    REQUIRE(d["max_tokens"].IsInt());
    CHECK(d["max_tokens"].GetInt() == 16000);
    CHECK(canonical(d["system"]) == R"("You optimise CUDA kernels.")");
    CHECK(canonical(d["tools"]) == canonical(std::string(R"([{"name": "compile",
              "description": "Compile a kernel and report its registers", "input_schema": )") +
                                             k_compile_parameters + "}]"));
    CHECK(
        canonical(d["messages"]) ==
        canonical(
            R"([{"role": "user", "content": [{"type": "text", "text": "Make the kernel faster."}]}])"));

    s.base_url = "http://127.0.0.1:8000";
    s.temperature = 0.25;
    const http_request local = build(s, {user("hi")}, {}, "");
    CHECK(local.url == "http://127.0.0.1:8000/v1/messages");
    CHECK(local.headers == std::map<std::string, std::string>{{"Content-Type", "application/json"},
                                                              {"anthropic-version", "2023-06-01"}});
    const auto l = parse_json(local.body, "request");
    CHECK(keys_of(l) ==
          std::set<std::string>{"model", "max_tokens", "system", "messages", "temperature"});
    REQUIRE(l["temperature"].IsNumber());
    CHECK(l["temperature"].GetDouble() == 0.25);
}

// https://docs.anthropic.com/en/api/messages (content blocks text, tool_use, tool_result with
// is_error) and https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
// (all tool results of one assistant turn in one user message).
TEST_CASE("an Anthropic request turns every kind of turn into the documented content blocks",
          "[request_shapes]") {
    const tool_call raw_call{"toolu_c", "profile", "{}"};
    const auto d =
        parse_json(build(anthropic_settings(0), every_kind_of_turn(k_anthropic_raw, raw_call)).body,
                   "request");
    const Value& m = d["messages"];
    REQUIRE(m.Size() == 7);
    CHECK(
        canonical(m[0]) ==
        canonical(
            R"({"role": "user", "content": [{"type": "text", "text": "Make the kernel faster."}]})"));
    CHECK(canonical(m[1]) == canonical(R"({"role": "assistant", "content": [
        {"type": "text", "text": "Compiling two variants."},
        {"type": "tool_use", "id": "call_a", "name": "compile", "input": {"source": "a"}},
        {"type": "tool_use", "id": "call_b", "name": "compile", "input": {"source": "b"}}]})"));
    CHECK(canonical(m[2]) == canonical(R"({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_a", "content": "registers: 32"},
        {"type": "tool_result", "tool_use_id": "call_b", "content": "error: expected ';'", "is_error": true}]})"));
    CHECK(canonical(m[3]) ==
          canonical(std::string(R"({"role": "assistant", "content": )") + k_anthropic_raw + "}"));
    CHECK(canonical(m[4]) == canonical(R"({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_c", "content": "dram throughput: 81%"}]})"));
    CHECK(
        canonical(m[5]) ==
        canonical(
            R"({"role": "assistant", "content": [{"type": "text", "text": "I think it is fast now."}]})"));
    CHECK(canonical(m[6]) == canonical(R"({"role": "user", "content": [
        {"type": "text", "text": "That was not a tool call: call submit_candidate."}]})"));
}

// https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
// thinking: {type: "enabled", budget_tokens} below max_tokens; with tool use, the assistant
// turn's thinking and redacted_thinking blocks go back complete and unchanged, first.
TEST_CASE(
    "an Anthropic request with a thinking budget sends extended thinking and carries the "
    "thinking blocks back unchanged",
    "[request_shapes]") {
    const tool_call raw_call{"toolu_c", "profile", "{}"};
    const http_request r = build(anthropic_settings(4096),
                                 every_kind_of_turn(k_anthropic_raw_with_thinking, raw_call));
    CHECK(r.url == "https://api.anthropic.com/v1/messages");
    CHECK(r.headers == std::map<std::string, std::string>{{"Content-Type", "application/json"},
                                                          {"anthropic-version", "2023-06-01"},
                                                          {"x-api-key", k_key}});
    check_record(r);
    const auto d = parse_json(r.body, "request");
    CHECK(keys_of(d) ==
          std::set<std::string>{"model", "max_tokens", "system", "messages", "tools", "thinking"});
    CHECK(canonical(d["thinking"]) == R"({"budget_tokens":4096,"type":"enabled"})");
    REQUIRE(d["max_tokens"].IsInt());
    CHECK(d["max_tokens"].GetInt() > d["thinking"]["budget_tokens"].GetInt());
    const Value& m = d["messages"];
    REQUIRE(m.Size() == 7);
    CHECK(canonical(m[3]) == canonical(std::string(R"({"role": "assistant", "content": )") +
                                       k_anthropic_raw_with_thinking + "}"));
    CHECK(std::string(m[3]["content"][0]["type"].GetString()) == "thinking");
    CHECK(std::string(m[3]["content"][1]["type"].GetString()) == "redacted_thinking");
    CHECK(canonical(m[4]) == canonical(R"({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_c", "content": "dram throughput: 81%"}]})"));
    // Thinking is not compatible with a changed temperature: it is never sent beside it.
    llm_settings warm = anthropic_settings(4096);
    warm.temperature = 0.2;
    const auto t = parse_json(build(warm, every_kind_of_turn(k_anthropic_raw, raw_call)).body, "t");
    CHECK(t.HasMember("thinking"));
    CHECK_FALSE(t.HasMember("temperature"));
}
