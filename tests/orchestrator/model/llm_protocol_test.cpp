#include "orchestrator/model/llm_protocol.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"

using namespace cuopt;

namespace {

const tool_spec k_submit{
    "submit_candidate", "Submit a kernel",
    R"({"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]})"};

std::vector<chat_turn> conversation() {
    chat_turn user = chat_turn::from_user("Make it faster.");
    chat_turn assistant{chat_turn::role::assistant,
                        "Compiling first.",
                        {{"call_1", "compile", R"({"source": "x"})"}},
                        "",
                        "",
                        "",
                        false};
    chat_turn result{
        chat_turn::role::tool_result, "registers: 32", {}, "call_1", "compile", "", false};
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
    CHECK(std::string(d["model"].GetString()) == default_model(llm_provider::openai));
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
    CHECK(a.usage.prompt == 300);  // input_tokens leave the cache reads out; prompt holds all
    CHECK(a.usage.cached == 100);
}

TEST_CASE("a malformed or misshapen reply is a protocol error that says what is wrong") {
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::openai, "{\"choices\": [{\"mess"),
                      Catch::Contains("not a JSON object"));
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::openai, R"({"choices": []})"),
                      Catch::Contains("reply: field choices[0]: expected an element"));
    CHECK_THROWS_WITH(parse_model_reply(llm_provider::anthropic, R"({"id": "x"})"),
                      Catch::Contains("reply: field content: expected a member, found none"));
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

// Shapes from OpenAI's API reference, Responses: "Create a model response" (request body:
// instructions, input items, function tools, reasoning.effort, max_output_tokens, store,
// include) and "The response object" (output items message / function_call / reasoning,
// status, incomplete_details, usage with input_tokens_details and output_tokens_details).
TEST_CASE("a Responses API request: instructions, input items, flat function tools, stateless") {
    llm_settings s;
    s.api = openai_api::responses;
    s.reasoning_effort = "none";
    std::vector<chat_turn> turns = conversation();
    // An assistant turn that came from the Responses API carries its output items verbatim.
    turns.push_back(
        {chat_turn::role::assistant,
         "",
         {{"call_2", "compile", "{}"}},
         "",
         "",
         R"([{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},)"
         R"({"type":"function_call","id":"fc_1","call_id":"call_2","name":"compile","arguments":"{}"}])",
         false});
    turns.push_back({chat_turn::role::tool_result, "ok", {}, "call_2", "compile", "", false});
    const http_request r =
        build_model_request(s, "sk-abc", "You optimise CUDA.", turns, {k_submit});
    CHECK(r.url == "https://api.openai.com/v1/responses");
    CHECK(r.headers.at("Authorization") == "Bearer sk-abc");
    const auto d = parse_json(r.body, "request");
    CHECK(std::string(d["instructions"].GetString()) == "You optimise CUDA.");
    CHECK_FALSE(d.HasMember("messages"));
    const auto& in = d["input"];
    REQUIRE(in.Size() == 7);
    CHECK(std::string(in[0]["role"].GetString()) == "user");
    CHECK(std::string(in[1]["role"].GetString()) == "assistant");  // "Compiling first."
    CHECK(std::string(in[2]["type"].GetString()) == "function_call");
    CHECK(std::string(in[2]["call_id"].GetString()) == "call_1");
    CHECK(std::string(in[2]["arguments"].GetString()) == R"({"source": "x"})");
    CHECK(std::string(in[3]["type"].GetString()) == "function_call_output");
    CHECK(std::string(in[3]["call_id"].GetString()) == "call_1");
    CHECK(std::string(in[3]["output"].GetString()) == "registers: 32");
    CHECK(std::string(in[4]["type"].GetString()) == "reasoning");
    CHECK(std::string(in[4]["encrypted_content"].GetString()) == "gAAA");
    CHECK(std::string(in[5]["id"].GetString()) == "fc_1");
    CHECK(std::string(in[6]["call_id"].GetString()) == "call_2");
    CHECK(std::string(d["tools"][0]["type"].GetString()) == "function");
    CHECK(std::string(d["tools"][0]["name"].GetString()) == "submit_candidate");
    CHECK(d["tools"][0]["parameters"].IsObject());
    CHECK_FALSE(d["tools"][0].HasMember("function"));
    CHECK(std::string(d["reasoning"]["effort"].GetString()) == "none");
    CHECK(d["max_output_tokens"].GetInt() == 16000);
    CHECK(d["store"].IsFalse());
    CHECK(std::string(d["include"][0].GetString()) == "reasoning.encrypted_content");
    CHECK_FALSE(d.HasMember("temperature"));
    CHECK_FALSE(d.HasMember("max_completion_tokens"));
}

TEST_CASE(
    "a Responses API reply: parallel function calls, reasoning kept, usage, incomplete, refusal") {
    const model_reply r = parse_responses_reply(R"({
      "id": "resp_1", "object": "response", "status": "completed",
      "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Two things.", "annotations": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "compile", "arguments": "{\"source\":\"a\"}"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "profile", "arguments": "{}"}],
      "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000},
                "output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 250}, "total_tokens": 1500}})");
    CHECK(r.text == "Two things.");
    REQUIRE(r.calls.size() == 2);
    CHECK(r.calls[0].id == "call_a");
    CHECK(r.calls[0].arguments_json == R"({"source":"a"})");
    CHECK(r.calls[1].name == "profile");
    CHECK(r.usage.prompt == 1200);
    CHECK(r.usage.cached == 1000);
    CHECK(r.usage.completion == 300);
    CHECK(r.usage.reasoning == 250);
    CHECK(r.stop_reason == "completed");
    const auto raw = parse_json(r.raw_items_json, "raw");
    REQUIRE(raw.Size() == 4);
    CHECK(std::string(raw[0]["encrypted_content"].GetString()) == "gAAA");

    const model_reply cut = parse_responses_reply(
        R"({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [{"type": "reasoning", "id": "rs_2", "summary": []}]})");
    CHECK(cut.stop_reason == "incomplete: max_output_tokens");
    CHECK(cut.calls.empty());
    const model_reply no = parse_responses_reply(
        R"({"status": "completed", "output": [{"type": "message", "role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]})");
    CHECK(no.stop_reason == "refusal");
    CHECK_THAT(no.text, Catch::Contains("refusal: I can't help"));
    CHECK_THROWS_AS(parse_responses_reply(R"({"status": "completed"})"), model_protocol_error);
    CHECK_THROWS_AS(parse_responses_reply(R"({"output": [{"type": "function_call", "name": 5}]})"),
                    model_protocol_error);
}

// Anthropic's Messages API, "Extended thinking" / "Tool use with thinking": the assistant
// turn before tool results must carry the thinking blocks exactly as received, and a turn
// with empty content is refused.
TEST_CASE("Anthropic thinking blocks go back unchanged, an empty assistant turn is never echoed") {
    const model_reply reply = parse_model_reply(llm_provider::anthropic, R"({
      "content": [
        {"type": "thinking", "thinking": "Tile it.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "tool_use", "id": "toolu_1", "name": "compile", "input": {"source": "x"}}],
      "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}})");
    REQUIRE(reply.calls.size() == 1);
    llm_settings s;
    s.provider = llm_provider::anthropic;
    std::vector<chat_turn> turns = {
        chat_turn::from_user("Make it faster."),
        {chat_turn::role::assistant, reply.text, reply.calls, "", "", reply.raw_items_json, false},
        {chat_turn::role::tool_result, "registers: 32", {}, "toolu_1", "compile", "", false},
        {chat_turn::role::assistant, "", {}, "", "", "[]", false},  // an empty reply
        chat_turn::from_user("Continue with a tool call.")};
    const auto d = parse_json(build_model_request(s, "k", "sys", turns, {}).body, "request");
    const auto& m = d["messages"];
    REQUIRE(m.Size() == 4);
    const auto& blocks = m[1]["content"];
    REQUIRE(blocks.Size() == 3);
    CHECK(std::string(blocks[0]["type"].GetString()) == "thinking");
    CHECK(std::string(blocks[0]["signature"].GetString()) == "sig-1");
    CHECK(std::string(blocks[1]["data"].GetString()) == "opaque");
    CHECK(std::string(blocks[2]["id"].GetString()) == "toolu_1");
    CHECK(std::string(m[2]["content"][0]["type"].GetString()) == "tool_result");
    CHECK(std::string(m[3]["role"].GetString()) == "user");  // no empty assistant turn between
}

TEST_CASE(
    "tool schemas lose $schema and title and keep definitions under $defs, tool errors say so") {
    const tool_spec t{"compile", "Compile",
                      R"({"$schema": "http://json-schema.org/draft-04/schema#", "title": "compile",
                          "type": "object", "definitions": {"src": {"type": "string"}},
                          "properties": {"source": {"$ref": "#/definitions/src"}}})"};
    for (const bool anthropic : {false, true}) {
        llm_settings s;
        if (anthropic) s.provider = llm_provider::anthropic;
        std::vector<chat_turn> turns = conversation();
        turns.back().is_error = true;
        const auto d = parse_json(build_model_request(s, "k", "sys", turns, {t}).body, "request");
        const auto& schema =
            anthropic ? d["tools"][0]["input_schema"] : d["tools"][0]["function"]["parameters"];
        CHECK_FALSE(schema.HasMember("$schema"));
        CHECK_FALSE(schema.HasMember("title"));
        CHECK_FALSE(schema.HasMember("definitions"));
        CHECK(schema["$defs"]["src"].IsObject());
        CHECK(std::string(schema["properties"]["source"]["$ref"].GetString()) == "#/$defs/src");
        if (anthropic) CHECK(d["messages"][2]["content"][0]["is_error"].IsTrue());
    }
    const model_reply no = parse_model_reply(
        llm_provider::openai,
        R"({"choices": [{"finish_reason": "stop", "message": {"content": null, "refusal": "I can't help."}}]})");
    CHECK(no.stop_reason == "refusal");
    CHECK(no.text == "refusal: I can't help.");
}

TEST_CASE(
    "a thinking budget reaches Anthropic as extended thinking, replies without usage count 0") {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    s.thinking_budget = 4096;
    const auto d =
        parse_json(build_model_request(s, "k", "sys", conversation(), {}).body, "request");
    CHECK(std::string(d["thinking"]["type"].GetString()) == "enabled");
    CHECK(d["thinking"]["budget_tokens"].GetInt() == 4096);
    s.thinking_budget = 0;
    CHECK_FALSE(parse_json(build_model_request(s, "k", "sys", conversation(), {}).body, "request")
                    .HasMember("thinking"));
    // No usage block at all (some servers omit it): every count is 0, nothing dangles.
    const model_reply a = parse_model_reply(llm_provider::anthropic,
                                            R"({"content": [{"type": "text", "text": "hi"}]})");
    const model_reply o =
        parse_model_reply(llm_provider::openai, R"({"choices": [{"message": {"content": "hi"}}]})");
    const model_reply r = parse_responses_reply(R"({"output": []})");
    for (const model_reply* m : {&a, &o, &r}) {
        CHECK(m->usage.prompt == 0);
        CHECK(m->usage.completion == 0);
        CHECK(m->usage.cached == 0);
        CHECK(m->usage.reasoning == 0);
    }
}

TEST_CASE(
    "adaptive thinking and output_config.effort go into an Anthropic request, with the "
    "API version the settings name") {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    s.model = "claude-sonnet-5-5";
    s.adaptive_thinking = true;
    s.reasoning_effort = "xhigh";
    s.anthropic_version = "2026-10-21";
    const http_request r = build_model_request(s, "k", "sys", conversation(), {k_submit});
    CHECK(r.headers.at("anthropic-version") == "2026-10-21");
    const auto d = parse_json(r.body, "request");
    CHECK(to_compact_json(d["thinking"]) == R"({"type":"adaptive"})");
    CHECK(to_compact_json(d["output_config"]) == R"({"effort":"xhigh"})");
    CHECK_FALSE(d.HasMember("temperature"));
    s.adaptive_thinking = false;
    s.reasoning_effort = "";
    const auto plain = parse_json(build_model_request(s, "k", "sys", conversation(), {}).body, "r");
    CHECK_FALSE(plain.HasMember("thinking"));
    CHECK_FALSE(plain.HasMember("output_config"));
}

TEST_CASE("a Chat reply stopped by the content filter is a refusal with the reason kept") {
    const model_reply r = parse_model_reply(
        llm_provider::openai,
        R"({"choices": [{"finish_reason": "content_filter", "message": {"content": "Partial"}}]})");
    CHECK(r.stop_reason == "refusal");
    CHECK(r.text ==
          "refusal: the provider's content filter stopped the reply (content_filter); it had "
          "said: Partial");
}

TEST_CASE("Anthropic's thinking tokens are counted apart where the reply counts them") {
    const model_reply r = parse_model_reply(llm_provider::anthropic, R"({"content": [],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 900,
        "output_tokens_details": {"thinking_tokens": 700}}})");
    CHECK(r.usage.reasoning_reported);
    CHECK(r.usage.reasoning == 700);
    CHECK(r.usage.completion == 900);
}

TEST_CASE("an echoed Responses turn never ends on a reasoning item: trailing ones are dropped") {
    llm_settings s;
    s.api = openai_api::responses;
    chat_turn cut;
    cut.who = chat_turn::role::assistant;
    cut.raw_items_json = R"([{"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": []},
        {"type": "reasoning", "id": "rs_2", "summary": []}])";
    const auto d = parse_json(
        build_model_request(s, "k", "sys",
                            {chat_turn::from_user("go"), cut, chat_turn::from_user("again")}, {})
            .body,
        "request");
    const auto& in = d["input"];
    REQUIRE(in.Size() == 4);  // user, rs_1, its message, user: rs_2 had nothing after it
    CHECK(std::string(in[1]["id"].GetString()) == "rs_1");
    CHECK(std::string(in[2]["type"].GetString()) == "message");
    CHECK(std::string(in[3]["role"].GetString()) == "user");
}

TEST_CASE(
    "an Anthropic reply cut while thinking is echoed without its trailing thinking, a "
    "tool-use turn keeps every block") {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    chat_turn cut;
    cut.who = chat_turn::role::assistant;
    cut.raw_items_json = R"([{"type": "text", "text": "Plan:"},
        {"type": "thinking", "thinking": "", "signature": "sig"},
        {"type": "redacted_thinking", "data": "x"}])";
    const auto d = parse_json(
        build_model_request(s, "k", "sys",
                            {chat_turn::from_user("go"), cut, chat_turn::from_user("again")}, {})
            .body,
        "request");
    REQUIRE(d["messages"].Size() == 3);
    REQUIRE(d["messages"][1]["content"].Size() == 1);
    CHECK(std::string(d["messages"][1]["content"][0]["type"].GetString()) == "text");
    chat_turn tool;
    tool.who = chat_turn::role::assistant;
    tool.raw_items_json = R"([{"type": "tool_use", "id": "t", "name": "compile", "input": {}},
        {"type": "thinking", "thinking": "", "signature": "sig"}])";
    const auto kept = parse_json(
        build_model_request(s, "k", "sys", {chat_turn::from_user("go"), tool}, {}).body, "r");
    CHECK(kept["messages"][1]["content"].Size() == 2);
}

TEST_CASE("a Responses reply's cache writes are counted, only max_output_tokens is a cut") {
    const model_reply r = parse_responses_reply(R"({"status": "incomplete",
        "incomplete_details": {"reason": "max_messages"}, "output": [],
        "usage": {"input_tokens": 1000, "output_tokens": 10,
                  "input_tokens_details": {"cached_tokens": 300, "cache_write_tokens": 600}}})");
    CHECK(r.usage.cached == 300);
    CHECK(r.usage.cache_written == 600);
    CHECK(r.stop_reason == "incomplete: max_messages");
}
