// Every request body the model client can send, written down for the providers' own checkers:
// one body per shape (OpenAI Responses and Chat, Anthropic Messages; tools, tool calls and
// results, replies echoed verbatim with their reasoning or thinking, each reasoning effort,
// thinking budgets, adaptive thinking, temperature) into $CUOPT_REQUEST_BODIES_DIR as
// responses-NAME.json, chat-NAME.json or messages-NAME.json. CTest then runs
// tools/api-check/check-bodies.mjs over them (the SDKs' request types with tsc, OpenAI's
// OpenAPI request schemas with ajv). Hidden ([.]) so it runs once, through that CTest fixture.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "common/json_document.hpp"
#include "orchestrator/commands/model_settings.hpp"
#include "orchestrator/model/llm_protocol.hpp"
#include "orchestrator/model/model_families.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const char* k_system = "You optimise CUDA kernels.";
const fs::path k_replies = fs::path(CUOPT_SOURCE_DIR) / "tests/fixtures/model-replies";

const std::vector<std::string> k_efforts = {"none", "low", "medium", "high", "xhigh", "max"};

const std::vector<tool_spec> k_tools = {
    {"compile", "Compile a kernel and report its registers",
     R"({"$schema": "http://json-schema.org/draft-07/schema#", "title": "compile_arguments",
         "type": "object", "properties": {"source": {"type": "string"},
         "flags": {"type": "array", "items": {"type": "string"}}}, "required": ["source"]})"},
    {"profile", "Profile the last compiled kernel", R"({"type": "object", "properties": {}})"}};

// One named request and the file it goes to: the kind prefix comes from the URL it is sent to.
struct named_request {
    std::string name;
    http_request request;
};

// The file's kind prefix; Anthropic's carries the API version the request is sent with
// (messages-2023-06-01-…, messages-2026-10-21-…): the checker picks the SDKs that speak it.
std::string kind_of(const http_request& r) {
    if (r.url.size() >= 10 && r.url.rfind("/responses") == r.url.size() - 10) return "responses";
    if (r.url.find("/chat/completions") != std::string::npos) return "chat";
    if (r.url.find("/messages") != std::string::npos)
        return "messages-" + r.headers.at("anthropic-version");
    FAIL("no request kind for URL " << r.url);
    return "";
}

// The decoded reply of a recorded fixture (tests/fixtures/model-replies/NAME.json), as the
// proposer would carry it into the next turn: its calls and its raw items, verbatim.
model_reply recorded_reply(const llm_settings& s, const std::string& fixture) {
    const auto doc = parse_json(test::read_text(k_replies / fixture), fixture);
    return parse_reply(s, to_compact_json(doc["replies"][0]["body"]));
}

chat_turn assistant_turn(const model_reply& reply) {
    chat_turn t;
    t.who = chat_turn::role::assistant;
    t.text = reply.text;
    t.calls = reply.calls;
    t.raw_items_json = reply.raw_items_json;
    return t;
}

chat_turn tool_result(const tool_call& call, const std::string& text, bool is_error = false) {
    chat_turn t;
    t.who = chat_turn::role::tool_result;
    t.text = text;
    t.tool_call_id = call.id;
    t.tool_name = call.name;
    t.is_error = is_error;
    return t;
}

// A conversation with every kind of turn: the task, a reply (from the recorded fixture, so
// its raw items are what the API sent) with tool calls, their results (the last one failed),
// a text-only reply built by hand (no raw items) and the correction that answers it.
std::vector<chat_turn> conversation(const model_reply& reply) {
    std::vector<chat_turn> turns = {chat_turn::from_user("Make the kernel faster.")};
    turns.push_back(assistant_turn(reply));
    for (std::size_t i = 0; i < reply.calls.size(); ++i)
        turns.push_back(tool_result(
            reply.calls[i], i + 1 < reply.calls.size() ? "registers: 32" : "error: expected ';'",
            i + 1 == reply.calls.size()));
    chat_turn text_only;
    text_only.who = chat_turn::role::assistant;
    text_only.text = "I think it is fast now.";
    turns.push_back(text_only);
    turns.push_back(chat_turn::from_user("That was not a tool call: call submit_candidate."));
    return turns;
}

llm_settings openai_settings(openai_api api, const std::string& effort) {
    llm_settings s;
    s.provider = llm_provider::openai;
    s.api = api;
    s.model = "gpt-6.1-terra";
    s.reasoning_effort = effort;
    return s;
}

llm_settings anthropic_settings() {
    llm_settings s;
    s.provider = llm_provider::anthropic;
    s.model = "claude-sonnet-5-5";
    s.reasoning_effort = "";  // what read_model_config gives Anthropic unless asked
    return s;
}

http_request build(const llm_settings& s, const std::vector<chat_turn>& turns,
                   const std::vector<tool_spec>& tools = k_tools) {
    return build_model_request(s, "sk-bodies-test", k_system, turns, tools);
}

std::vector<named_request> openai_requests(openai_api api) {
    std::vector<named_request> out;
    const llm_settings plain = openai_settings(api, "medium");
    const auto calls = conversation(recorded_reply(
        plain, api == openai_api::responses ? "openai-responses-reasoning-function-calls.json"
                                            : "openai-chat-parallel-tool-calls.json"));
    for (const std::string& effort : k_efforts)
        out.push_back({"effort-" + effort, build(openai_settings(api, effort), calls)});
    llm_settings warm = openai_settings(api, "");
    warm.temperature = 0.7;
    out.push_back({"temperature-no-effort", build(warm, calls)});
    llm_settings local = openai_settings(api, "");
    local.base_url = "http://127.0.0.1:8000/v1";
    out.push_back({"first-turn-no-tools", build(local, {chat_turn::from_user("hi")}, {})});
    if (api == openai_api::responses) {  // a reply cut short: reasoning, then a message item
        const auto cut =
            recorded_reply(plain, "openai-responses-incomplete-max-output-tokens.json");
        out.push_back({"echo-incomplete-message", build(plain, conversation(cut))});
    }
    return out;
}

// The settings the tool derives from these flags (read_model_config: the table of model
// families decides thinking, effort, temperature and the API version).
llm_settings settings_of(const std::string& provider, const std::string& model,
                         const std::string& effort, int thinking_budget, double temperature) {
    optimizer_options o;
    o.provider = provider;
    o.model = model;
    o.reasoning_effort = effort;
    o.thinking_budget = thinking_budget;
    o.temperature = temperature;
    const test::scoped_env u1("OPENAI_BASE_URL", nullptr), u2("ANTHROPIC_BASE_URL", nullptr);
    return read_model_config(o).settings;
}

std::vector<named_request> anthropic_requests() {
    std::vector<named_request> out;
    const llm_settings plain = anthropic_settings();
    const auto thinking = conversation(recorded_reply(plain, "anthropic-thinking-tool-use.json"));
    model_reply by_hand;  // a reply without thinking blocks, echoed from its calls
    by_hand.text = "Compiling two variants.";
    by_hand.calls = {{"toolu_a", "compile", R"({"source": "a"})"}, {"toolu_b", "profile", "{}"}};
    const auto no_thinking = conversation(by_hand);
    // Every Anthropic family of the table as the tool sets it up: its defaults, each effort it
    // takes, a budget where it takes one (or what a budget becomes), a temperature where taken.
    for (const model_family& f : model_families()) {
        if (f.provider != llm_provider::anthropic) continue;
        const std::string& m = f.prefix;
        out.push_back({m + "-defaults", build(settings_of("anthropic", m, "", 0, -1), thinking)});
        out.push_back({m + "-no-thinking-echoed",
                       build(settings_of("anthropic", m, "", 0, -1), no_thinking)});
        for (const std::string& effort : f.efforts)
            out.push_back({m + "-effort-" + effort,
                           build(settings_of("anthropic", m, effort, 0, -1), thinking)});
        if (f.thinking != thinking_form::none)
            out.push_back({m + "-thinking-budget",
                           build(settings_of("anthropic", m, "", 4096, -1), thinking)});
        if (f.temperature == sampling::accepted)
            out.push_back(
                {m + "-temperature", build(settings_of("anthropic", m, "", 0, 0.7), no_thinking)});
    }
    llm_settings local = plain;
    local.base_url = "http://127.0.0.1:8000";
    out.push_back({"first-turn-no-tools", build(local, {chat_turn::from_user("hi")}, {})});
    return out;
}

// Every OpenAI family of the table with each effort it takes, and a temperature where taken.
std::vector<named_request> openai_family_requests() {
    std::vector<named_request> out;
    const auto calls =
        conversation(recorded_reply(openai_settings(openai_api::responses, ""),
                                    "openai-responses-reasoning-function-calls.json"));
    for (const model_family& f : model_families()) {
        if (f.provider != llm_provider::openai) continue;
        for (const std::string& effort : f.efforts)
            out.push_back({f.prefix + "-effort-" + effort,
                           build(settings_of("openai", f.prefix, effort, 0, -1), calls)});
        if (f.temperature == sampling::without_reasoning)
            out.push_back({f.prefix + "-temperature",
                           build(settings_of("openai", f.prefix, "none", 0, 0.7), calls)});
    }
    return out;
}

// $CUOPT_REQUEST_BODIES_DIR, or a scratch folder (the bodies are then only checked to parse).
fs::path bodies_folder(const test::scratch_folder& scratch) {
    const char* given = std::getenv("CUOPT_REQUEST_BODIES_DIR");
    return given && *given ? fs::path(given) : scratch.path();
}

}  // namespace

TEST_CASE("every request body the model client can send is written down for the SDK checks",
          "[.][request-bodies]") {
    std::vector<named_request> all = openai_requests(openai_api::responses);
    for (auto& r : openai_requests(openai_api::chat)) all.push_back(std::move(r));
    for (auto& r : anthropic_requests()) all.push_back(std::move(r));
    for (auto& r : openai_family_requests()) all.push_back(std::move(r));

    const test::scratch_folder scratch;
    const fs::path folder = bodies_folder(scratch);
    fs::create_directories(folder);
    for (const auto& e : fs::directory_iterator(folder))  // a stale body would be checked too
        if (e.path().extension() == ".json") fs::remove(e.path());
    for (const named_request& r : all) {
        const std::string file = kind_of(r.request) + "-" + r.name + ".json";
        INFO(file);
        const auto body = parse_json(r.request.body, file);
        REQUIRE(body.IsObject());
        std::ofstream(folder / file) << to_pretty_json(body) << "\n";
        REQUIRE(fs::file_size(folder / file) > 0);
    }
    std::set<std::string> names;
    for (const named_request& r : all) names.insert(kind_of(r.request) + "-" + r.name);
    CHECK(names.size() == all.size());  // no body overwrote another
}
