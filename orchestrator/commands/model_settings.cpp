#include "orchestrator/commands/model_settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "common/cli_value_checks.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/model/model_families.hpp"

namespace cuopt {

namespace {

// KEY=VALUE lines of ./.env (quotes stripped); the environment wins over it.
std::map<std::string, std::string> read_dot_env() {
    std::map<std::string, std::string> out;
    std::ifstream in(".env");
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        if (key.rfind("export ", 0) == 0) key = key.substr(7);
        while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
        if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
            value = value.substr(1, value.size() - 2);
        out[key] = value;
    }
    return out;
}

std::string setting(const std::string& name, const std::map<std::string, std::string>& dot_env) {
    if (const char* v = std::getenv(name.c_str()); v && *v) return v;
    const auto it = dot_env.find(name);
    return it == dot_env.end() ? "" : it->second;
}

// A model's price per million `tokens`: a number >= 0, or nullopt when an optional one is absent.
std::optional<double> price_of(const json_field& model, const char* key, const std::string& tokens,
                               bool required) {
    const std::optional<json_field> f = model.find(key);
    if (!f && !required) return std::nullopt;
    const std::optional<double> x = number_of(model.value(), key);
    if (!x || *x < 0)  // the member's path even when it is absent
        json_field(model.value(), model.source(), model.path() + "." + key)
            .fail("a number >= 0 (US dollars per million " + tokens + ")");
    return x;
}

price_table read_prices(const std::string& json, const std::string& source) {
    price_table prices;
    if (json.empty()) return prices;
    const rapidjson::Document d = parse_json(json, source + " prices");
    for (const auto& [name, m] : json_field(d, source, "prices").members()) {
        if (!m.is_object()) m.fail("{\"input_per_mtok\": x, \"output_per_mtok\": y}");
        model_price p;
        p.input_per_mtok = *price_of(m, "input_per_mtok", "tokens", true);
        p.output_per_mtok = *price_of(m, "output_per_mtok", "tokens", true);
        p.cached_input_per_mtok =
            price_of(m, "cached_input_per_mtok", "cached input tokens", false);
        p.cache_write_per_mtok =
            price_of(m, "cache_write_per_mtok", "cache-write input tokens", false);
        prices[name] = p;
    }
    return prices;
}

}  // namespace

namespace {

[[noreturn]] void refuse(const std::string& line) {
    throw run_failure(exit_code::usage, line);
}

// --reasoning-effort checked against what the model takes: OpenAI's reasoning effort or
// Anthropic's output_config.effort.
std::string effort_for(const std::string& flag, const std::string& model,
                       const std::optional<model_family>& family, llm_provider provider,
                       bool other_server) {
    if (flag == "omit") return "";
    if (flag.empty()) {  // a local server may refuse the field (Ollama does for most models)
        if (other_server) return "";
        if (family) return family->default_effort;
        return provider == llm_provider::openai ? llm_settings{}.reasoning_effort : "";
    }
    if (family && family->efforts.empty())
        refuse("--reasoning-effort: " + model + " takes no effort setting; leave the flag out");
    if (family &&
        std::find(family->efforts.begin(), family->efforts.end(), flag) == family->efforts.end())
        refuse("--reasoning-effort: " + model + " takes " + word_list(family->efforts) +
               " (or omit), got " + quote_value(flag));
    return flag;
}

// --thinking-budget and the thinking form the model takes (Anthropic only). A budget for a
// model that thinks adaptively only becomes adaptive thinking, said in a note.
void set_thinking(model_config& c, const optimizer_options& o,
                  const std::optional<model_family>& family) {
    llm_settings& s = c.settings;
    if (s.provider != llm_provider::anthropic) return;
    const thinking_form form = family ? family->thinking : thinking_form::either;
    if (o.thinking_budget > 0 && form == thinking_form::none)
        refuse("--thinking-budget: " + s.model + " takes no thinking setting; leave the flag out");
    if (o.thinking_budget > 0 && form == thinking_form::adaptive) {
        c.notes.push_back("--thinking-budget " + std::to_string(o.thinking_budget) + ": " +
                          s.model +
                          " thinks adaptively only (a budget is a 400 error), so thinking "
                          "{\"type\": \"adaptive\"} is sent instead; --reasoning-effort " +
                          word_list(family->efforts) + " steers how much it thinks");
        s.adaptive_thinking = true;
        return;
    }
    s.thinking_budget = o.thinking_budget;
    if (s.thinking_budget > 0 &&
        (s.thinking_budget < 1024 || s.thinking_budget >= o.max_output_tokens))
        refuse("--thinking-budget: expected at least 1024 and below --max-output-tokens (" +
               std::to_string(o.max_output_tokens) + "), got " + std::to_string(s.thinking_budget));
    if (s.thinking_budget > 0 && s.temperature)
        refuse(
            "--temperature cannot be combined with --thinking-budget: Anthropic's extended "
            "thinking refuses a changed temperature; drop one of them");
    // Said explicitly where the model thinks adaptively unasked: the record shows what ran.
    s.adaptive_thinking =
        s.thinking_budget == 0 && form == thinking_form::adaptive && family->thinking_on_by_default;
}

// Chat Completions for a model whose tool calls need the Responses API: refused on the
// provider's own host (every request carries tools), a note for another server (a gateway
// may translate).
void check_chat_tools(model_config& c, const std::optional<model_family>& family,
                      bool other_server) {
    const llm_settings& s = c.settings;
    if (s.provider != llm_provider::openai || s.api != openai_api::chat || !family) return;
    const bool refused =
        family->chat == chat_tools::refused ||
        (family->chat == chat_tools::without_reasoning && s.reasoning_effort != "none");
    if (!refused) return;
    const std::string why =
        s.model + " takes function tools on Chat Completions " +
        (family->chat == chat_tools::refused ? std::string("not at all")
                                             : "only with --reasoning-effort none") +
        "; every request carries the tools";
    if (!other_server) refuse("--api chat: " + why + ": use --api responses (or auto)");
    c.notes.push_back("Chat Completions at " + redact_url_credentials(s.base_url) + ": " + why +
                      "; give --api responses if the server speaks it");
}

// --temperature where the model takes one.
void set_temperature(llm_settings& s, double flag, const std::optional<model_family>& family) {
    if (flag < 0) return;
    if (family && family->temperature == sampling::refused)
        refuse("--temperature: " + s.model +
               " refuses sampling parameters (a 400 error); leave the flag out");
    if (family && family->temperature == sampling::without_reasoning &&
        s.reasoning_effort != "none")
        refuse("--temperature: " + s.model +
               " takes a temperature only with --reasoning-effort none (the effort is " +
               (s.reasoning_effort.empty() ? std::string("the model's default")
                                           : quote_value(s.reasoning_effort)) +
               ")");
    s.temperature = flag;
}

}  // namespace

int retry_output_tokens(int flag, int max_output_tokens, bool other_server) {
    if (flag < 0) {  // auto: a local server's context may not hold more
        const int twice = std::min(2 * max_output_tokens, 64000);
        return other_server || twice <= max_output_tokens ? 0 : twice;
    }
    if (flag > 0 && flag <= max_output_tokens)
        throw run_failure(exit_code::usage,
                          "--max-output-tokens-retry: expected 0 (never) or more than "
                          "--max-output-tokens (" +
                              std::to_string(max_output_tokens) + "), got " + std::to_string(flag));
    return flag;
}

std::string api_name(const llm_settings& s) {
    if (s.provider == llm_provider::anthropic) return "messages";
    return k_openai_apis.name(s.api);
}

std::string api_url(const llm_settings& s) {
    return redact_url_credentials(model_endpoint_url(s));
}

model_config read_model_config(const optimizer_options& o) {
    model_config c;
    // A daemon job runs in its job folder: a .env there is the submitter's, never the daemon's
    // model settings (it could send the daemon's key to the submitter's server).
    const auto dot_env = o.daemon_job ? std::map<std::string, std::string>{} : read_dot_env();
    const bool anthropic = o.provider == "anthropic";
    llm_settings& s = c.settings;
    s.provider = anthropic ? llm_provider::anthropic : llm_provider::openai;
    c.key_name = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    c.api_key = setting(c.key_name, dot_env);
    s.base_url = !o.base_url.empty()
                     ? o.base_url
                     : setting(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", dot_env);
    c.configured = !c.api_key.empty() || !s.base_url.empty();
    // OpenAI's or Anthropic's own host, however it is named, gets the provider's defaults.
    const bool other_server = !s.base_url.empty() && !is_provider_host(s.provider, s.base_url);
    const std::string env_model = setting("CUDA_OPTIMIZER_MODEL", dot_env);
    s.model = !o.model.empty()     ? o.model
              : !env_model.empty() ? env_model
                                   : default_model(s.provider);
    // The model's name says what it takes, on any host (a gateway in front of the provider);
    // a local server's own models are not in the table and say nothing about it.
    const std::optional<model_family> family = find_model_family(s.provider, s.model);
    if (!family && !other_server)
        c.notes.push_back("model " + s.model + " is not in the table of known models (checked " +
                          k_model_table_checked + "): its flags are sent unchecked");
    if (family && !family->shuts_down.empty())
        c.notes.push_back(
            s.model + " shuts down on " + family->shuts_down +
            (family->replacement.empty()
                 ? std::string(" (the provider names no replacement)")
                 : " (the provider's replacement: --model " + family->replacement + ")"));
    s.reasoning_effort = effort_for(o.reasoning_effort, s.model, family, s.provider, other_server);
    set_temperature(s, o.temperature, family);
    s.max_output_tokens = o.max_output_tokens;
    set_thinking(c, o, family);
    if (family && !family->anthropic_version.empty())
        s.anthropic_version = family->anthropic_version;
    s.retry_output_tokens =
        retry_output_tokens(o.max_output_tokens_retry, o.max_output_tokens, other_server);
    s.api = o.api == "auto" ? (other_server ? openai_api::chat : openai_api::responses)
                            : *k_openai_apis.parse(o.api);  // CLI11 checked the word
    check_chat_tools(c, family, other_server);
    s.timeout = milliseconds_of(o.request_timeout_s);
    return c;
}

price_table read_price_table(const optimizer_options& o) {
    try {
        return read_prices(o.prices_json, o.config.empty() ? "config" : o.config);
    } catch (const std::exception& e) {
        throw run_failure(exit_code::invalid_request, e.what());  // the config file is wrong
    }
}

std::string model_usage_json(const llm_client& client, const price_table& prices) {
    const llm_totals& t = client.totals();
    const auto cost = estimate_cost(prices, client.settings().model, t);
    rapidjson::Document d(rapidjson::kObjectType);
    json_object o(d);
    o.add("provider", k_llm_providers.name(client.settings().provider))
        .add("model", client.settings().model)
        .add("api", api_name(client.settings()))
        .add("url", api_url(client.settings()))
        .add("calls", t.calls)
        .add("prompt_tokens", t.usage.prompt)
        .add("completion_tokens", t.usage.completion)
        // Thinking inside the output that the API did not count apart: null, not 0.
        .add("reasoning_tokens", t.usage.reasoning_reported
                                     ? std::optional<long long>(t.usage.reasoning)
                                     : std::nullopt)
        .add("cached_tokens", t.usage.cached)
        .add("cache_write_tokens", t.usage.cache_written);
    if (cost)
        o.add("estimated_cost_usd", std::round(*cost * 1e6) / 1e6);  // to the micro-dollar
    else
        o.add("estimated_cost_usd", "unknown");
    return to_compact_json(d);
}

}  // namespace cuopt
