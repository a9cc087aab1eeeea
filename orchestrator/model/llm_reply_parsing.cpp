// The replies: Chat Completions, Responses and Messages bodies decoded into model_reply
// (text, tool calls, stop reason, token usage in one convention).
#include <rapidjson/document.h>

#include <algorithm>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

// A token count: a non-negative integer the reply gives, else 0 (never a wrapped value).
long long number_at(const Value& obj, const char* key) {
    return std::max(0LL, integer_of(obj, key).value_or(0));
}

// OpenAI's token usage, which Chat Completions names prompt/completion and Responses
// input/output: the two counts, the reasoning tokens among the output and the cached ones
// among the input, each from its *_tokens_details object.
token_usage openai_usage(const Value& reply, const std::string& input, const std::string& output) {
    const Value& u = object_or_empty(reply, "usage");
    const auto details = [&u](const std::string& stem) -> const Value& {
        return object_or_empty(u, (stem + "_tokens_details").c_str());
    };
    token_usage t;
    t.prompt = number_at(u, (input + "_tokens").c_str());
    t.completion = number_at(u, (output + "_tokens").c_str());
    t.reasoning = number_at(details(output), "reasoning_tokens");
    t.cached = number_at(details(input), "cached_tokens");
    t.cache_written = number_at(details(input), "cache_write_tokens");  // GPT-5.6 and later
    return t;
}

// A reply the provider's content filter stopped: a refusal, with the reason kept (never a cut
// reply sent again with a higher limit).
void filtered(model_reply& r) {
    const std::string said = r.text.empty() ? "" : "; it had said: " + r.text.substr(0, 200);
    r.text =
        "refusal: the provider's content filter stopped the reply (" + r.stop_reason + ")" + said;
    r.stop_reason = "refusal";
}

// A reply's document: an object, else a protocol error quoting the body's start.
json_field reply_object(const rapidjson::Document& d, const std::string& why,
                        const std::string& body) {
    if (!why.empty() || !d.IsObject())
        throw model_protocol_error("the reply is not a JSON object" +
                                   (why.empty() ? "" : " (" + why + ")") + ": " +
                                   body.substr(0, 200));
    return json_field(d, "reply");
}

// One output item of a Responses reply into `r`: message text (and refusals), function calls.
void read_output_item(const json_field& item, model_reply& r) {
    const std::string type = item.text("type");
    if (type == "function_call") {
        tool_call call;
        call.id = item.text("call_id");
        call.name = item.text("name");
        call.arguments_json = item.text("arguments");
        r.calls.push_back(call);
        return;
    }
    const std::optional<json_field> content =
        type == "message" ? item.find("content") : std::nullopt;
    if (!content || !content->is_array()) return;
    for (const json_field& part : content->items()) {
        const std::string kind = part.text("type");
        if (kind == "output_text") r.text += part.text("text");
        if (kind == "refusal") {
            r.text += "refusal: " + part.text("refusal");
            r.stop_reason = "refusal";
        }
    }
}

}  // namespace

model_reply parse_responses_reply(const std::string& body) {
    rapidjson::Document d;
    const json_field reply = reply_object(d, try_parse_json(d, body), body);
    model_reply r;
    try {
        for (const json_field& item : reply["output"].items()) read_output_item(item, r);
    } catch (const json_error& e) {
        throw model_protocol_error(e.what());
    }
    r.raw_items_json = to_compact_json(d["output"]);
    if (const auto status = string_of(d, "status"); status && r.stop_reason.empty()) {
        r.stop_reason = *status;
        const auto why = string_of(object_or_empty(d, "incomplete_details"), "reason");
        if (r.stop_reason == "incomplete" && why) r.stop_reason += ": " + *why;
        if (r.stop_reason == "incomplete: content_filter") filtered(r);
    }
    r.usage = openai_usage(d, "input", "output");
    return r;
}

model_reply parse_reply(const llm_settings& s, const std::string& body) {
    return s.provider == llm_provider::openai && s.api == openai_api::responses
               ? parse_responses_reply(body)
               : parse_model_reply(s.provider, body);
}

namespace {

// A Chat Completions reply: the first choice's message, its tool calls and the usage.
model_reply openai_reply(const json_field& reply) {
    const Value& d = reply.value();
    model_reply r;
    const json_field choice = reply["choices"][0];
    const json_field message = choice["message"];
    if (!message.is_object()) message.fail("an object");
    const Value& msg = message.value();
    if (const auto text = string_of(msg, "content")) r.text = *text;
    if (const auto finish = choice.find("finish_reason"); finish && finish->is_text())
        r.stop_reason = finish->text();
    if (r.stop_reason == "content_filter") filtered(r);
    if (const auto refusal = string_of(msg, "refusal")) {
        r.text = "refusal: " + *refusal;
        r.stop_reason = "refusal";
    }
    if (const auto calls = message.find("tool_calls"); calls && calls->is_array())
        for (const json_field& c : calls->items()) {
            const json_field fn = c["function"];
            tool_call call;
            const auto id = c.find("id");
            call.id = id && id->is_text() ? id->text() : "";
            call.name = fn.text("name");
            const json_field args = fn["arguments"];
            call.arguments_json = args.is_text() ? args.text() : to_compact_json(args.value());
            r.calls.push_back(call);
        }
    r.usage = openai_usage(d, "prompt", "completion");
    return r;
}

// A Messages reply: text and tool_use blocks (thinking blocks kept verbatim) and the usage.
model_reply anthropic_reply(const json_field& reply) {
    const Value& d = reply.value();
    model_reply r;
    for (const json_field& block : reply["content"].items()) {
        const std::string type = block.text("type");
        if (type == "text") r.text += block.text("text");
        if (type == "tool_use") {
            tool_call call;
            call.id = block.text("id");
            call.name = block.text("name");
            call.arguments_json = to_compact_json(block["input"].value());
            r.calls.push_back(call);
        }
    }
    if (const auto stop = string_of(d, "stop_reason")) r.stop_reason = *stop;
    r.raw_items_json = to_compact_json(d["content"]);  // thinking blocks go back verbatim
    const Value& u = object_or_empty(d, "usage");
    // Anthropic's input_tokens leave out the cache reads and writes: all three are input.
    r.usage.cached = number_at(u, "cache_read_input_tokens");
    r.usage.cache_written = number_at(u, "cache_creation_input_tokens");
    r.usage.prompt = number_at(u, "input_tokens") + r.usage.cached + r.usage.cache_written;
    r.usage.completion = number_at(u, "output_tokens");  // thinking included, billed as output
    // The thinking part of output_tokens, where the API counts it apart (thinking models).
    const Value& details = object_or_empty(u, "output_tokens_details");
    r.usage.reasoning_reported = integer_of(details, "thinking_tokens").has_value();
    r.usage.reasoning = number_at(details, "thinking_tokens");
    return r;
}

}  // namespace

model_reply parse_model_reply(llm_provider provider, const std::string& body) {
    rapidjson::Document d;
    const json_field reply = reply_object(d, try_parse_json(d, body), body);
    try {
        return provider == llm_provider::openai ? openai_reply(reply) : anthropic_reply(reply);
    } catch (const json_error& e) {
        throw model_protocol_error(e.what());
    }
}

}  // namespace cuopt
