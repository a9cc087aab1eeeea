// The model settings a run derives from its flags and environment, checked against the table
// of model families: which model, which API, which effort and thinking are sent (and when
// none is), which flags a model refuses, limits, base URLs.
#include "orchestrator/commands/model_settings.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>

#include "common/exit_codes.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/model/model_families.hpp"
#include "test_support.hpp"

using namespace cuopt;

using test::scoped_env;

namespace {

// The settings the flags give, with no key or base URL in the environment.
model_config settings_for(optimizer_options o) {
    const scoped_env k1("OPENAI_API_KEY", nullptr), k2("ANTHROPIC_API_KEY", nullptr),
        u1("OPENAI_BASE_URL", nullptr), u2("ANTHROPIC_BASE_URL", nullptr),
        m("CUDA_OPTIMIZER_MODEL", nullptr);
    return read_model_config(o);
}

optimizer_options anthropic_options(const std::string& model = "") {
    optimizer_options o;
    o.provider = "anthropic";
    o.model = model;
    return o;
}

}  // namespace

TEST_CASE(
    "reasoning effort: the model's default on its provider's host, none elsewhere, omit "
    "leaves it out, none is sent as none") {
    optimizer_options o;
    CHECK(settings_for(o).settings.reasoning_effort == "medium");  // gpt-6.1-terra's default
    o.reasoning_effort = "none";
    CHECK(settings_for(o).settings.reasoning_effort == "none");
    o.reasoning_effort = "omit";
    CHECK(settings_for(o).settings.reasoning_effort.empty());
    o.reasoning_effort = "";
    o.base_url = "http://127.0.0.1:9/v1";  // a local server may refuse the field
    CHECK(settings_for(o).settings.reasoning_effort.empty());
    o.reasoning_effort = "high";
    CHECK(settings_for(o).settings.reasoning_effort == "high");
    // Anthropic's models take it as output_config.effort; their own default when not given.
    CHECK(settings_for(anthropic_options()).settings.reasoning_effort.empty());
    optimizer_options a = anthropic_options();
    a.reasoning_effort = "xhigh";
    CHECK(settings_for(a).settings.reasoning_effort == "xhigh");
}

TEST_CASE(
    "an effort value the model does not take is refused with exit 64 naming the flag, the "
    "model and the values it takes") {
    optimizer_options o;
    o.reasoning_effort = "minimal";  // gpt-5's, not gpt-6.1-terra's
    try {
        settings_for(o);
        FAIL("minimal was accepted for gpt-6.1-terra");
    } catch (const run_failure& e) {
        CHECK(e.code() == exit_code::usage);
        CHECK(std::string(e.what()) ==
              "--reasoning-effort: gpt-6.1-terra takes none, low, medium, high, xhigh or max (or "
              "omit), got 'minimal'");
    }
    o.reasoning_effort = "max";
    CHECK(settings_for(o).settings.reasoning_effort == "max");
    o.model = "gpt-5-mini";
    o.reasoning_effort = "minimal";
    CHECK(settings_for(o).settings.reasoning_effort == "minimal");
    optimizer_options sonnet46 = anthropic_options("claude-sonnet-4-6");
    sonnet46.reasoning_effort = "xhigh";  // not on the 4.6 models
    CHECK_THROWS_WITH(settings_for(sonnet46), Catch::Contains("claude-sonnet-4-6 takes low, "
                                                              "medium, high or max"));
    optimizer_options haiku = anthropic_options("claude-haiku-4-5");
    haiku.reasoning_effort = "low";
    CHECK_THROWS_WITH(settings_for(haiku),
                      Catch::Contains("claude-haiku-4-5 takes no effort setting"));
}

TEST_CASE("the model comes from --model, else CUDA_OPTIMIZER_MODEL, else the one default") {
    const scoped_env key("OPENAI_API_KEY", nullptr), url("OPENAI_BASE_URL", nullptr);
    optimizer_options o;
    {
        const scoped_env model("CUDA_OPTIMIZER_MODEL", nullptr);
        CHECK(read_model_config(o).settings.model == default_model(llm_provider::openai));
    }
    const scoped_env model("CUDA_OPTIMIZER_MODEL", "my-model");
    CHECK(read_model_config(o).settings.model == "my-model");
    o.model = "flag-model";
    CHECK(read_model_config(o).settings.model == "flag-model");
}

TEST_CASE("limits and base URLs come from flags and the environment") {
    optimizer_options o;
    o.max_output_tokens = 4096;
    o.request_timeout_s = 42.5;
    const model_config c = read_model_config(o);
    CHECK(c.settings.max_output_tokens == 4096);
    CHECK(c.settings.timeout == std::chrono::milliseconds(42500));
    o.provider = "anthropic";
    const scoped_env base("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1");
    const model_config a = read_model_config(o);
    CHECK(a.settings.base_url == "http://127.0.0.1:9/v1");
    CHECK(a.configured);
    CHECK(a.settings.reasoning_effort.empty());
}

TEST_CASE(
    "a thinking budget is sent to models that take one, at least 1024 and below the "
    "output limit") {
    optimizer_options o = anthropic_options("claude-haiku-4-5");
    o.thinking_budget = 8000;
    CHECK(settings_for(o).settings.thinking_budget == 8000);
    CHECK_FALSE(settings_for(o).settings.adaptive_thinking);
    o.thinking_budget = 500;
    CHECK_THROWS_WITH(settings_for(o),
                      Catch::Contains("--thinking-budget") && Catch::Contains("at least 1024"));
    o.thinking_budget = 20000;  // above the 16000 output tokens
    CHECK_THROWS_WITH(settings_for(o), Catch::Contains("below --max-output-tokens"));
    o.thinking_budget = 4096;
    o.temperature = 0.2;  // extended thinking refuses it
    CHECK_THROWS_WITH(settings_for(o), Catch::Contains("--temperature cannot be combined"));
    o.provider = "openai";
    o.model = "";
    o.temperature = -1;
    CHECK(settings_for(o).settings.thinking_budget == 0);
}

TEST_CASE(
    "the default Anthropic model thinks adaptively: --thinking-budget becomes adaptive "
    "thinking with a note, never a budget it would refuse") {
    const model_config plain = settings_for(anthropic_options());
    CHECK(plain.settings.model == "claude-sonnet-5-5");
    CHECK(plain.settings.adaptive_thinking);  // on by default: said explicitly
    CHECK(plain.settings.thinking_budget == 0);
    CHECK(plain.settings.anthropic_version == "2026-10-21");
    CHECK(plain.notes.empty());
    optimizer_options o = anthropic_options();
    o.thinking_budget = 8000;
    o.reasoning_effort = "high";
    const model_config mapped = settings_for(o);
    CHECK(mapped.settings.thinking_budget == 0);
    CHECK(mapped.settings.adaptive_thinking);
    CHECK(mapped.settings.reasoning_effort == "high");
    REQUIRE(mapped.notes.size() == 1);
    CHECK(mapped.notes[0] ==
          "--thinking-budget 8000: claude-sonnet-5-5 thinks adaptively only (a budget is a 400 "
          "error), so thinking {\"type\": \"adaptive\"} is sent instead; --reasoning-effort "
          "low, medium, high, xhigh or max steers how much it thinks");
    // Opus 4.7 thinks only when asked: nothing is sent unless a budget asks for thinking.
    CHECK_FALSE(settings_for(anthropic_options("claude-opus-4-7")).settings.adaptive_thinking);
    optimizer_options opus = anthropic_options("claude-opus-4-7");
    opus.thinking_budget = 4096;
    CHECK(settings_for(opus).settings.adaptive_thinking);
    // Sonnet 4.6 takes either: a budget stays a budget, and 2023-06-01 keeps its temperature.
    optimizer_options sonnet46 = anthropic_options("claude-sonnet-4-6");
    sonnet46.thinking_budget = 4096;
    CHECK(settings_for(sonnet46).settings.thinking_budget == 4096);
    CHECK(settings_for(sonnet46).settings.anthropic_version == "2023-06-01");
}

TEST_CASE("a --temperature is refused with exit 64 where the model refuses sampling parameters") {
    optimizer_options o = anthropic_options();
    o.temperature = 0.3;
    CHECK_THROWS_WITH(settings_for(o),
                      "--temperature: claude-sonnet-5-5 refuses sampling parameters (a 400 "
                      "error); leave the flag out");
    o.model = "claude-haiku-4-5";
    CHECK(settings_for(o).settings.temperature == 0.3);
    optimizer_options terra;
    terra.temperature = 0.3;  // only without reasoning
    CHECK_THROWS_WITH(settings_for(terra),
                      "--temperature: gpt-6.1-terra takes a temperature only with "
                      "--reasoning-effort none (the effort is 'medium')");
    terra.reasoning_effort = "none";
    CHECK(settings_for(terra).settings.temperature == 0.3);
}

TEST_CASE(
    "OpenAI's own host, however it is named, uses the Responses API under auto, any "
    "other server Chat Completions") {
    for (const char* url :
         {"", "https://api.openai.com/v1", "https://API.OpenAI.com/v1/", "https://api.openai.com.",
          "https://api.openai.com:443/v1", "https://eu.api.openai.com/v1"}) {
        optimizer_options o;
        o.base_url = url;
        const model_config c = settings_for(o);
        INFO(url);
        CHECK(c.settings.api == openai_api::responses);
        CHECK(c.settings.reasoning_effort == "medium");
        CHECK(c.settings.retry_output_tokens == 32000);
        CHECK(c.notes.empty());
    }
    for (const char* url : {"http://api.openai.com/v1", "https://api.openai.com:8443/v1",
                            "https://api.openai.com.evil.example/v1", "http://127.0.0.1:8000/v1",
                            "https://user:key@api.openai.com/v1", "https://api.openai.com/proxy"}) {
        optimizer_options o;
        o.base_url = url;
        INFO(url);
        CHECK(settings_for(o).settings.api == openai_api::chat);
    }
    optimizer_options o;
    o.base_url = "https://api.openai.com/v1";
    o.api = "chat";  // asked for, with a model that takes tools on Chat
    o.model = "gpt-5.1";
    CHECK(settings_for(o).settings.api == openai_api::chat);
}

TEST_CASE(
    "a model outside the table keeps its flags with a one-line note, one that shuts down "
    "names the date and the replacement") {
    optimizer_options o;
    o.model = "gpt-7-experimental";
    o.reasoning_effort = "ultra";
    const model_config c = settings_for(o);
    CHECK(c.settings.reasoning_effort == "ultra");
    REQUIRE(c.notes.size() == 1);
    CHECK(c.notes[0] ==
          std::string("model gpt-7-experimental is not in the table of known models (checked ") +
              k_model_table_checked + "): its flags are sent unchecked");
    o.model = "gpt-5-mini";
    o.reasoning_effort = "";
    const model_config old = settings_for(o);
    REQUIRE(old.notes.size() == 1);
    CHECK(old.notes[0] ==
          "gpt-5-mini shuts down on 2026-12-11 (the provider's replacement: --model "
          "gpt-6.1-terra)");
    o.base_url = "http://127.0.0.1:8000/v1";  // a local server's models: no table, no note
    o.model = "Qwen/Qwen3-32B";
    CHECK(settings_for(o).notes.empty());
}

TEST_CASE(
    "the model table: unique prefixes, each default effort among its values, Anthropic "
    "versions known, budgets only where a form takes them") {
    std::set<std::string> prefixes;
    for (const model_family& f : model_families()) {
        INFO(f.prefix);
        CHECK(prefixes.insert(f.prefix).second);
        if (!f.default_effort.empty())
            CHECK(std::count(f.efforts.begin(), f.efforts.end(), f.default_effort) == 1);
        if (f.provider == llm_provider::anthropic)
            CHECK((f.anthropic_version == "2026-10-21" || f.anthropic_version == "2023-06-01"));
        // 2026-10-21 removes temperature: a family that takes one keeps 2023-06-01.
        if (f.temperature == sampling::accepted) CHECK(f.anthropic_version == "2023-06-01");
        if (f.shuts_down.empty()) CHECK(f.replacement.empty());
    }
    CHECK(find_model_family(llm_provider::anthropic, "claude-sonnet-5-5")->prefix ==
          "claude-sonnet-5-5");
    CHECK(find_model_family(llm_provider::anthropic, "claude-sonnet-5")->prefix ==
          "claude-sonnet-5");
    CHECK(find_model_family(llm_provider::anthropic, "claude-haiku-4-5-20251001")->prefix ==
          "claude-haiku-4-5");
    CHECK(find_model_family(llm_provider::openai, "gpt-5-2025-08-07")->prefix == "gpt-5");
    CHECK(find_model_family(llm_provider::openai, "gpt-6.1-terra-latest")->prefix ==
          "gpt-6.1-terra");
    // A variant or a newer model is not its elder's: gpt-5-pro takes other efforts.
    CHECK_FALSE(find_model_family(llm_provider::openai, "gpt-5.2"));
    CHECK_FALSE(find_model_family(llm_provider::openai, "gpt-5-pro"));
    CHECK_FALSE(find_model_family(llm_provider::anthropic, "claude-sonnet-5-6"));
    CHECK_FALSE(find_model_family(llm_provider::anthropic, "claude-haiku-4-5-fast"));
    CHECK_FALSE(find_model_family(llm_provider::openai, "claude-sonnet-5-5"));
}

TEST_CASE("a cut reply's retry limit: twice the limit on the provider's host, never elsewhere") {
    CHECK(retry_output_tokens(-1, 16000, false) == 32000);
    CHECK(retry_output_tokens(-1, 40000, false) == 64000);
    CHECK(retry_output_tokens(-1, 64000, false) == 0);  // no room above the cap
    CHECK(retry_output_tokens(-1, 16000, true) == 0);   // a local server's context
    CHECK(retry_output_tokens(0, 16000, false) == 0);
    CHECK(retry_output_tokens(24000, 16000, true) == 24000);
    CHECK_THROWS_WITH(retry_output_tokens(8000, 16000, false),
                      Catch::Contains("--max-output-tokens-retry") &&
                          Catch::Contains("more than --max-output-tokens (16000)"));
    optimizer_options o;
    o.base_url = "http://127.0.0.1:9/v1";
    CHECK(read_model_config(o).settings.retry_output_tokens == 0);
    o.max_output_tokens_retry = 20000;
    CHECK(read_model_config(o).settings.retry_output_tokens == 20000);
}

TEST_CASE(
    "an --api chat is refused on OpenAI's host for a model whose tool calls need Responses, "
    "and is a note on another server") {
    optimizer_options o;
    o.api = "chat";
    CHECK_THROWS_WITH(settings_for(o),
                      "--api chat: gpt-6.1-terra takes function tools on Chat Completions not at "
                      "all; every request carries the tools: use --api responses (or auto)");
    o.model = "gpt-6-sol";  // only without reasoning
    CHECK_THROWS_WITH(settings_for(o), Catch::Contains("only with --reasoning-effort none"));
    o.reasoning_effort = "none";
    CHECK(settings_for(o).settings.api == openai_api::chat);
    o.model = "gpt-6.1-terra";
    o.reasoning_effort = "";
    o.base_url = "http://127.0.0.1:4000/v1";  // a gateway may translate
    const model_config gateway = settings_for(o);
    CHECK(gateway.settings.api == openai_api::chat);
    REQUIRE(gateway.notes.size() == 1);
    CHECK_THAT(gateway.notes[0], Catch::Contains("give --api responses if the server speaks it"));
}

TEST_CASE("the API's URL in the start line and the model block never carries a credential") {
    optimizer_options o;
    o.base_url = "https://user:sk-secret@gateway.example/v1";
    CHECK(api_url(settings_for(o).settings) ==
          "https://[REDACTED]@gateway.example/v1/chat/completions");
    o.provider = "anthropic";
    CHECK(api_url(settings_for(o).settings) == "https://[REDACTED]@gateway.example/v1/messages");
    CHECK(api_url(settings_for(anthropic_options()).settings) ==
          "https://api.anthropic.com/v1/messages");
}

TEST_CASE("the GPT-5.6 models take Chat tools only without reasoning, like GPT-6 Sol") {
    optimizer_options o;
    o.api = "chat";
    for (const std::string model : {"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"}) {
        INFO(model);
        o.model = model;
        o.reasoning_effort = "";
        CHECK_THROWS_WITH(settings_for(o), Catch::Contains("only with --reasoning-effort none"));
        o.reasoning_effort = "none";
        CHECK(settings_for(o).settings.api == openai_api::chat);
    }
}

TEST_CASE("a Chat-tools note about a gateway never prints a key in its base URL") {
    optimizer_options o;
    o.api = "chat";
    o.model = "gpt-6.1-terra";
    o.base_url = "https://user:sk-secret-key@gateway.example/v1";
    const model_config c = settings_for(o);
    REQUIRE(c.notes.size() == 1);
    CHECK_THAT(c.notes[0], !Catch::Contains("sk-secret-key") && Catch::Contains("[REDACTED]"));
}

TEST_CASE("OpenAI's own host without /v1 gets it, other servers keep their path") {
    optimizer_options o;
    for (const std::string base :
         {"https://api.openai.com", "https://api.openai.com/", "https://API.OpenAI.com:443",
          "https://eu.api.openai.com/", "https://api.openai.com/v1"}) {
        INFO(base);
        o.base_url = base;
        o.api = "responses";
        CHECK_THAT(api_url(settings_for(o).settings), Catch::EndsWith("/v1/responses"));
        CHECK(api_url(settings_for(o).settings).find("/v1/v1") == std::string::npos);
    }
    o.base_url = "http://127.0.0.1:11434";  // a local server's own layout
    o.api = "chat";
    CHECK(api_url(settings_for(o).settings) == "http://127.0.0.1:11434/chat/completions");
}

TEST_CASE("Fable 5, 5.1 and 5.2 and Mythos 5, 5.1 and 5.2 think adaptively and refuse sampling") {
    for (const std::string model :
         {"claude-fable-5", "claude-mythos-5", "claude-fable-5-1", "claude-mythos-5-1",
          "claude-fable-5-2", "claude-mythos-5-2", "claude-fable-5-2-20261201"}) {
        INFO(model);
        const auto f = find_model_family(llm_provider::anthropic, model);
        REQUIRE(f);
        CHECK(f->thinking == thinking_form::adaptive);
        CHECK(f->thinking_on_by_default);
        CHECK(f->temperature == sampling::refused);
        CHECK(f->anthropic_version == "2026-10-21");
        optimizer_options o = anthropic_options(model);
        o.temperature = 0.5;
        CHECK_THROWS_WITH(settings_for(o), Catch::Contains("refuses sampling parameters"));
    }
    CHECK_FALSE(find_model_family(llm_provider::anthropic, "claude-fable-5-3"));
}
