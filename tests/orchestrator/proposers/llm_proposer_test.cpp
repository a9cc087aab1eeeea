// The model proposer end to end: the real cuda-optimizer, fake-harness, and a scripted
// model API on loopback speaking OpenAI's Chat Completions.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "orchestrator/model/llm_protocol.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::json_string;

const std::string k_examples = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";
const char* k_key = "sk-itest-7d1e5c9b3a";

std::string tool_reply(const std::string& name, const std::string& args_json) {
    static int id = 0;
    return R"({"choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [{"id": "call_)" +
           std::to_string(++id) + R"(", "type": "function", "function": {"name": ")" + name +
           R"(", "arguments": )" + json_string(args_json) +
           "}}]}}], \"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 100}}";
}

std::string kernel(const std::string& marker) {
    return test::read_text(k_examples + "initial.cu") + "// " + marker + "\n";
}

std::string submit(const std::string& marker, bool with_rationale = true) {
    return tool_reply("submit_candidate",
                      "{\"source\": " + json_string(kernel(marker)) +
                          (with_rationale ? ", \"rationale\": \"fewer cycles\"" : "") + "}");
}

struct llm_fixture {
    test::scratch_folder dir;
    llm_fixture() {
        for (const char* f : {"reference.cu", "input_cases.json"})
            dir.write(f, test::read_text(k_examples + f));
        dir.write("initial.cu", kernel("FAKE_MS=2"));
    }
    test::process_result run(const test::loopback_http_server& server,
                             std::vector<std::string> extra) {
        std::vector<std::string> a =
            test::joined({"-u", "ANTHROPIC_API_KEY", "-u", "OPENAI_BASE_URL",
                          std::string("OPENAI_API_KEY=") + k_key, CUOPT_OPTIMIZER_BINARY},
                         test::optimize_args(dir.path(), CUOPT_FAKE_HARNESS_BINARY),
                         {"--base-url", server.url("/v1")});
        a.insert(a.end(), extra.begin(), extra.end());
        return test::run_program("/usr/bin/env", a);
    }
    fs::path run_folder() const { return dir / "results/run-001"; }
    // Every artifact of the run, scanned for the key.
    bool key_anywhere() const {
        for (const auto& e : fs::recursive_directory_iterator(run_folder()))
            if (e.is_regular_file() && test::read_text(e.path()).find(k_key) != std::string::npos)
                return true;
        return false;
    }
};

}  // namespace

TEST_CASE(
    "a 3-iteration model run compiles, fixes an error, submits, improves and records every "
    "exchange",
    "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({
        {200,
         {},
         tool_reply("compile", "{\"source\": " + json_string(kernel("FAKE_COMPILE_ERROR")) + "}")},
        {200, {}, tool_reply("compile", "{\"source\": " + json_string(kernel("FAKE_MS=1")) + "}")},
        {200, {}, submit("FAKE_MS=1")},
        {200, {}, submit("FAKE_MS=0.5", false)},  // breaks the schema: a correction turn
        {200, {}, submit("FAKE_MS=0.5")},
        {200,
         {},
         R"({"choices": [{"finish_reason": "stop", "message": {"content": "I think it is fast now."}}]})"},
        {200, {}, submit("FAKE_MS=0.4")},
    });
    const auto r = f.run(server, {"--max-iterations", "3", "--proposer", "llm"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains(std::string("proposer llm (openai, ") +
                                         default_model(llm_provider::openai)));
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 4);
    for (const auto& a : history["attempts"].GetArray())
        CHECK(std::string(a["verdict"].GetString()) == "valid");
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(summary["best"]["iteration"].GetInt() == 3);
    CHECK(summary["best"]["speedup_vs_initial"].GetDouble() == Approx(5.0));
    CHECK(summary["model"]["calls"].GetInt() == 7);
    CHECK(summary["model"]["prompt_tokens"].GetInt() ==
          6000);  // the plain-text reply reported no usage
    CHECK(std::string(summary["model"]["estimated_cost_usd"].GetString()) == "unknown");
    test::read_checked_json(f.run_folder() / "run.json", "run");
    for (int i = 1; i <= 7; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "model-%03d.json", i);
        CHECK(fs::exists(f.run_folder() / name));
    }
    // The compile tool's answer and the correction went back to the model.
    const auto requests = server.requests();
    REQUIRE(requests.size() == 7);
    CHECK_THAT(requests[1].body, Catch::Contains("did not compile"));
    CHECK_THAT(requests[4].body, Catch::Contains("missing required field 'rationale'"));
    CHECK_THAT(requests[6].body, Catch::Contains("That was not a tool call"));
    CHECK(requests[0].headers.at("authorization") == std::string("Bearer ") + k_key);
    CHECK_FALSE(f.key_anywhere());
}

TEST_CASE("an invalid key stops the run cleanly with the API's message and exit 25",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server(
        {{401, {}, R"({"error": {"message": "Incorrect API key provided"}})"}});
    const auto r = f.run(server, {"--max-iterations", "3"});
    CHECK(r.exit_code == 25);
    CHECK_THAT(r.output, Catch::Contains("the model API failed: HTTP 401") &&
                             Catch::Contains("Incorrect API key"));
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "error");
    CHECK(test::read_checked_json(f.run_folder() / "history.json", "history")["attempts"].Size() ==
          1);
    CHECK_FALSE(f.key_anywhere());
}

TEST_CASE(
    "a key typed into --base-url never reaches an artifact or a log line, and a quoted model name "
    "stays in the record",
    "[integration]") {
    llm_fixture f;
    test::loopback_http_server server(
        {{401, {}, R"({"error": {"message": "Incorrect API key provided"}})"}});
    std::string url = server.url("/v1");
    url.insert(url.find("://") + 3, "user:URLSECRET42@");
    const auto r =
        f.run(server, {"--max-iterations", "1", "--base-url", url, "--model", "gpt\"quoted"});
    CHECK(r.exit_code == 25);
    // A quote in the model name is escaped, not a broken model block.
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(std::string(summary["model"]["model"].GetString()) == "gpt\"quoted");
    CHECK(r.output.find("URLSECRET42") == std::string::npos);
    for (const auto& e : fs::recursive_directory_iterator(f.run_folder()))
        if (e.is_regular_file()) {
            INFO(e.path());
            CHECK(test::read_text(e.path()).find("URLSECRET42") == std::string::npos);
        }
}

TEST_CASE("the model-call budget ends the run with budget_exhausted, nothing lost",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({{200, {}, tool_reply("compile", "{\"source\": \"x\"}")}});
    const auto r = f.run(server, {"--max-model-calls", "3", "--max-iterations", "5"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "budget_exhausted");
    CHECK(summary["model"]["calls"].GetInt() == 3);
    CHECK(server.requests().size() == 3);
}

TEST_CASE(
    "auto picks the autotuner without a key, and --proposer llm without one is a one-line error",
    "[integration]") {
    llm_fixture f;
    const std::vector<std::string> base = test::joined(
        {"-u", "OPENAI_API_KEY", "-u", "OPENAI_BASE_URL", "-u", "ANTHROPIC_API_KEY",
         CUOPT_OPTIMIZER_BINARY},
        test::optimize_args(f.dir.path(), CUOPT_FAKE_HARNESS_BINARY), {"--max-iterations", "0"});
    auto a = base;
    const auto autotune = test::run_program("/usr/bin/env", a);
    CHECK(autotune.exit_code == 0);
    CHECK_THAT(autotune.output,
               Catch::Contains("proposer autotune (auto: no model is configured)"));
    a.insert(a.end(), {"--proposer", "llm", "--provider", "anthropic"});
    const auto missing = test::run_program("/usr/bin/env", a);
    CHECK(missing.exit_code == 64);
    CHECK_THAT(missing.output,
               Catch::Contains("--proposer llm needs a key: set ANTHROPIC_API_KEY"));
}

TEST_CASE("an unreadable model reply gets a correction turn and the iteration goes on",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server(
        {{200, {}, "this is not JSON"}, {200, {}, submit("FAKE_MS=1")}});
    const auto r = f.run(server, {"--max-iterations", "1"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "valid");
    CHECK_THAT(server.requests().at(1).body, Catch::Contains("could not be read"));
}

TEST_CASE("a model that never submits has its iteration recorded as an invalid submission",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server(
        {{200, {}, R"({"choices": [{"message": {"content": "thinking..."}}]})"}});
    const auto r = f.run(server, {"--max-iterations", "1"});
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "invalid_submission");
    CHECK_THAT(history["attempts"][1]["reason"].GetString(),
               Catch::Contains("no tool call after corrections"));
    CHECK(server.requests().size() == 3);  // the first reply and two corrections
}

TEST_CASE("a tool call whose arguments pass 256 KiB ends the proposal in one line, never echoed",
          "[integration]") {
    llm_fixture f;
    const std::string flood = "{\"source\": " + json_string(std::string(300 << 10, 'x')) + "}";
    test::loopback_http_server server(
        {{200, {}, tool_reply("compile", flood)}, {200, {}, submit("FAKE_MS=1")}});
    const auto r = f.run(server, {"--max-iterations", "2"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 3);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "invalid_submission");
    CHECK_THAT(history["attempts"][1]["reason"].GetString(),
               Catch::Contains("a compile call's arguments were") &&
                   Catch::Contains("over the 256 KiB a call may carry"));
    // The next iteration's conversation starts afresh: the flood went back to no one.
    REQUIRE(server.requests().size() == 2);
    CHECK(server.requests().at(1).body.size() < (100u << 10));
    CHECK(std::string(history["attempts"][2]["verdict"].GetString()) == "valid");
}

// Not run by default: tools/bench/model_loop_overhead.sh runs it and reads what it prints.
TEST_CASE("bench: orchestrator time per model iteration against an instant API", "[.bench]") {
    llm_fixture f;
    std::vector<test::scripted_reply> script;
    for (int i = 0; i < 7; ++i)
        script.push_back({200, {}, submit("FAKE_MS=" + std::to_string(1.9 - 0.1 * i))});
    test::loopback_http_server server(script);
    // The evidence stage runs once per search, not per iteration: left out of the figure.
    const auto r = f.run(server, {"--max-iterations", "7", "--quiet", "--no-evidence"});
    REQUIRE(r.exit_code == 0);
    const auto run = test::read_checked_json(f.run_folder() / "run.json", "run");
    const double per_iteration_ms =
        (run["wall_s"].GetDouble() - run["harness_wall_s"].GetDouble()) * 1000.0 / 7.0;
    std::printf(
        "model loop: %.2f ms per iteration in the orchestrator outside the harness's runs (7 "
        "iterations)\n",
        per_iteration_ms);
    CHECK(per_iteration_ms <= 50.0);
}

TEST_CASE("with --use-nsight the model can profile the current best and gets ncu's metrics back",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    llm_fixture f;
    f.dir.write("initial.cu", test::read_text(k_examples + "initial.cu"));
    test::loopback_http_server server(
        {{200, {}, tool_reply("profile", R"({"case": "perf-256"})")},
         {200,
          {},
          tool_reply("submit_candidate",
                     "{\"source\": " + json_string(test::read_text(k_examples + "initial.cu")) +
                         ", \"rationale\": \"same\"}")}});
    std::vector<std::string> a = {"--max-iterations", "1", "--use-nsight", "--proposer", "llm"};
    auto r = [&] {
        std::vector<std::string> args =
            test::joined({std::string("OPENAI_API_KEY=") + k_key, CUOPT_OPTIMIZER_BINARY},
                         test::optimize_args(f.dir.path(), CUOPT_HARNESS_BINARY),
                         {"--base-url", server.url("/v1")});
        args.insert(args.end(), a.begin(), a.end());
        return test::run_program("/usr/bin/env", args);
    }();
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    INFO(requests[1].body.substr(0, 4000));
    CHECK_THAT(requests[1].body, Catch::Contains("gpu__time_duration.sum") &&
                                     Catch::Contains("launch__registers_per_thread"));
}

namespace {

// A Responses API reply with a reasoning item and one function call.
std::string responses_call(const std::string& name, const std::string& args_json, int id) {
    return R"({"id": "resp_)" + std::to_string(id) +
           R"(", "object": "response", "status": "completed", "output": [)"
           R"({"type": "reasoning", "id": "rs_)" +
           std::to_string(id) + R"(", "summary": [], "encrypted_content": "enc-)" +
           std::to_string(id) +
           R"("},)"
           R"({"type": "function_call", "id": "fc_)" +
           std::to_string(id) + R"(", "call_id": "call_)" + std::to_string(id) + R"(", "name": ")" +
           name + R"(", "arguments": )" + json_string(args_json) +
           R"(}], "usage": {"input_tokens": 900, "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 50}}})";
}

}  // namespace

TEST_CASE("with --api responses the run speaks the Responses API and carries reasoning items back",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({
        {200,
         {},
         responses_call("compile", "{\"source\": " + json_string(kernel("FAKE_MS=1")) + "}", 1)},
        {200,
         {},
         responses_call("submit_candidate",
                        "{\"source\": " + json_string(kernel("FAKE_MS=1")) +
                            ", \"rationale\": \"fewer cycles\"}",
                        2)},
    });
    const auto r = f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--api",
                                  "responses", "--reasoning-effort", "low", "--no-evidence"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].target == "/v1/responses");
    const auto first = parse_json(requests[0].body, "first request");
    CHECK(std::string(first["reasoning"]["effort"].GetString()) == "low");
    CHECK(first["store"].IsFalse());
    // The second request holds the first reply's reasoning item verbatim, the call and its output.
    const auto second = parse_json(requests[1].body, "second request");
    const auto& in = second["input"];
    bool reasoning = false, call = false, output = false;
    for (const auto& item : in.GetArray()) {
        if (!item.HasMember("type")) continue;
        const std::string type = item["type"].GetString();
        reasoning |=
            type == "reasoning" && std::string(item["encrypted_content"].GetString()) == "enc-1";
        call |= type == "function_call" && std::string(item["call_id"].GetString()) == "call_1";
        output |=
            type == "function_call_output" && std::string(item["call_id"].GetString()) == "call_1";
    }
    CHECK(reasoning);
    CHECK(call);
    CHECK(output);
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "valid");
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(summary["model"]["reasoning_tokens"].GetInt() == 100);
}

TEST_CASE(
    "a reply cut at the output limit gets a correction that says so, a refusal ends the "
    "iteration",
    "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({
        {200,
         {},
         R"({"choices": [{"finish_reason": "length", "message": {"content": "Let me think about tiling in great detail"}}]})"},
        {200, {}, submit("FAKE_MS=1")},
        {200,
         {},
         R"({"choices": [{"finish_reason": "stop", "message": {"content": null, "refusal": "I can't help with that."}}]})"},
    });
    const auto r = f.run(server, {"--max-iterations", "2", "--proposer", "llm", "--no-evidence"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    CHECK_THAT(requests[1].body, Catch::Contains("cut at the output limit"));
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 3);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "valid");
    CHECK(std::string(history["attempts"][2]["verdict"].GetString()) == "invalid_submission");
    CHECK_THAT(std::string(history["attempts"][2]["reason"].GetString()),
               Catch::Contains("the model refused: refusal: I can't help"));
}

TEST_CASE("a reply cut at the output limit is sent again once with --max-output-tokens-retry",
          "[integration]") {
    llm_fixture f;
    const std::string cut =
        R"({"choices": [{"finish_reason": "length", "message": {"content": "Tiling first"}}]})";
    test::loopback_http_server server({{200, {}, cut}, {200, {}, submit("FAKE_MS=1")}});
    const auto r =
        f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--no-evidence",
                       "--max-output-tokens", "3000", "--max-output-tokens-retry", "9000"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    const auto first = parse_json(requests[0].body, "first request");
    const auto again = parse_json(requests[1].body, "retry");
    CHECK(first["max_completion_tokens"].GetInt() == 3000);
    CHECK(again["max_completion_tokens"].GetInt() == 9000);
    // The same conversation again: the cut reply is not echoed, no correction is added.
    CHECK(again["messages"].Size() == first["messages"].Size());
    const auto record =
        parse_json(test::read_text(f.run_folder() / "model-001.json"), "model-001.json");
    CHECK(std::string(record["stop_reason"].GetString()) == "length");
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "valid");
    CHECK_THAT(std::string(history["attempts"][1]["rationale"].GetString()),
               Catch::Contains("cut at 3000 output tokens was sent again with 9000"));
}

TEST_CASE("a reply incomplete for another reason than the output limit is not sent again",
          "[integration]") {
    llm_fixture f;
    // openai 7.60's newer reasons: more output tokens would not mend them.
    const std::string stopped =
        R"({"status": "incomplete", "incomplete_details": {"reason": "max_messages"},
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "Tiling"}]}]})";
    test::loopback_http_server server(
        {{200, {}, stopped},
         {200,
          {},
          responses_call("submit_candidate",
                         "{\"source\": " + json_string(kernel("FAKE_MS=1")) +
                             ", \"rationale\": \"fewer cycles\"}",
                         2)}});
    const auto r = f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--api",
                                  "responses", "--no-evidence", "--max-output-tokens", "3000",
                                  "--max-output-tokens-retry", "9000"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    const auto again = parse_json(requests[1].body, "second request");
    CHECK(again["max_output_tokens"].GetInt() == 3000);  // not the retry's 9000
    CHECK_THAT(requests[1].body, Catch::Contains("That was not a tool call"));
}

TEST_CASE("with --nvidia-research the model reads allow-listed documentation, nothing else",
          "[integration]") {
    llm_fixture f;
    test::scratch_folder cache;
    test::loopback_http_server docs(
        {{200,
          {{"Content-Type", "text/html; charset=utf-8"}},
          "<html><body><nav>menu</nav><section id=\"coalescing\"><h1>Coalesced Access</h1>"
          "<p>Adjacent threads should read adjacent addresses.</p></section></body></html>"}});
    const std::string page = docs.url("/cuda/best-practices.html");
    test::loopback_http_server server({
        {200, {}, tool_reply("nvidia_docs", R"({"query": "coalesced access adjacent threads"})")},
        {200, {}, tool_reply("nvidia_docs", R"({"url": "https://example.org/leak?k=1"})")},
        {200, {}, submit("FAKE_MS=1")},
    });
    const auto r = f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--no-evidence",
                                  "--nvidia-research", "--docs-hosts", docs.url(""), "--docs-pages",
                                  page, "--docs-cache", cache.path().string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    CHECK_THAT(requests[0].body, Catch::Contains("\"nvidia_docs\""));
    // The query's answer (the section, its URL) and the refusal went back as tool results.
    CHECK_THAT(requests[1].body, Catch::Contains("## Coalesced Access") &&
                                     Catch::Contains("best-practices.html#coalescing") &&
                                     Catch::Contains("Adjacent threads should read"));
    CHECK(requests[1].body.find("menu") == std::string::npos);
    CHECK_THAT(requests[2].body,
               Catch::Contains("example.org is not on the documentation allow-list"));
    CHECK(docs.requests().size() == 1);
    // Each lookup is recorded beside the model's exchanges, numbered with them.
    const auto second =
        parse_json(test::read_text(f.run_folder() / "model-002.json"), "model-002.json");
    CHECK(std::string(second["kind"].GetString()) == "nvidia_docs");
    CHECK_THAT(std::string(second["response"]["pages"][0].GetString()),
               Catch::Contains("fetch " + page + " -> HTTP 200"));
    const auto fourth =
        parse_json(test::read_text(f.run_folder() / "model-004.json"), "model-004.json");
    CHECK_THAT(std::string(fourth["response"]["error"].GetString()),
               Catch::Contains("not on the documentation allow-list"));
    CHECK(fs::exists(f.run_folder() / "model-005.json"));
    CHECK_FALSE(fs::exists(f.run_folder() / "model-006.json"));
    CHECK_FALSE(fs::is_empty(cache.path()));
}

TEST_CASE(
    "an Anthropic run with a thinking budget (Haiku 4.5) carries thinking back and prices it as "
    "output",
    "[integration]") {
    llm_fixture f;
    const std::string thinking_call =
        R"({"id": "msg_1", "type": "message", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "Tile it.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque-1"},
        {"type": "tool_use", "id": "toolu_1", "name": "submit_candidate", "input": {"source": )" +
        json_string(kernel("FAKE_MS=1")) + R"(, "rationale": "tiles"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 100, "cache_read_input_tokens": 900,
        "output_tokens": 3000}})";
    const std::string compile_call =
        R"({"id": "msg_0", "type": "message", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "Check first.", "signature": "sig-0"},
        {"type": "tool_use", "id": "toolu_0", "name": "compile", "input": {"source": "x"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1000, "output_tokens": 2000}})";
    test::loopback_http_server server({{200, {}, compile_call}, {200, {}, thinking_call}});
    std::vector<std::string> a =
        test::joined({"-u", "OPENAI_API_KEY", "-u", "ANTHROPIC_BASE_URL",
                      std::string("ANTHROPIC_API_KEY=") + k_key, CUOPT_OPTIMIZER_BINARY},
                     test::optimize_args(f.dir.path(), CUOPT_FAKE_HARNESS_BINARY),
                     {"--base-url", server.url("/v1"), "--provider", "anthropic", "--proposer",
                      "llm", "--max-iterations", "1", "--no-evidence", "--thinking-budget", "4096",
                      "--model", "claude-haiku-4-5"});
    const auto r = test::run_program("/usr/bin/env", a);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[0].target == "/v1/messages");
    const auto first = parse_json(requests[0].body, "first request");
    CHECK(std::string(first["thinking"]["type"].GetString()) == "enabled");
    CHECK(first["thinking"]["budget_tokens"].GetInt() == 4096);
    CHECK(requests[0].headers.at("anthropic-version") == "2023-06-01");  // keeps temperature
    // The assistant turn goes back with its thinking block first, signature intact.
    const auto second = parse_json(requests[1].body, "second request");
    const auto& turn = second["messages"][1];
    CHECK(std::string(turn["role"].GetString()) == "assistant");
    CHECK(std::string(turn["content"][0]["type"].GetString()) == "thinking");
    CHECK(std::string(turn["content"][0]["signature"].GetString()) == "sig-0");
    CHECK(std::string(second["messages"][2]["content"][0]["type"].GetString()) == "tool_result");
    const auto summary = test::read_checked_json(f.run_folder() / "summary.json", "summary");
    CHECK(summary["model"]["prompt_tokens"].GetInt() == 2000);  // cache reads are prompt too
    CHECK(summary["model"]["cached_tokens"].GetInt() == 900);
    CHECK(summary["model"]["completion_tokens"].GetInt() == 5000);  // thinking included
    CHECK(summary["model"]["reasoning_tokens"].IsNull());
    test::read_checked_json(f.run_folder() / "run.json", "run");
}

namespace {

// An Anthropic reply of today's thinking models: an (omitted) thinking block, a tool call, and
// the thinking part of the output counted apart.
std::string adaptive_call(const std::string& name, const std::string& input_json, int id) {
    return R"({"id": "msg_)" + std::to_string(id) +
           R"(", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "thinking", "thinking": "", "signature": "sig-)" +
           std::to_string(id) + R"("},
        {"type": "tool_use", "id": "toolu_)" +
           std::to_string(id) + R"(", "name": ")" + name + R"(", "input": )" + input_json +
           R"(}], "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 400,
        "cache_read_input_tokens": 0, "output_tokens": 700,
        "output_tokens_details": {"thinking_tokens": 500}}})";
}

test::process_result run_anthropic(llm_fixture& f, const test::loopback_http_server& server,
                                   const std::vector<std::string>& extra) {
    std::vector<std::string> a = test::joined(
        {"-u", "OPENAI_API_KEY", "-u", "ANTHROPIC_BASE_URL", "-u", "CUDA_OPTIMIZER_MODEL",
         std::string("ANTHROPIC_API_KEY=") + k_key, CUOPT_OPTIMIZER_BINARY},
        test::optimize_args(f.dir.path(), CUOPT_FAKE_HARNESS_BINARY),
        {"--base-url", server.url("/v1"), "--provider", "anthropic", "--proposer", "llm",
         "--max-iterations", "1", "--no-evidence"});
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run_program("/usr/bin/env", a);
}

}  // namespace

TEST_CASE(
    "the default Anthropic model gets adaptive thinking and output_config.effort, with and "
    "without --thinking-budget, and its thinking tokens are recorded",
    "[integration]") {
    const std::string submit_input =
        "{\"source\": " + json_string(kernel("FAKE_MS=1")) + ", \"rationale\": \"tiles\"}";
    for (const bool with_budget : {false, true}) {
        DYNAMIC_SECTION((with_budget ? "with" : "without") << " --thinking-budget") {
            llm_fixture f;
            test::loopback_http_server server(
                {{200, {}, adaptive_call("compile", R"({"source": "x"})", 0)},
                 {200, {}, adaptive_call("submit_candidate", submit_input, 1)}});
            std::vector<std::string> extra = {"--reasoning-effort", "high"};
            if (with_budget) extra.insert(extra.end(), {"--thinking-budget", "8000"});
            const auto r = run_anthropic(f, server, extra);
            INFO(r.output);
            REQUIRE(r.exit_code == 0);
            CHECK_THAT(r.output, Catch::Contains("(anthropic, claude-sonnet-5-5, messages API at " +
                                                 server.url("/v1/messages") +
                                                 ", effort high, adaptive thinking)"));
            CHECK((r.output.find("--thinking-budget 8000: claude-sonnet-5-5 thinks adaptively "
                                 "only") != std::string::npos) == with_budget);
            const auto requests = server.requests();
            REQUIRE(requests.size() == 2);
            CHECK(requests[0].headers.at("anthropic-version") == "2026-10-21");
            for (const auto& req : requests) {
                const auto body = parse_json(req.body, "request");
                CHECK(std::string(body["thinking"]["type"].GetString()) == "adaptive");
                CHECK_FALSE(body["thinking"].HasMember("budget_tokens"));
                CHECK(std::string(body["output_config"]["effort"].GetString()) == "high");
                CHECK_FALSE(body.HasMember("temperature"));
            }
            const auto second = parse_json(requests[1].body, "second request");
            CHECK(std::string(second["messages"][1]["content"][0]["signature"].GetString()) ==
                  "sig-0");
            const auto summary =
                test::read_checked_json(f.run_folder() / "summary.json", "summary");
            const auto& model = summary["model"];
            CHECK(model["reasoning_tokens"].GetInt() == 1000);  // 500 per reply, counted apart
            CHECK(model["cache_write_tokens"].GetInt() == 800);
            CHECK(model["prompt_tokens"].GetInt() == 2800);
            CHECK(std::string(model["api"].GetString()) == "messages");
            CHECK(std::string(model["url"].GetString()) == server.url("/v1/messages"));
            test::read_checked_json(f.run_folder() / "run.json", "run");
        }
    }
}

TEST_CASE("a --temperature on the default Anthropic model is refused with exit 64 before any call",
          "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({{200, {}, "{}"}});
    const auto r = run_anthropic(f, server, {"--temperature", "0.2"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("--temperature: claude-sonnet-5-5 refuses sampling "
                                         "parameters (a 400 error); leave the flag out"));
    CHECK(server.requests().empty());
}

namespace {

// A Responses reply cut at the output limit after its reasoning: nothing but a reasoning item.
std::string responses_cut(int id) {
    return R"({"id": "resp_cut)" + std::to_string(id) +
           R"(", "object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "output": [{"type": "reasoning",
        "id": "rs_cut)" +
           std::to_string(id) + R"(", "summary": [], "encrypted_content": "enc-cut)" +
           std::to_string(id) + R"("}], "usage": {"input_tokens": 900, "output_tokens": 3000,
        "output_tokens_details": {"reasoning_tokens": 3000}}})";
}

}  // namespace

TEST_CASE(
    "a Responses reply cut twice is echoed without its lone reasoning item: the next input "
    "never ends an assistant turn on reasoning",
    "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({
        {200, {}, responses_cut(1)},
        {200, {}, responses_cut(2)},
        {200,
         {},
         responses_call("submit_candidate",
                        "{\"source\": " + json_string(kernel("FAKE_MS=1")) +
                            ", \"rationale\": \"fewer cycles\"}",
                        3)},
    });
    const auto r = f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--no-evidence",
                                  "--max-output-tokens", "3000", "--max-output-tokens-retry",
                                  "6000", "--api", "responses"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    const auto third = parse_json(requests[2].body, "third request");
    const auto& in = third["input"];
    for (rapidjson::SizeType i = 0; i < in.Size(); ++i) {
        INFO("input item " << i);
        if (in[i].HasMember("type") && std::string(in[i]["type"].GetString()) == "reasoning")
            CHECK((i + 1 < in.Size() && !in[i + 1].HasMember("role")));
    }
    CHECK(requests[2].body.find("enc-cut2") == std::string::npos);
    CHECK_THAT(requests[2].body, Catch::Contains("cut at the output limit"));
}

TEST_CASE(
    "a reply stopped by the content filter is a refusal: the iteration is rejected with "
    "the reason kept, never sent again with a higher limit",
    "[integration]") {
    llm_fixture f;
    test::loopback_http_server server({
        {200,
         {},
         R"({"id": "resp_f", "object": "response", "status": "incomplete",
             "incomplete_details": {"reason": "content_filter"}, "output": [], "usage":
             {"input_tokens": 900, "output_tokens": 10}})"},
    });
    const auto r = f.run(server, {"--max-iterations", "1", "--proposer", "llm", "--no-evidence",
                                  "--api", "responses"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    REQUIRE(server.requests().size() == 1);
    const auto history = test::read_checked_json(f.run_folder() / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 2);
    CHECK(std::string(history["attempts"][1]["verdict"].GetString()) == "invalid_submission");
    CHECK_THAT(std::string(history["attempts"][1]["reason"].GetString()),
               Catch::Contains("the model refused") &&
                   Catch::Contains("content filter stopped the reply (incomplete: "
                                   "content_filter)"));
}

TEST_CASE("a model flag's warning is printed even with --quiet", "[integration]") {
    llm_fixture f;
    const std::string submit_input =
        "{\"source\": " + json_string(kernel("FAKE_MS=1")) + ", \"rationale\": \"tiles\"}";
    test::loopback_http_server server(
        {{200, {}, adaptive_call("submit_candidate", submit_input, 1)}});
    const auto r = run_anthropic(f, server, {"--thinking-budget", "8000", "--quiet"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("cuda-optimizer: warning: --thinking-budget 8000: "
                                         "claude-sonnet-5-5 thinks adaptively only"));
    CHECK(r.output.find("proposer llm") == std::string::npos);  // the start line is quiet
}
