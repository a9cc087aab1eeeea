#include "orchestrator/model/llm_protocol.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"

using namespace cuopt;

namespace {

const tool_spec k_submit{
    "submit_candidate", "Submit a kernel",
    R"({"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]})"};

std::vector<chat_turn> conversation() {
    chat_turn user{chat_turn::role::user, "Make it faster.", {}, "", ""};
    chat_turn assistant{chat_turn::role::assistant,
                        "Compiling first.",
                        {{"call_1", "compile", R"({"source": "x"})"}},
                        "",
                        ""};
    chat_turn result{chat_turn::role::tool_result, "registers: 32", {}, "call_1", "compile"};
    return {user, assistant, result};
}

}  // namespace

TEST_CASE(
    "an OpenAI request carries system, turns, tool calls, tool results, tools and the bearer key") {
    llm_settings s;
    s.base_url = "http://127.0.0.1:8080/v1/";
    const http_request r =
        build_model_request(s, "sk-abc", "You optimise CUDA.", conversation(), {k_submit});
    CHECK(r.url == "http://127.0.0.1:8080/v1/chat/completions");
    CHECK(r.headers.at("Authorization") == "Bearer sk-abc");
    const auto d = parse_json(r.body, "request");
    CHECK(std::string(d["model"].GetString()) == "gpt-5-mini");
    CHECK(std::string(d["reasoning_effort"].GetString()) == "medium");
    REQUIRE(d["messages"].Size() == 4);
    CHECK(std::string(d["messages"][0]["role"].GetString()) == "system");
    CHECK(std::string(d["messages"][2]["tool_calls"][0]["function"]["name"].GetString()) ==
          "compile");
    CHECK(std::string(d["messages"][3]["role"].GetString()) == "tool");
    CHECK(std::string(d["messages"][3]["tool_call_id"].GetString()) == "call_1");
    CHECK(std::string(d["tools"][0]["function"]["parameters"]["required"][0].GetString()) ==
          "source");
    CHECK_FALSE(d.HasMember("temperature"));
}

TEST_CASE("an Anthropic request carries x-api-key, the version, tool_use and tool_result blocks") {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    s.model = "claude-sonnet-4-5";
    s.temperature = 0.2;
    const http_request r =
        build_model_request(s, "sk-ant-xyz", "You optimise CUDA.", conversation(), {k_submit});
    CHECK(r.url == "https://api.anthropic.com/v1/messages");
    CHECK(r.headers.at("x-api-key") == "sk-ant-xyz");
    CHECK(r.headers.at("anthropic-version") == "2023-06-01");
    const auto d = parse_json(r.body, "request");
    CHECK(std::string(d["system"].GetString()) == "You optimise CUDA.");
    REQUIRE(d["messages"].Size() == 3);
    CHECK(std::string(d["messages"][1]["content"][1]["type"].GetString()) == "tool_use");
    CHECK(std::string(d["messages"][1]["content"][1]["input"]["source"].GetString()) == "x");
    CHECK(std::string(d["messages"][2]["content"][0]["type"].GetString()) == "tool_result");
    CHECK(std::string(d["tools"][0]["input_schema"]["type"].GetString()) == "object");
    CHECK(d["temperature"].GetDouble() == 0.2);
}

TEST_CASE("replies decode into text, tool calls and usage for both APIs") {
    const model_reply o =
        parse_model_reply(llm_provider::openai, R"({"choices": [{"finish_reason": "tool_calls",
        "message": {"content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "submit_candidate", "arguments": "{\"source\": \"k\"}"}}]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "prompt_tokens_details": {"cached_tokens": 64},
                  "completion_tokens_details": {"reasoning_tokens": 12}}})");
    REQUIRE(o.calls.size() == 1);
    CHECK(o.calls[0].name == "submit_candidate");
    CHECK(o.calls[0].arguments_json == R"({"source": "k"})");
    CHECK(o.usage.prompt == 120);
    CHECK(o.usage.cached == 64);
    CHECK(o.usage.reasoning == 12);
    CHECK(o.stop_reason == "tool_calls");
    const model_reply a = parse_model_reply(llm_provider::anthropic,
                                            R"({"content": [{"type": "text", "text": "Here."},
        {"type": "tool_use", "id": "t1", "name": "compile", "input": {"source": "k"}}], "stop_reason": "tool_use",
        "usage": {"input_tokens": 200, "output_tokens": 40, "cache_read_input_tokens": 100}})");
    CHECK(a.text == "Here.");
    REQUIRE(a.calls.size() == 1);
    CHECK(a.calls[0].arguments_json == R"({"source":"k"})");
    CHECK(a.usage.prompt == 200);
    CHECK(a.usage.cached == 100);
}

TEST_CASE("a malformed or misshapen reply is a protocol error that says what is wrong") {
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::openai, "{\"choices\": [{\"mess"),
                      Catch::Contains("not a JSON object"));
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::openai, R"({"choices": []})"),
                      Catch::Contains("'choices' is empty"));
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::anthropic, R"({"id": "x"})"),
                      Catch::Contains("missing 'content'"));
}

TEST_CASE("a recorded request has no credential header and no key anywhere") {
    llm_settings s;
    const http_request r = build_model_request(
        s, "sk-live-123456", "system sk-live-123456 leaked into a prompt", {}, {});
    const std::string record = record_request(r, {"sk-live-123456"});
    CHECK(record.find("sk-live-123456") == std::string::npos);
    CHECK(record.find("Authorization") == std::string::npos);
    CHECK(record.find("[REDACTED]") != std::string::npos);
    CHECK(record.find("Content-Type") != std::string::npos);
    CHECK(redact("a KEY b KEY", {"KEY", ""}) == "a [REDACTED] b [REDACTED]");
    CHECK(redact_url_credentials("--base-url=http://u:sk-1@host:8/v1 https://x.org/a@b") ==
          "--base-url=http://[REDACTED]@host:8/v1 https://x.org/a@b");
}

TEST_CASE("a reply whose fields have the wrong types is a protocol error, never a crash") {
    // Found by fuzz-model_reply: a tool_use id that is a number.
    CHECK_THROWS_AS(
        parse_model_reply(
            llm_provider::anthropic,
            R"({"content": [{"type": "tool_use", "id": 9, "name": "x", "input": {}}]})"),
        model_protocol_error);
    CHECK_THROWS_AS(parse_model_reply(llm_provider::anthropic, R"({"content": [{"type": 5}]})"),
                    model_protocol_error);
    CHECK_THROWS_AS(parse_model_reply(llm_provider::openai, R"({"choices": [{"message": 5}]})"),
                    model_protocol_error);
    CHECK_THROWS_AS(
        parse_model_reply(
            llm_provider::openai,
            R"({"choices": [{"message": {"tool_calls": [{"function": {"name": [], "arguments": "{}"}}]}}]})"),
        model_protocol_error);
}

TEST_CASE("the Anthropic endpoint takes a base URL with or without its /v1") {
    CHECK(anthropic_messages_url("") == "https://api.anthropic.com/v1/messages");
    CHECK(anthropic_messages_url("http://127.0.0.1:8000/v1") ==
          "http://127.0.0.1:8000/v1/messages");
    CHECK(anthropic_messages_url("http://127.0.0.1:8000/v1/") ==
          "http://127.0.0.1:8000/v1/messages");
    CHECK(anthropic_messages_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1/messages");
}
