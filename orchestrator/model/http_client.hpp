#pragma once
/// HTTP for the model clients: one POST of a JSON body with headers and a whole-request
/// timeout, the status, headers and body back. Behind an interface so the retry policy
/// and the model clients can be tested with a fake; the real one (libcurl) is the only
/// file that includes curl. Transport failures (refused, timed out, truncated) are data.

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace cuopt {

struct http_request {
    std::string url;
    std::map<std::string, std::string> headers;  // name -> value (may hold credentials: never log)
    std::string body;
    std::chrono::milliseconds timeout{120000};
};

struct http_response {
    long status = 0;              // 0 when no response arrived
    std::string transport_error;  // "" on a complete exchange; else what went wrong
    bool timed_out = false;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    double latency_ms = 0;
};

class http_transport {
  public:
    virtual ~http_transport() = default;
    virtual http_response post(const http_request& request) = 0;
};

/// libcurl, with TLS verification on and no proxy surprises beyond the environment's.
std::unique_ptr<http_transport> make_curl_transport();

}  // namespace cuopt
