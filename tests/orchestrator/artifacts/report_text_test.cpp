// What the report puts into HTML: escaping, base64 data URIs, numbers and money; and the turns
// of recorded model exchanges for every API.
#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/model_conversation.hpp"

using namespace cuopt;

TEST_CASE("html_escape leaves no tag, attribute quote or entity from a kernel source alive") {
    CHECK(html_escape("</script><b a=\"x\" b='y'>&amp;") ==
          "&lt;/script&gt;&lt;b a=&quot;x&quot; b=&#39;y&#39;&gt;&amp;amp;");
    CHECK(html_escape("caf\xe9") == "caf\xef\xbf\xbd");  // not UTF-8: U+FFFD
}

TEST_CASE("base64 matches RFC 4648's test vectors") {
    CHECK(base64("") == "");
    CHECK(base64("f") == "Zg==");
    CHECK(base64("fo") == "Zm8=");
    CHECK(base64("foo") == "Zm9v");
    CHECK(base64("foobar") == "Zm9vYmFy");
    CHECK(data_uri("image/svg+xml", "<svg/>") == "data:image/svg+xml;base64,PHN2Zy8+");
}

TEST_CASE("numbers, money and durations are written one way") {
    CHECK(fixed(3.14159, 3) == "3.142");
    CHECK(fixed(std::nullopt, 2) == "-");
    CHECK(grouped(1234567) == "1,234,567");
    CHECK(grouped(-1000) == "-1,000");
    CHECK(usd(1504.5) == "$1,504.50");
    CHECK(usd(-0.004) == "$0.00");
    CHECK(ms_text(2.8125) == "2.8125 ms");
    CHECK(ms_text(0.000196608) == "0.000197 ms");
    CHECK(duration_text(3.69) == "3.7 s");
    CHECK(duration_text(185) == "3 min 05 s");
    CHECK(duration_text(3725) == "1 h 02 min");
}

namespace {

// The first recorded reply body of a fixture in tests/fixtures/model-replies/.
rapidjson::Document fixture_reply(const std::string& name) {
    const rapidjson::Document d = parse_json(
        read_text_file(std::string(CUOPT_SOURCE_DIR) + "/tests/fixtures/model-replies/" + name),
        name);
    rapidjson::Document body;
    body.CopyFrom(d["replies"][0]["body"], body.GetAllocator());
    return body;
}

}  // namespace

TEST_CASE("a reply's turns are read the same from Chat Completions, Responses and Anthropic") {
    const auto chat = reply_turns(fixture_reply("openai-chat-parallel-tool-calls.json"));
    REQUIRE(chat.size() == 3);
    CHECK(chat[0].text == "Compiling both variants.");
    CHECK(chat[1].kind == "tool call");
    CHECK(chat[1].text == "compile\nsource: // tile 16");
    const auto responses =
        reply_turns(fixture_reply("openai-responses-reasoning-function-calls.json"));
    REQUIRE(responses.size() == 3);
    CHECK(responses[0].kind == "reasoning");
    CHECK(responses[2].text == "profile");
    const auto anthropic = reply_turns(fixture_reply("anthropic-thinking-tool-use.json"));
    REQUIRE(anthropic.size() == 4);
    CHECK(anthropic[0].text == "Shared-memory tiling should cut global loads.");
    CHECK(anthropic[2].text == "Let me compile the tiled version.");
    CHECK(anthropic[3].text == "compile\nsource: // tiled\nflags: [\"-O3\"]");
}

TEST_CASE("a tool call's source argument keeps its own lines, arguments that are not JSON stay") {
    const rapidjson::Document reply = parse_json(R"({ "choices": [ { "message": { "role":
        "assistant", "tool_calls": [
          { "function": { "name": "submit_candidate",
                          "arguments": "{\"source\": \"a\\nb\", \"rationale\": \"tiles\"}" } },
          { "function": { "name": "compile", "arguments": "not json" } } ] } } ] })",
                                                 "reply");
    const auto turns = reply_turns(reply);
    REQUIRE(turns.size() == 2);
    CHECK(turns[0].text == "submit_candidate\nsource:\na\nb\nrationale: tiles");
    CHECK(turns[1].text == "compile(not json)");
}

TEST_CASE("a request's turns give the system prompt, the user's words and tool results in order") {
    const rapidjson::Document chat = parse_json(R"({ "messages": [
        { "role": "system", "content": "You write CUDA." },
        { "role": "user", "content": "Make it faster." },
        { "role": "assistant", "content": null, "tool_calls": [ { "id": "c1", "type": "function",
            "function": { "name": "compile", "arguments": "{}" } } ] },
        { "role": "tool", "tool_call_id": "c1", "content": "ok: 32 registers" } ] })",
                                                "chat");
    const auto turns = request_turns(chat);
    REQUIRE(turns.size() == 4);
    CHECK(turns[0].role == "system");
    CHECK(turns[2].text == "compile");
    CHECK(turns[3].kind == "tool result");
    const rapidjson::Document anthropic = parse_json(R"({ "system": "You write CUDA.",
        "messages": [ { "role": "user", "content": [ { "type": "tool_result", "tool_use_id": "t",
            "content": [ { "type": "text", "text": "did not compile" } ] } ] } ] })",
                                                     "anthropic");
    const auto a = request_turns(anthropic);
    REQUIRE(a.size() == 2);
    CHECK(a[1].role == "tool");
    CHECK(a[1].text == "did not compile");
    const rapidjson::Document responses = parse_json(R"({ "instructions": "You write CUDA.",
        "input": [ { "role": "user", "content": [ { "type": "input_text", "text": "Go." } ] },
                   { "type": "function_call_output", "call_id": "c", "output": "fine" } ] })",
                                                     "r");
    const auto r = request_turns(responses);
    REQUIRE(r.size() == 3);
    CHECK(r[1].text == "Go.");
    CHECK(r[2].text == "fine");
}

TEST_CASE("a message item without a role is read once, never passed back and forth") {
    const rapidjson::Document reply = parse_json(
        R"({"output": [{"type": "message", "content": [{"type": "output_text", "text": "Tiling"}]}]})",
        "reply");
    const auto turns = reply_turns(reply);
    REQUIRE(turns.size() == 1);
    CHECK(turns[0].text == "Tiling");
    const rapidjson::Document request = parse_json(
        R"({"input": [{"type": "message", "content": [{"type": "input_text", "text": "hi"}]}]})",
        "request");
    REQUIRE(request_turns(request).size() == 1);
}
