// The model client against a real HTTP server on loopback: records, budgets, failures.
#include "orchestrator/model/llm_client.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "test_support.hpp"

using namespace cuopt;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const char* k_key = "sk-test-4f9a8b7c6d5e";

std::string openai_reply(long long prompt, long long completion) {
    return R"({"choices": [{"finish_reason": "stop", "message": {"content": "ok"}}],
               "usage": {"prompt_tokens": )" +
           std::to_string(prompt) + R"(, "completion_tokens": )" + std::to_string(completion) +
           "}}";
}

struct client_fixture {
    test::scratch_folder dir;
    std::unique_ptr<http_transport> transport = make_curl_transport();
    std::vector<std::chrono::milliseconds> slept;
    llm_client make(const test::loopback_http_server& server, llm_budget budget = {}) {
        llm_settings s;
        s.base_url = server.url("/v1");
        s.timeout = 2s;
        retry_settings r;
        r.max_attempts = 3;
        return llm_client(s, k_key, *transport, r, budget, dir.path(),
                          [this](std::chrono::milliseconds d) { slept.push_back(d); });
    }
    std::vector<chat_turn> turns() const { return {chat_turn::from_user("hello")}; }
};

}  // namespace

TEST_CASE("each exchange is saved as model-NNN.json with usage, status and retries, and no key") {
    client_fixture f;
    test::loopback_http_server server(
        {{429, {{"Retry-After", "1"}}, R"({"error": "rate"})"}, {200, {}, openai_reply(100, 20)}});
    llm_client client = f.make(server);
    const model_reply r = client.send("sys", f.turns(), {});
    CHECK(r.text == "ok");
    CHECK(client.totals().calls == 1);
    CHECK(client.totals().usage.prompt == 100);
    const auto rec = parse_json(test::read_text(f.dir / "model-001.json"), "model-001.json");
    CHECK(rec["response"]["http_status"].GetInt() == 200);
    CHECK(rec["retries"].GetInt() == 1);
    CHECK(rec["usage"]["completion_tokens"].GetInt() == 20);
    CHECK(rec["request"]["body"]["messages"][1]["content"].GetString() == std::string("hello"));
    CHECK(test::read_text(f.dir / "model-001.json").find(k_key) == std::string::npos);
    CHECK(server.requests().at(0).headers.at("authorization") ==
          std::string("Bearer ") + k_key);  // it was sent, not saved
}

TEST_CASE("the call budget and the token budget stop the run before a request is sent") {
    client_fixture f;
    test::loopback_http_server server({{200, {}, openai_reply(600, 500)}});
    llm_client calls = f.make(server, {1, 0});
    calls.send("sys", f.turns(), {});
    CHECK_THROWS_AS(calls.send("sys", f.turns(), {}), llm_budget_exhausted);
    llm_client tokens = f.make(server, {0, 1000});
    tokens.send("sys", f.turns(), {});
    CHECK_THROWS_WITH(tokens.send("sys", f.turns(), {}),
                      Catch::Contains("budget of 1000 tokens is spent (1100 used)"));
    CHECK(server.requests().size() == 2);
}

TEST_CASE("an invalid key (401) is an API error with the body, not retried") {
    client_fixture f;
    test::loopback_http_server server(
        {{401,
          {},
          R"({"error": {"message": "Incorrect API key provided: sk-test-4f9a8b7c6d5e"}})"}});
    llm_client client = f.make(server);
    try {
        client.send("sys", f.turns(), {});
        FAIL("no error");
    } catch (const llm_api_error& e) {
        CHECK(e.status() == 401);
        CHECK_THAT(e.what(), Catch::Contains("Incorrect API key") && !Catch::Contains(k_key));
    }
    CHECK(server.requests().size() == 1);
    CHECK(test::read_text(f.dir / "model-001.json").find(k_key) == std::string::npos);
}

TEST_CASE("a reply past 16 MiB is cut there in one line, not retried, not recorded whole") {
    client_fixture f;
    test::loopback_http_server server(
        {{200, {}, "{\"pad\": \"" + std::string((16 << 20) + 4096, 'x') + "\"}"}});
    llm_client client = f.make(server);
    CHECK_THROWS_WITH(
        client.send("sys", f.turns(), {}),
        Catch::Contains("passed 16 MiB and was cut there") && Catch::Contains("256 MiB a run"));
    CHECK(server.requests().size() == 1);
    CHECK(fs::file_size(f.dir / "model-001.json") < (1u << 20));
    CHECK(client.totals().reply_bytes <= (16 << 20));
    // A resumed run counts what its recorded replies held; past 256 MiB nothing more is sent.
    recorded_spending spent = read_recorded_spending(f.dir.path());
    CHECK(spent.totals.reply_bytes == client.totals().reply_bytes);
    spent.totals.reply_bytes = k_max_run_reply_bytes;
    llm_client resumed = f.make(server);
    resumed.restore(spent);
    CHECK_THROWS_WITH(resumed.send("sys", f.turns(), {}),
                      Catch::Contains("the run's model replies reached 256 MiB"));
    CHECK(server.requests().size() == 1);
}

TEST_CASE("a model the API does not know is one line naming --model, never a retry loop") {
    client_fixture f;
    test::loopback_http_server server(
        {{404,
          {},
          R"({"error": {"message": "The model `gpt-5-mini` does not exist or you do not have access to it.", "type": "invalid_request_error", "code": "model_not_found"}})"}});
    llm_client client = f.make(server);
    try {
        client.send("sys", f.turns(), {});
        FAIL("no error");
    } catch (const llm_api_error& e) {
        CHECK(e.status() == 404);
        CHECK_THAT(e.what(), Catch::Contains("is not available from openai") &&
                                 Catch::Contains("does not exist") && Catch::Contains("--model") &&
                                 Catch::Contains("CUDA_OPTIMIZER_MODEL"));
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
    CHECK(server.requests().size() == 1);
    CHECK(f.slept.empty());
    // Anthropic says it with a 404 not_found_error too.
    http_response r;
    r.status = 400;
    r.body =
        R"({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}})";
    CHECK(model_missing(r));
    CHECK(api_message(r.body) == "model: claude-x");
}

TEST_CASE("a retired model is one line naming --model, another 400 is one line, never raw JSON") {
    client_fixture f;
    test::loopback_http_server server(
        {{400,
          {},
          std::string(
              R"({"type": "error", "error": {"type": "invalid_request_error", "message": "model: )") +
              default_model(llm_provider::openai) +
              R"( has been retired. Please migrate to a newer model."}})"}});
    llm_client client = f.make(server);
    CHECK_THROWS_WITH(client.send("sys", f.turns(), {}), Catch::Contains("is not available from") &&
                                                             Catch::Contains("has been retired") &&
                                                             Catch::Contains("--model"));
    // A parameter retired for the model is no missing model: the fix is not --model.
    http_response parameter;
    parameter.status = 400;
    parameter.body =
        R"({"error": {"message": "thinking.type enabled is retired for this model; use adaptive"}})";
    CHECK_FALSE(model_missing(parameter, "claude-opus-4-8"));
    http_response retired = parameter;
    retired.body = R"({"error": {"message": "Model CLAUDE-3-OPUS-20240229 has been Retired."}})";
    CHECK(model_missing(retired, "claude-3-opus-20240229"));
    test::loopback_http_server other(
        {{400,
          {},
          "{\"error\": {\"message\": \"Unsupported value: 'reasoning_effort'\\nsee docs\", "
          "\"type\": \"invalid_request_error\"}}"}});
    llm_client second = f.make(other);
    try {
        second.send("sys", f.turns(), {});
        FAIL("no error");
    } catch (const llm_api_error& e) {
        const std::string what = e.what();
        CHECK(e.status() == 400);
        CHECK_THAT(what, Catch::Contains("HTTP 400 from openai") &&
                             Catch::Contains("Unsupported value: 'reasoning_effort'") &&
                             !Catch::Contains("invalid_request_error") && !Catch::Contains(k_key));
        CHECK(what.find('\n') == std::string::npos);
    }
}

TEST_CASE("a 404 that is not about the model names --base-url, not --model") {
    client_fixture f;
    test::loopback_http_server server({{404, {}, R"({"detail": "Not Found"})"}});
    llm_client client = f.make(server);
    try {
        client.send("sys", f.turns(), {});
        FAIL("no error");
    } catch (const llm_api_error& e) {
        CHECK(e.status() == 404);
        CHECK_THAT(e.what(), Catch::Contains("HTTP 404 from " + server.url("/v1")) &&
                                 Catch::Contains("check --base-url"));
        CHECK(std::string(e.what()).find("--model") == std::string::npos);
    }
    CHECK(server.requests().size() == 1);
}

TEST_CASE("500 then success, a truncated body and a hang past the timeout are retried") {
    client_fixture f;
    test::loopback_http_server server({{500, {}, "boom"},
                                       {200, {}, "{\"choices\": [", 0ms, true},
                                       {200, {}, "{}", 3000ms},
                                       {200, {}, openai_reply(1, 1)}});
    llm_client client = f.make(server);
    CHECK_THROWS_AS(client.send("sys", f.turns(), {}),
                    llm_api_error);  // 3 attempts: 500, truncated, hang
    CHECK(client.send("sys", f.turns(), {}).text == "ok");
    const auto rec = parse_json(test::read_text(f.dir / "model-001.json"), "model-001.json");
    CHECK(rec["attempts"].Size() == 3);
    CHECK_THAT(rec["error"].GetString(), Catch::StartsWith("gave up after 3 attempts"));
}

TEST_CASE("a reply that is not the documented shape is recorded and raised as a protocol error") {
    client_fixture f;
    test::loopback_http_server server({{200, {}, R"({"unexpected": true})"}});
    llm_client client = f.make(server);
    CHECK_THROWS_AS(client.send("sys", f.turns(), {}), model_protocol_error);
    const auto rec = parse_json(test::read_text(f.dir / "model-001.json"), "model-001.json");
    CHECK_THAT(rec["error"].GetString(), Catch::Contains("field choices: expected a member"));
}

TEST_CASE("cost is estimated from the price table and unknown models say so") {
    llm_totals t;
    t.usage.prompt = 2'000'000;
    t.usage.completion = 500'000;
    const price_table prices = {{"gpt-5-mini", {0.25, 2.0, std::nullopt, std::nullopt}}};
    CHECK(*estimate_cost(prices, "gpt-5-mini", t) == Approx(0.5 + 1.0));
    // A cached-input price applies to the cached part of the prompt; without one it is input.
    llm_totals c = t;
    c.usage.cached = 1000000;
    const price_table cached = {{"m", {0.25, 2.0, 0.025, std::nullopt}}};
    CHECK(*estimate_cost(cached, "m", c) ==
          Approx(((c.usage.prompt - 1000000) * 0.25 + 1000000 * 0.025 + c.usage.completion * 2.0) /
                 1e6));
    CHECK(*estimate_cost({{"m", {0.25, 2.0, std::nullopt, std::nullopt}}}, "m", c) ==
          Approx(0.5 + 1.0));
    // Anthropic: cache reads and writes are input, thinking is output; all of it is priced,
    // cache writes at 1.25x the input price unless the table names their price.
    const model_reply a = parse_model_reply(llm_provider::anthropic, R"({"content": [
        {"type": "thinking", "thinking": "...", "signature": "s"},
        {"type": "tool_use", "id": "t1", "name": "compile", "input": {}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 300, "cache_read_input_tokens": 600,
        "cache_creation_input_tokens": 100, "output_tokens": 5000}})");
    llm_totals at;
    at.usage = a.usage;
    CHECK(a.usage.prompt == 1000);
    CHECK(a.usage.cached == 600);
    CHECK(a.usage.cache_written == 100);
    CHECK(a.usage.completion == 5000);
    CHECK_FALSE(a.usage.reasoning_reported);  // no output_tokens_details in this reply
    CHECK(*estimate_cost(cached, "m", at) ==
          Approx((300 * 0.25 + 100 * 0.25 * 1.25 + 600 * 0.025 + 5000 * 2.0) / 1e6));
    const price_table written = {{"m", {0.25, 2.0, 0.025, 0.5}}};
    CHECK(*estimate_cost(written, "m", at) ==
          Approx((300 * 0.25 + 100 * 0.5 + 600 * 0.025 + 5000 * 2.0) / 1e6));
    CHECK_FALSE(estimate_cost(prices, "some-local-model", t));
}
