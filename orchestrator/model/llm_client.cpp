#include "orchestrator/model/llm_client.hpp"

#include <rapidjson/document.h>

#include <cstdio>
#include <regex>

#include "common/file_io.hpp"
#include "common/json_document.hpp"

namespace cuopt {

using rapidjson::Value;

std::optional<double> estimate_cost(const price_table& prices, const std::string& model,
                                    const llm_totals& t) {
    const auto it = prices.find(model);
    if (it == prices.end()) return std::nullopt;
    const model_price& p = it->second;
    const double cached = static_cast<double>(t.usage.cached);
    const double written = static_cast<double>(t.usage.cache_written);
    const double cached_price = p.cached_input_per_mtok.value_or(p.input_per_mtok);
    const double write_price = p.cache_write_per_mtok.value_or(1.25 * p.input_per_mtok);
    const double uncached = std::max(0.0, static_cast<double>(t.usage.prompt) - cached - written);
    return (uncached * p.input_per_mtok + cached * cached_price + written * write_price +
            static_cast<double>(t.usage.completion) * p.output_per_mtok) /
           1e6;
}

llm_client::llm_client(llm_settings settings, std::string api_key, http_transport& transport,
                       retry_settings retries, llm_budget budget,
                       std::filesystem::path record_folder, sleeper sleep)
    : m_settings(std::move(settings)),
      m_key(std::move(api_key)),
      m_transport(transport),
      m_retries(retries),
      m_budget(budget),
      m_folder(std::move(record_folder)),
      m_sleep(std::move(sleep)) {}

std::string api_message(const std::string& body) {
    rapidjson::Document d;
    if (try_parse_json(d, body).empty() && d.IsObject() && d.HasMember("error")) {
        const auto& e = d["error"];
        if (e.IsObject() && e.HasMember("message") && e["message"].IsString())
            return e["message"].GetString();
        if (e.IsString()) return e.GetString();
    }
    return body.substr(0, 300);
}

bool model_missing(const http_response& r) {
    if (r.status == 404 && r.body.find("model") != std::string::npos) return true;
    return r.status >= 400 && r.status < 500 &&
           (r.body.find("model_not_found") != std::string::npos ||
            (r.body.find("not_found_error") != std::string::npos &&
             r.body.find("model") != std::string::npos));
}

model_reply llm_client::send(const std::string& system, const std::vector<chat_turn>& turns,
                             const std::vector<tool_spec>& tools, int max_output_tokens) {
    if (m_budget.max_calls > 0 && m_totals.calls >= m_budget.max_calls)
        throw llm_budget_exhausted("the run's budget of " + std::to_string(m_budget.max_calls) +
                                   " model calls is spent");
    const long long used = m_totals.usage.prompt + m_totals.usage.completion;
    if (m_budget.max_tokens_total > 0 && used >= m_budget.max_tokens_total)
        throw llm_budget_exhausted("the run's budget of " +
                                   std::to_string(m_budget.max_tokens_total) +
                                   " tokens is spent (" + std::to_string(used) + " used)");
    llm_settings settings = m_settings;
    if (max_output_tokens > 0) settings.max_output_tokens = max_output_tokens;
    const http_request request = build_model_request(settings, m_key, system, turns, tools);
    const exchange_result result = post_with_retries(m_transport, request, m_retries, m_sleep);
    ++m_totals.calls;
    if (!result.ok) {
        record(request, result, std::nullopt, result.error);
        if (model_missing(result.response))
            throw llm_api_error(result.response.status,
                                "the model '" + m_settings.model + "' is not available from " +
                                    k_llm_providers.name(m_settings.provider) + " (HTTP " +
                                    std::to_string(result.response.status) + ": " +
                                    redact(api_message(result.response.body), {m_key}) +
                                    "); choose another with --model or CUDA_OPTIMIZER_MODEL");
        if (result.response.status == 404)  // no such endpoint: the base URL is wrong
            throw llm_api_error(404, "HTTP 404 from " + redact(request.url, {m_key}) + " (" +
                                         redact(api_message(result.response.body), {m_key}) +
                                         "); check --base-url (an OpenAI-compatible server's "
                                         "usually ends in /v1)");
        throw llm_api_error(result.response.status, redact(result.error, {m_key}));
    }
    model_reply reply;
    try {
        reply = parse_reply(m_settings, result.response.body);
    } catch (const model_protocol_error& e) {
        record(request, result, std::nullopt, e.what());
        throw;
    }
    m_totals.usage.prompt += reply.usage.prompt;
    m_totals.usage.completion += reply.usage.completion;
    m_totals.usage.reasoning += reply.usage.reasoning;
    m_totals.usage.cached += reply.usage.cached;
    m_totals.usage.cache_written += reply.usage.cache_written;
    m_totals.usage.reasoning_reported =
        m_totals.usage.reasoning_reported && reply.usage.reasoning_reported;
    record(request, result, reply, "");
    return reply;
}

void llm_client::record(const http_request& request, const exchange_result& result,
                        const std::optional<model_reply>& reply, const std::string& error) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("schema_version", 1, a);
    d.AddMember("index", ++m_exchanges, a);
    d.AddMember("iteration", m_iteration >= 0 ? Value(m_iteration) : Value(), a);
    d.AddMember("kind", "model", a);
    d.AddMember("provider", rapidjson::StringRef(k_llm_providers.name(m_settings.provider)), a);
    d.AddMember("model", json_text(m_settings.model, a), a);
    rapidjson::Document req;
    try_parse_json(req, record_request(request, {m_key}));  // our own JSON: it parses
    d.AddMember("request", Value(req, a), a);
    Value response(rapidjson::kObjectType);
    response.AddMember("http_status", static_cast<int64_t>(result.response.status), a);
    rapidjson::Document body;
    const std::string clean_body = redact(result.response.body, {m_key});
    const bool parsed_ok = try_parse_json(body, clean_body).empty();
    response.AddMember("body", parsed_ok ? Value(body, a) : json_text(clean_body, a), a);
    d.AddMember("response", response, a);
    double latency = 0;
    Value attempts(rapidjson::kArrayType);
    for (const exchange_attempt& at : result.attempts) {
        Value v(rapidjson::kObjectType);
        v.AddMember("http_status", static_cast<int64_t>(at.status), a);
        v.AddMember("transport_error", json_text(redact(at.transport_error, {m_key}), a), a);
        v.AddMember("latency_ms", at.latency_ms, a);
        v.AddMember("waited_ms", at.waited_ms, a);
        attempts.PushBack(v, a);
        latency += at.latency_ms + at.waited_ms;
    }
    d.AddMember("latency_ms", latency, a);
    d.AddMember("retries",
                static_cast<int>(result.attempts.empty() ? 0 : result.attempts.size() - 1), a);
    d.AddMember("attempts", attempts, a);
    Value usage;
    if (reply) {
        usage.SetObject();
        usage.AddMember("prompt_tokens", static_cast<int64_t>(reply->usage.prompt), a);
        usage.AddMember("completion_tokens", static_cast<int64_t>(reply->usage.completion), a);
        usage.AddMember("reasoning_tokens",
                        reply->usage.reasoning_reported
                            ? Value(static_cast<int64_t>(reply->usage.reasoning))
                            : Value(),  // Anthropic: thinking is inside completion_tokens
                        a);
        usage.AddMember("cached_tokens", static_cast<int64_t>(reply->usage.cached), a);
        usage.AddMember("cache_write_tokens", static_cast<int64_t>(reply->usage.cache_written), a);
    }
    d.AddMember("usage", usage, a);
    d.AddMember("stop_reason", reply ? json_text(reply->stop_reason, a) : Value(), a);
    d.AddMember("error", error.empty() ? Value() : json_text(redact(error, {m_key}), a), a);
    write_exchange(to_pretty_json(d));
}

void llm_client::write_exchange(const std::string& json) const {
    char name[32];
    std::snprintf(name, sizeof name, "model-%03d.json", m_exchanges);
    write_file_atomic(m_folder / name, redact(json, {m_key}));
}

void llm_client::record_tool_exchange(const std::string& tool, const std::string& request_json,
                                      const std::string& response_json) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("schema_version", 1, a);
    d.AddMember("index", ++m_exchanges, a);
    d.AddMember("iteration", m_iteration >= 0 ? Value(m_iteration) : Value(), a);
    d.AddMember("kind", json_text(tool, a), a);
    rapidjson::Document req, resp;
    const bool req_ok = try_parse_json(req, request_json).empty();
    const bool resp_ok = try_parse_json(resp, response_json).empty();
    d.AddMember("request", req_ok ? Value(req, a) : json_text(request_json, a), a);
    d.AddMember("response", resp_ok ? Value(resp, a) : json_text(response_json, a), a);
    write_exchange(to_pretty_json(d));
}

namespace {

// One recorded exchange's share: a model call and its usage, or a documentation lookup's
// network fetches (its "fetch URL -> ..." lines).
void add_record(const rapidjson::Document& d, recorded_spending& out) {
    if (d.HasMember("index") && d["index"].IsInt())
        out.exchanges = std::max(out.exchanges, d["index"].GetInt());
    const std::string kind =
        d.HasMember("kind") && d["kind"].IsString() ? d["kind"].GetString() : "";
    if (kind == "nvidia_docs") {
        const bool listed = d.HasMember("response") && d["response"].IsObject() &&
                            d["response"].HasMember("pages") && d["response"]["pages"].IsArray();
        if (!listed) return;
        for (const Value& line : d["response"]["pages"].GetArray())
            out.docs_fetches +=
                line.IsString() && std::string(line.GetString()).rfind("fetch ", 0) == 0;
        return;
    }
    if (kind != "model") return;
    ++out.totals.calls;
    if (!d.HasMember("usage") || !d["usage"].IsObject()) return;
    const Value& u = d["usage"];
    auto tokens = [&u](const char* key) {
        return u.HasMember(key) && u[key].IsInt64() ? u[key].GetInt64() : 0;
    };
    token_usage& t = out.totals.usage;
    t.prompt += tokens("prompt_tokens");
    t.completion += tokens("completion_tokens");
    t.reasoning += tokens("reasoning_tokens");
    t.cached += tokens("cached_tokens");
    t.cache_written += tokens("cache_write_tokens");
    t.reasoning_reported =
        t.reasoning_reported && u.HasMember("reasoning_tokens") && !u["reasoning_tokens"].IsNull();
}

}  // namespace

recorded_spending read_recorded_spending(const std::filesystem::path& folder) {
    static const std::regex k_name(R"(model-[0-9]+\.json)");
    recorded_spending out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
        if (!std::regex_match(e.path().filename().string(), k_name)) continue;
        rapidjson::Document d;
        std::string text;
        try {
            text = read_text_file(e.path());
        } catch (const std::exception&) {
            continue;
        }
        if (try_parse_json(d, text).empty() && d.IsObject()) add_record(d, out);
    }
    return out;
}

}  // namespace cuopt
