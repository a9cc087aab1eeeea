// The model settings a run derives from its flags and environment: which model, which
// reasoning effort is sent (and when none is), limits, base URLs.
#include "orchestrator/commands/model_settings.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "test_support.hpp"

using namespace cuopt;

using test::scoped_env;

TEST_CASE("reasoning effort: none is sent as none, omit leaves it out, defaults by host") {
    CHECK(effort_to_send("", false, false) == "medium");  // OpenAI's own host
    CHECK(effort_to_send("", false, true).empty());       // a local server: leave it out
    CHECK(effort_to_send("none", false, false) == "none");
    CHECK(effort_to_send("none", false, true) == "none");
    CHECK(effort_to_send("omit", false, false).empty());
    CHECK(effort_to_send("high", false, true) == "high");
    CHECK(effort_to_send("high", true, false).empty());  // Anthropic has no such field
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

TEST_CASE("a thinking budget is for Anthropic, at least 1024 and below the output limit") {
    optimizer_options o;
    o.provider = "anthropic";
    o.thinking_budget = 8000;
    CHECK(read_model_config(o).settings.thinking_budget == 8000);
    o.thinking_budget = 500;
    CHECK_THROWS_WITH(read_model_config(o),
                      Catch::Contains("--thinking-budget") && Catch::Contains("at least 1024"));
    o.thinking_budget = 20000;  // above the 16000 output tokens
    CHECK_THROWS_WITH(read_model_config(o), Catch::Contains("below --max-output-tokens"));
    o.thinking_budget = 4096;
    o.temperature = 0.2;  // extended thinking refuses it
    CHECK_THROWS_WITH(read_model_config(o), Catch::Contains("--temperature cannot be combined"));
    o.provider = "openai";
    CHECK(read_model_config(o).settings.thinking_budget == 0);
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
