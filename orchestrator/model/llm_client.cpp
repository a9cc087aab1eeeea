#include "orchestrator/model/llm_client.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <regex>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

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
    if (try_parse_json(d, body).empty()) {  // {"error": {"message": ...}} or {"error": "..."}
        if (std::string m = text_of(object_or_empty(d, "error"), "message"); !m.empty()) return m;
        if (std::string m = text_of(d, "error"); !m.empty()) return m;
    }
    return body.substr(0, 300);
}

bool model_missing(const http_response& r, const std::string& model) {
    if (r.status == 404 && r.body.find("model") != std::string::npos) return true;
    // A retired model: a 4xx whose message names this model and says "retired" (not a
    // parameter that was retired for it: "thinking.type enabled is retired for this model").
    const auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    const std::string said = lower(api_message(r.body));
    if (r.status >= 400 && r.status < 500 && !model.empty() &&
        said.find("retired") != std::string::npos && said.find(lower(model)) != std::string::npos)
        return true;
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
    if (m_totals.reply_bytes >= k_max_run_reply_bytes)
        throw llm_budget_exhausted("the run's model replies reached " +
                                   std::to_string(k_max_run_reply_bytes >> 20) +
                                   " MiB, all a run may receive");
    llm_settings settings = m_settings;
    if (max_output_tokens > 0) settings.max_output_tokens = max_output_tokens;
    http_request request = build_model_request(settings, m_key, system, turns, tools);
    request.max_body_bytes = static_cast<std::size_t>(
        std::min<long long>(k_max_reply_bytes, k_max_run_reply_bytes - m_totals.reply_bytes));
    const exchange_result result = post_with_retries(m_transport, request, m_retries, m_sleep);
    ++m_totals.calls;
    m_totals.reply_bytes += static_cast<long long>(result.response.body.size());
    if (!result.ok) {
        record(request, result, std::nullopt, result.error);
        if (result.response.over_limit)
            throw llm_api_error(0, "a reply from " + redact(request.url, {m_key}) + " passed " +
                                       std::to_string(request.max_body_bytes >> 20) +
                                       " MiB and was cut there (at most " +
                                       std::to_string(k_max_reply_bytes >> 20) + " MiB a reply, " +
                                       std::to_string(k_max_run_reply_bytes >> 20) +
                                       " MiB a run): not a model's answer");
        if (model_missing(result.response, m_settings.model))
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
        if (result.response.status >= 400 && !result.retryable_failure)  // one line, not raw
            throw llm_api_error(
                result.response.status,
                "HTTP " + std::to_string(result.response.status) +
                    (quota_exhausted(result.response) ? " (quota or spend limit exhausted)" : "") +
                    " from " + k_llm_providers.name(m_settings.provider) + " at " +
                    redact(request.url, {m_key}) + ": " +
                    quote_value(redact(api_message(result.response.body), {m_key}), 300));
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

namespace {

constexpr std::size_t k_recorded_cut_bytes = 64 << 10;  // of a reply cut at the limit

// A recorded request or response: its JSON where it parses, else its text.
Value json_or_text(const std::string& text, json_allocator& a) {
    rapidjson::Document d;
    if (try_parse_json(d, text).empty()) return Value(d, a);
    return json_text(text, a);
}

Value usage_json(const std::optional<model_reply>& reply, json_allocator& a) {
    if (!reply) return Value();
    const token_usage& u = reply->usage;
    json_object usage(a);
    usage.add("prompt_tokens", u.prompt)
        .add("completion_tokens", u.completion)
        // Anthropic: thinking is inside completion_tokens
        .add("reasoning_tokens",
             u.reasoning_reported ? std::optional<long long>(u.reasoning) : std::nullopt)
        .add("cached_tokens", u.cached)
        .add("cache_write_tokens", u.cache_written);
    return usage.take();
}

// The members every exchange record opens with (its iteration null before the search).
json_object& add_exchange_header(json_object& o, int index, int iteration, std::string_view kind) {
    return o.add("schema_version", 1)
        .add("index", index)
        .add("iteration", iteration >= 0 ? std::optional<int>(iteration) : std::nullopt)
        .add("kind", kind);
}

}  // namespace

void llm_client::record(const http_request& request, const exchange_result& result,
                        const std::optional<model_reply>& reply, const std::string& error) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    json_object o(d);
    add_exchange_header(o, ++m_exchanges, m_iteration, "model")
        .add("provider", k_llm_providers.name(m_settings.provider))
        .add("model", m_settings.model)
        .add("request", json_or_text(record_request(request, {m_key}), a));  // our own: parses
    json_object response(a);
    response.add("http_status", static_cast<int64_t>(result.response.status))
        .add("body_bytes", static_cast<int64_t>(result.response.body.size()))
        .add("body",
             result.response.over_limit  // its start only: the rest was never read
                 ? json_text(redact(result.response.body.substr(0, k_recorded_cut_bytes), {m_key}) +
                                 "... (cut: over the limit)",
                             a)
                 : json_or_text(redact(result.response.body, {m_key}), a));
    o.add("response", response);
    double latency = 0;
    json_array attempts(a);
    for (const exchange_attempt& at : result.attempts) {
        json_object v(a);
        v.add("http_status", static_cast<int64_t>(at.status))
            .add("transport_error", redact(at.transport_error, {m_key}))
            .add("latency_ms", at.latency_ms)
            .add("waited_ms", at.waited_ms);
        attempts.push(v);
        latency += at.latency_ms + at.waited_ms;
    }
    o.add("latency_ms", latency)
        .add("retries", static_cast<int>(result.attempts.empty() ? 0 : result.attempts.size() - 1))
        .add("attempts", attempts)
        .add("usage", usage_json(reply, a))
        .add("stop_reason", reply ? std::optional<std::string>(reply->stop_reason) : std::nullopt)
        .add("error",
             error.empty() ? std::nullopt : std::optional<std::string>(redact(error, {m_key})));
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
    json_object o(d);
    add_exchange_header(o, ++m_exchanges, m_iteration, tool)
        .add("request", json_or_text(request_json, a))
        .add("response", json_or_text(response_json, a));
    write_exchange(to_pretty_json(d));
}

namespace {

// One recorded exchange's share: a model call and its usage, or a documentation lookup's
// network fetches (its "fetch URL -> ..." lines).
void add_record(const rapidjson::Document& d, recorded_spending& out) {
    if (const auto index = integer_of(d, "index"); index && *index >= INT_MIN && *index <= INT_MAX)
        out.exchanges = std::max(out.exchanges, static_cast<int>(*index));
    const std::string kind = text_of(d, "kind");
    if (kind == "nvidia_docs") {
        for (const Value& line : array_or_empty(object_or_empty(d, "response"), "pages").GetArray())
            out.docs_fetches +=
                line.IsString() && std::string(line.GetString()).rfind("fetch ", 0) == 0;
        return;
    }
    if (kind != "model") return;
    ++out.totals.calls;
    out.totals.reply_bytes += integer_of(object_or_empty(d, "response"), "body_bytes").value_or(0);
    const Value* usage = member(d, "usage");
    if (!usage || !usage->IsObject()) return;
    const Value& u = *usage;
    auto tokens = [&u](const char* key) { return integer_of(u, key).value_or(0); };
    token_usage& t = out.totals.usage;
    t.prompt += tokens("prompt_tokens");
    t.completion += tokens("completion_tokens");
    t.reasoning += tokens("reasoning_tokens");
    t.cached += tokens("cached_tokens");
    t.cache_written += tokens("cache_write_tokens");
    t.reasoning_reported = t.reasoning_reported && member(u, "reasoning_tokens") != nullptr;
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
        if (try_parse_json(d, text).empty()) add_record(d, out);
    }
    return out;
}

}  // namespace cuopt
