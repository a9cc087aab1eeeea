#pragma once
/// When to try a model request again, and after how long: 429, 5xx, connection errors,
/// timeouts and truncated bodies are retried with exponential backoff and full jitter,
/// honouring Retry-After (seconds or an HTTP date); any other 4xx is final and reported
/// with its body. The sleeping is injectable so tests need not wait.

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "orchestrator/model/http_client.hpp"

namespace cuopt {

struct retry_settings {
    int max_attempts = 5;
    std::chrono::milliseconds base_delay{500};
    std::chrono::milliseconds max_delay{30000};
    std::uint64_t seed = 1;  // jitter, deterministic for tests
};

struct exchange_attempt {
    long status = 0;
    std::string transport_error;
    double latency_ms = 0;
    double waited_ms = 0;  // before the next attempt
};

struct exchange_result {
    http_response response;  // the last one
    std::vector<exchange_attempt> attempts;
    bool ok = false;                 // a 2xx with a complete body
    bool retryable_failure = false;  // gave up on something that could succeed later
    std::string error;               // why not ok, for people
};

/// The delay a Retry-After header asks for, if it is present and parses (seconds or HTTP date).
std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value);

/// Whether a response is worth retrying: transport errors, 408, 409, 429 and 5xx, unless the
/// server says otherwise (x-should-retry) or a 429 says the quota or spend limit is exhausted.
bool is_retryable(const http_response& r);

/// A 429 whose body says the account's quota, spend limit or credit is used up.
bool quota_exhausted(const http_response& r);

/// The delay the server asks for: retry-after-ms, else Retry-After (seconds or HTTP date).
std::optional<std::chrono::milliseconds> asked_delay(const http_response& r);

using sleeper = std::function<void(std::chrono::milliseconds)>;

/// POSTs with retries. `sleep` defaults to std::this_thread::sleep_for.
exchange_result post_with_retries(http_transport& transport, const http_request& request,
                                  const retry_settings& settings, const sleeper& sleep = {});

}  // namespace cuopt
