// Every reply shape in tests/fixtures/model-replies/ through the real client: a loopback server
// replays the fixture's replies, llm_client sends over libcurl, and the fixture's "expect" block
// is checked (reply, error, retries and waits, the model-001.json record). One file per shape,
// each naming the documentation page its shape comes from.
#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "orchestrator/model/llm_client.hpp"
#include "test_support.hpp"

using namespace cuopt;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

const char* k_key = "sk-fixture-0c1d2e3f4a5b";
const fs::path k_folder = fs::path(CUOPT_SOURCE_DIR) / "tests/fixtures/model-replies";

const std::set<std::string> k_fixture_keys = {"provider", "api",     "model",
                                              "doc",      "replies", "expect"};
const std::set<std::string> k_reply_keys = {"status", "headers", "body"};
// A reply the client accepts must state all of these; a failure must state its status and words.
const std::set<std::string> k_reply_expectations = {"text", "calls", "stop_reason", "usage"};
const std::set<std::string> k_error_expectations = {"error_status", "error_contains"};
const std::set<std::string> k_optional_expectations = {"requests", "waited_ms",
                                                       "raw_items_contains", "error_one_line"};

std::vector<fs::path> fixture_files() {
    std::vector<fs::path> files;
    if (fs::is_directory(k_folder))
        for (const auto& e : fs::directory_iterator(k_folder))
            if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

std::set<std::string> keys_of(const Value& object) {
    std::set<std::string> keys;
    for (const auto& m : object.GetObject()) keys.insert(m.name.GetString());
    return keys;
}

bool has_all(const std::set<std::string>& keys, const std::set<std::string>& wanted) {
    return std::includes(keys.begin(), keys.end(), wanted.begin(), wanted.end());
}

std::string text_at(const Value& object, const char* key) {
    REQUIRE(object.HasMember(key));
    REQUIRE(object[key].IsString());
    return object[key].GetString();
}

// The fixture's expectations must name only what this test checks, so a misspelt key fails
// instead of silently checking nothing; a success names its whole reply, a failure its error.
void check_fixture_shape(const Value& f) {
    REQUIRE(f.IsObject());
    for (const std::string& k : keys_of(f)) CHECK(k_fixture_keys.count(k) == 1);
    const auto provider = k_llm_providers.parse(text_at(f, "provider"));
    REQUIRE(provider);
    if (*provider == llm_provider::openai) REQUIRE(k_openai_apis.parse(text_at(f, "api")));
    if (*provider == llm_provider::anthropic) CHECK_FALSE(f.HasMember("api"));
    CHECK_THAT(text_at(f, "doc"), Catch::StartsWith("https://"));
    REQUIRE(f.HasMember("replies"));
    REQUIRE(f["replies"].IsArray());
    REQUIRE_FALSE(f["replies"].Empty());
    for (const Value& r : f["replies"].GetArray()) {
        REQUIRE(r.IsObject());
        for (const std::string& k : keys_of(r)) CHECK(k_reply_keys.count(k) == 1);
        REQUIRE(r.HasMember("status"));
        REQUIRE(r["status"].IsInt());
        REQUIRE(r.HasMember("body"));
        if (r.HasMember("headers")) REQUIRE(r["headers"].IsObject());
    }
    REQUIRE(f.HasMember("expect"));
    const Value& expect = f["expect"];
    REQUIRE(expect.IsObject());
    const std::set<std::string> keys = keys_of(expect);
    for (const std::string& k : keys)
        CHECK((k_reply_expectations.count(k) + k_error_expectations.count(k) +
               k_optional_expectations.count(k)) == 1);
    CHECK((has_all(keys, k_reply_expectations) != has_all(keys, k_error_expectations)));
    REQUIRE(expect.HasMember("requests"));
    REQUIRE(expect["requests"].IsInt());
}

// A token count or null, as text, so both sides compare alike.
std::string canonical_number(const Value& v) {
    return v.IsNull() ? "null" : std::to_string(v.GetInt64());
}

std::vector<test::scripted_reply> script_of(const Value& replies) {
    std::vector<test::scripted_reply> script;
    for (const Value& r : replies.GetArray()) {
        test::scripted_reply s;
        s.status = r["status"].GetInt();
        if (r.HasMember("headers"))
            for (const auto& h : r["headers"].GetObject())
                s.headers[h.name.GetString()] = text_at(r["headers"], h.name.GetString());
        s.body = r["body"].IsString() ? r["body"].GetString() : to_compact_json(r["body"]);
        script.push_back(s);
    }
    return script;
}

llm_settings settings_of(const Value& f, const test::loopback_http_server& server) {
    llm_settings s;
    s.provider = *k_llm_providers.parse(text_at(f, "provider"));
    if (s.provider == llm_provider::openai) s.api = *k_openai_apis.parse(text_at(f, "api"));
    s.model = f.HasMember("model") ? text_at(f, "model") : "model-under-test";
    s.base_url = server.url("/v1");
    s.timeout = 5s;
    return s;
}

// The path each API is posted to under base_url = <server>/v1.
std::string expected_target(const llm_settings& s) {
    if (s.provider == llm_provider::anthropic) return "/v1/messages";
    return s.api == openai_api::responses ? "/v1/responses" : "/v1/chat/completions";
}

std::vector<std::string> strings_of(const Value& v) {
    std::vector<std::string> out;
    if (v.IsString()) return {v.GetString()};
    REQUIRE(v.IsArray());
    for (const Value& s : v.GetArray()) {
        REQUIRE(s.IsString());
        out.push_back(s.GetString());
    }
    return out;
}

void check_reply(const Value& expect, const model_reply& r) {
    CHECK(r.text == text_at(expect, "text"));
    CHECK(r.stop_reason == text_at(expect, "stop_reason"));
    const Value& calls = expect["calls"];
    REQUIRE(calls.IsArray());
    REQUIRE(r.calls.size() == calls.Size());
    for (rapidjson::SizeType i = 0; i < calls.Size(); ++i) {
        INFO("call " << i);
        CHECK(r.calls[i].name == text_at(calls[i], "name"));
        CHECK(r.calls[i].arguments_json == text_at(calls[i], "arguments"));
        if (calls[i].HasMember("id")) CHECK(r.calls[i].id == text_at(calls[i], "id"));
    }
    const Value& usage = expect["usage"];
    REQUIRE(usage.IsObject());
    REQUIRE(keys_of(usage) == std::set<std::string>{"prompt", "completion", "reasoning", "cached"});
    CHECK(r.usage.prompt == usage["prompt"].GetInt64());
    CHECK(r.usage.completion == usage["completion"].GetInt64());
    // null: the API does not count reasoning apart (Anthropic's thinking is in completion).
    CHECK(r.usage.reasoning_reported == !usage["reasoning"].IsNull());
    CHECK(r.usage.reasoning == (usage["reasoning"].IsNull() ? 0 : usage["reasoning"].GetInt64()));
    CHECK(r.usage.cached == usage["cached"].GetInt64());
    if (expect.HasMember("raw_items_contains"))
        for (const std::string& part : strings_of(expect["raw_items_contains"]))
            CHECK_THAT(r.raw_items_json, Catch::Contains(part));
}

// The client's outcome: the reply, or the error it raised (and the HTTP status it carries).
struct outcome {
    std::optional<model_reply> reply;
    std::string error;
    long status = 0;
};

outcome send_once(llm_client& client) {
    const std::vector<chat_turn> turns = {chat_turn::from_user("Make it faster.")};
    const std::vector<tool_spec> tools = {
        {"compile", "Compile a kernel",
         R"({"type": "object", "properties": {"source": {"type": "string"}}})"}};
    outcome o;
    try {
        o.reply = client.send("You optimise CUDA kernels.", turns, tools);
    } catch (const llm_api_error& e) {
        o.error = e.what();
        o.status = e.status();
    } catch (const std::exception& e) {
        o.error = e.what();
    }
    return o;
}

void check_error(const Value& expect, const outcome& o) {
    REQUIRE_FALSE(o.reply);
    CHECK(o.status == expect["error_status"].GetInt());
    for (const std::string& part : strings_of(expect["error_contains"]))
        CHECK_THAT(o.error, Catch::Contains(part));
    if (expect.HasMember("error_one_line") && expect["error_one_line"].GetBool())
        CHECK(o.error.find('\n') == std::string::npos);
    CHECK(o.error.find(k_key) == std::string::npos);
}

// What went over the wire and what was written down: one request per attempt, each to the
// API's path with the key; one wait before each retry; model-001.json lists the attempts with
// the same statuses and waits, and holds no key.
void check_exchange(const Value& f, const llm_settings& s, const test::loopback_http_server& server,
                    const std::vector<std::chrono::milliseconds>& slept, const fs::path& folder) {
    const Value& expect = f["expect"];
    const auto requests = server.requests();
    const std::size_t attempts = static_cast<std::size_t>(expect["requests"].GetInt());
    CHECK(requests.size() == attempts);
    for (const test::recorded_request& r : requests) {
        CHECK(r.target == expected_target(s));
        if (s.provider == llm_provider::anthropic)
            CHECK(r.headers.count("x-api-key") == 1);
        else
            CHECK(r.headers.count("authorization") == 1);
    }
    REQUIRE(slept.size() + 1 == requests.size());
    if (expect.HasMember("waited_ms")) {
        REQUIRE(expect["waited_ms"].IsArray());
        REQUIRE(slept.size() == expect["waited_ms"].Size());
        for (std::size_t i = 0; i < slept.size(); ++i)
            CHECK(slept[i].count() ==
                  expect["waited_ms"][static_cast<rapidjson::SizeType>(i)].GetInt64());
    }
    const std::string record_text = test::read_text(folder / "model-001.json");
    CHECK(record_text.find(k_key) == std::string::npos);
    const auto record = parse_json(record_text, "model-001.json");
    REQUIRE(record["attempts"].Size() == requests.size());
    const Value& replies = f["replies"];
    for (rapidjson::SizeType i = 0; i < record["attempts"].Size(); ++i) {
        const Value& scripted = replies[std::min(i, replies.Size() - 1)];
        CHECK(record["attempts"][i]["http_status"].GetInt() == scripted["status"].GetInt());
        if (i < slept.size())
            CHECK(record["attempts"][i]["waited_ms"].GetDouble() ==
                  static_cast<double>(slept[i].count()));
    }
    CHECK(record["retries"].GetInt() == static_cast<int>(requests.size()) - 1);
    if (!expect.HasMember("usage")) {  // a failure: written down with its error, no usage
        CHECK(record["usage"].IsNull());
        CHECK(record["error"].IsString());
        return;
    }
    // The record says what the reply said, in the same convention.
    const Value& usage = expect["usage"];
    CHECK(std::string(record["stop_reason"].GetString()) == text_at(expect, "stop_reason"));
    CHECK(record["usage"]["prompt_tokens"].GetInt64() == usage["prompt"].GetInt64());
    CHECK(record["usage"]["completion_tokens"].GetInt64() == usage["completion"].GetInt64());
    CHECK(record["usage"]["cached_tokens"].GetInt64() == usage["cached"].GetInt64());
    CHECK(canonical_number(record["usage"]["reasoning_tokens"]) ==
          canonical_number(usage["reasoning"]));
}

void run_fixture(const fs::path& file) {
    const auto f = parse_json(test::read_text(file), file.filename().string());
    check_fixture_shape(f);
    test::loopback_http_server server(script_of(f["replies"]));
    const llm_settings s = settings_of(f, server);
    test::scratch_folder dir;
    std::vector<std::chrono::milliseconds> slept;
    const std::unique_ptr<http_transport> transport = make_curl_transport();
    retry_settings retries;
    retries.max_attempts = 3;
    llm_client client(s, k_key, *transport, retries, {}, dir.path(),
                      [&slept](std::chrono::milliseconds d) { slept.push_back(d); });
    const outcome o = send_once(client);
    const Value& expect = f["expect"];
    INFO("error: " << o.error);
    if (expect.HasMember("error_contains"))
        check_error(expect, o);
    else {
        REQUIRE(o.reply);
        check_reply(expect, *o.reply);
        CHECK(client.totals().usage.prompt == o.reply->usage.prompt);
    }
    check_exchange(f, s, server, slept, dir.path());
}

}  // namespace

TEST_CASE(
    "every documented reply shape in tests/fixtures/model-replies goes through the client "
    "as its fixture expects",
    "[model_fixtures]") {
    const std::vector<fs::path> files = fixture_files();
    INFO("fixture folder: " << k_folder.string());
    REQUIRE_FALSE(files.empty());
    for (const fs::path& file : files) {
        DYNAMIC_SECTION(file.filename().string()) {
            run_fixture(file);
        }
    }
}
