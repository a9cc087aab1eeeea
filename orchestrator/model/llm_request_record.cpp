// The one way a model request is written down: credentials left out of the headers, every
// secret and every URL's user:password scrubbed from what remains.
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "orchestrator/model/llm_protocol.hpp"

namespace cuopt {

using rapidjson::Value;

std::string redact_url_credentials(std::string text) {
    for (std::size_t scheme = text.find("://"); scheme != std::string::npos;
         scheme = text.find("://", scheme + 3)) {
        const std::size_t start = scheme + 3;
        const std::size_t end = text.find_first_of("/?#@ \t\n\"'", start);
        if (end != std::string::npos && text[end] == '@' && end > start)
            text.replace(start, end - start, "[REDACTED]");
    }
    return text;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
    for (const std::string& s : secrets) {
        if (s.empty()) continue;
        for (std::size_t pos; (pos = text.find(s)) != std::string::npos;)
            text.replace(pos, s.size(), "[REDACTED]");
    }
    return redact_url_credentials(std::move(text));
}

std::string record_request(const http_request& request, const std::vector<std::string>& secrets) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    json_object headers(a);
    for (const auto& [name, value] : request.headers) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        if (lower == "authorization" || lower == "x-api-key" || lower == "api-key" ||
            lower == "proxy-authorization")
            continue;  // credentials never leave the process
        headers.add(name, value);
    }
    rapidjson::Document body;
    const bool parsed_ok = try_parse_json(body, request.body).empty();
    json_object o(d);
    o.add("url", request.url).add("headers", headers);
    if (parsed_ok)
        o.add("body", static_cast<const Value&>(body));
    else
        o.add("body", request.body);
    return redact(to_pretty_json(d), secrets);
}

}  // namespace cuopt
