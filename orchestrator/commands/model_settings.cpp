#include "orchestrator/commands/model_settings.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "common/json_document.hpp"
#include "orchestrator/commands/run_failure.hpp"

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

price_table read_prices(const std::string& json, const std::string& source) {
    price_table prices;
    if (json.empty()) return prices;
    const rapidjson::Document d = parse_json(json, source + " prices");
    for (const auto& m : d.GetObject()) {
        const std::string field = source + ": field prices." + m.name.GetString();
        if (!m.value.IsObject())
            throw json_error(field + ": expected {\"input_per_mtok\": x, \"output_per_mtok\": y}");
        model_price p;
        for (const auto& [key, into] : {std::pair{"input_per_mtok", &p.input_per_mtok},
                                        std::pair{"output_per_mtok", &p.output_per_mtok}}) {
            const auto it = m.value.FindMember(key);
            if (it == m.value.MemberEnd() || !it->value.IsNumber() || it->value.GetDouble() < 0)
                throw json_error(field + "." + key +
                                 ": expected a number >= 0 (US dollars per million tokens)");
            *into = it->value.GetDouble();
        }
        if (const auto it = m.value.FindMember("cached_input_per_mtok");
            it != m.value.MemberEnd()) {
            if (!it->value.IsNumber() || it->value.GetDouble() < 0)
                throw json_error(field +
                                 ".cached_input_per_mtok: expected a number >= 0 (US dollars per "
                                 "million cached input tokens)");
            p.cached_input_per_mtok = it->value.GetDouble();
        }
        prices[m.name.GetString()] = p;
    }
    return prices;
}

}  // namespace

std::string effort_to_send(const std::string& flag, bool anthropic, bool other_server) {
    if (anthropic || flag == "omit") return "";
    if (flag.empty())  // local servers may refuse it
        return other_server ? "" : llm_settings{}.reasoning_effort;
    return flag;  // "none" included: it is a value OpenAI's reasoning models accept
}

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

model_config read_model_config(const optimizer_options& o) {
    model_config c;
    // A daemon job runs in its job folder: a .env there is the submitter's, never the daemon's
    // model settings (it could send the daemon's key to the submitter's server).
    const auto dot_env = o.daemon_job ? std::map<std::string, std::string>{} : read_dot_env();
    const bool anthropic = o.provider == "anthropic";
    c.settings.provider = anthropic ? llm_provider::anthropic : llm_provider::openai;
    c.key_name = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    c.api_key = setting(c.key_name, dot_env);
    c.settings.base_url =
        !o.base_url.empty()
            ? o.base_url
            : setting(anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", dot_env);
    c.configured = !c.api_key.empty() || !c.settings.base_url.empty();
    const std::string env_model = setting("CUDA_OPTIMIZER_MODEL", dot_env);
    c.settings.model = !o.model.empty()     ? o.model
                       : !env_model.empty() ? env_model
                                            : default_model(c.settings.provider);
    c.settings.reasoning_effort =
        effort_to_send(o.reasoning_effort, anthropic, !c.settings.base_url.empty());
    if (o.temperature >= 0) c.settings.temperature = o.temperature;
    c.settings.max_output_tokens = o.max_output_tokens;
    c.settings.thinking_budget = anthropic ? o.thinking_budget : 0;
    if (c.settings.thinking_budget > 0 &&
        (c.settings.thinking_budget < 1024 || c.settings.thinking_budget >= o.max_output_tokens))
        throw run_failure(
            exit_code::usage,
            "--thinking-budget: expected at least 1024 and below --max-output-tokens (" +
                std::to_string(o.max_output_tokens) + "), got " +
                std::to_string(c.settings.thinking_budget));
    if (c.settings.thinking_budget > 0 && c.settings.temperature)
        throw run_failure(exit_code::usage,
                          "--temperature cannot be combined with --thinking-budget: Anthropic's "
                          "extended thinking refuses a changed temperature; drop one of them");
    c.settings.retry_output_tokens = retry_output_tokens(
        o.max_output_tokens_retry, o.max_output_tokens, !c.settings.base_url.empty());
    c.settings.api = o.api == "auto"
                         ? (c.settings.base_url.empty() ? openai_api::responses : openai_api::chat)
                         : *k_openai_apis.parse(o.api);  // CLI11 checked the word
    c.settings.timeout =
        std::chrono::milliseconds(static_cast<long long>(o.request_timeout_s * 1000));
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
    auto& a = d.GetAllocator();
    d.AddMember("provider", rapidjson::StringRef(k_llm_providers.name(client.settings().provider)),
                a);
    d.AddMember("model", json_text(client.settings().model, a), a);
    d.AddMember("calls", t.calls, a);
    d.AddMember("prompt_tokens", static_cast<std::int64_t>(t.usage.prompt), a);
    d.AddMember("completion_tokens", static_cast<std::int64_t>(t.usage.completion), a);
    // Anthropic bills thinking as output and does not count it apart: null, not 0.
    if (t.usage.reasoning_reported)
        d.AddMember("reasoning_tokens", static_cast<std::int64_t>(t.usage.reasoning), a);
    else
        d.AddMember("reasoning_tokens", rapidjson::Value(), a);
    d.AddMember("cached_tokens", static_cast<std::int64_t>(t.usage.cached), a);
    if (cost)
        d.AddMember("estimated_cost_usd", std::round(*cost * 1e6) / 1e6, a);  // to the micro-dollar
    else
        d.AddMember("estimated_cost_usd", "unknown", a);
    return to_compact_json(d);
}

}  // namespace cuopt
