#pragma once
/// HTTP for the model clients: one POST of a JSON body (or a GET, for the documentation
/// tool) with headers and a whole-request timeout, the status, headers and body back. Behind an
/// interface so the retry policy and the model clients can be tested with a fake; the real one
/// (libcurl) is the only file that includes curl. Transport failures (refused, timed out,
/// truncated) are data.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace cuopt {

struct http_request {
    std::string url;
    std::map<std::string, std::string> headers;  // name -> value (may hold credentials: never log)
    std::string body;
    std::chrono::milliseconds timeout{120000};
    bool get = false;                      // GET (no body) instead of POST
    std::size_t max_body_bytes = 0;        // 0: no limit; a longer body is a transport error
    std::string protocols = "http,https";  // what libcurl may speak (CURLOPT_PROTOCOLS_STR)
};

struct http_response {
    long status = 0;              // 0 when no response arrived
    std::string transport_error;  // "" on a complete exchange; else what went wrong
    bool timed_out = false;
    bool over_limit = false;  // the body passed the request's max_body_bytes: cut, not retried
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    double latency_ms = 0;
    std::string effective_url;  // the URL the exchange was with (CURLINFO_EFFECTIVE_URL)
};

class http_transport {
  public:
    virtual ~http_transport() = default;
    /// One exchange: a POST of the body, or a GET when request.get.
    virtual http_response perform(const http_request& request) = 0;
};

/// A URL's parts as libcurl parses it (lower-case scheme and host; the port the scheme
/// implies when none is written: "443" for https); nullopt when it does not.
struct url_parts {
    std::string scheme, host, port, user, password, fragment;
};
std::optional<url_parts> parse_url(const std::string& url);

/// `ref` (absolute, or relative like a Location header) against `base`; "" when either is bad.
std::string resolve_url(const std::string& base, const std::string& ref);

/// libcurl, with TLS verification on and no proxy surprises beyond the environment's.
std::unique_ptr<http_transport> make_curl_transport();

}  // namespace cuopt
