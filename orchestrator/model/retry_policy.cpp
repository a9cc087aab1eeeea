#include "orchestrator/model/retry_policy.hpp"

#include <ctime>
#include <thread>

namespace cuopt {

std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value) {
    if (value.empty()) return std::nullopt;
    if (value.find_first_not_of("0123456789.") == std::string::npos) {
        try {
            return std::chrono::milliseconds(static_cast<long long>(std::stod(value) * 1000));
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    std::tm tm{};
    if (!strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return std::nullopt;
    const std::time_t when = timegm(&tm), now = std::time(nullptr);
    return std::chrono::milliseconds(
        std::max<long long>(0, static_cast<long long>(when - now) * 1000));
}

bool quota_exhausted(const http_response& r) {
    if (r.status != 429) return false;
    for (const char* word : {"insufficient_quota", "exceeded your current quota", "spend limit",
                             "billing", "credit balance"})
        if (r.body.find(word) != std::string::npos) return true;
    return false;
}

bool is_retryable(const http_response& r) {
    if (r.over_limit) return false;               // the same question would bring the same flood
    if (!r.transport_error.empty()) return true;  // refused, reset, timed out, truncated
    if (quota_exhausted(r)) return false;         // waiting does not refill an account
    // Both providers' SDKs obey the server's own word on it.
    if (const auto it = r.headers.find("x-should-retry"); it != r.headers.end()) {
        if (it->second == "true") return true;
        if (it->second == "false") return false;
    }
    return r.status == 429 || r.status == 408 || r.status == 409 ||
           (r.status >= 500 && r.status <= 599);
}

std::optional<std::chrono::milliseconds> asked_delay(const http_response& r) {
    if (const auto it = r.headers.find("retry-after-ms"); it != r.headers.end()) {
        try {
            const double ms = std::stod(it->second);
            if (ms >= 0) return std::chrono::milliseconds(static_cast<long long>(ms));
        } catch (const std::exception&) {
            // A header that is no number asks for nothing: the policy's own backoff applies.
        }
    }
    if (const auto it = r.headers.find("retry-after"); it != r.headers.end())
        return parse_retry_after(it->second);
    return std::nullopt;
}

exchange_result post_with_retries(http_transport& transport, const http_request& request,
                                  const retry_settings& s, const sleeper& sleep) {
    exchange_result out;
    std::mt19937_64 rng(s.seed);
    for (int attempt = 0; attempt < std::max(1, s.max_attempts); ++attempt) {
        out.response = transport.perform(request);
        exchange_attempt a{out.response.status, out.response.transport_error,
                           out.response.latency_ms, 0};
        if (out.response.transport_error.empty() && out.response.status >= 200 &&
            out.response.status < 300) {
            out.attempts.push_back(a);
            out.ok = true;
            return out;
        }
        if (!is_retryable(out.response)) {
            out.attempts.push_back(a);
            out.error = "HTTP " + std::to_string(out.response.status) +
                        (quota_exhausted(out.response) ? " (quota or spend limit exhausted)" : "") +
                        ": " + out.response.body.substr(0, 2000);
            return out;
        }
        if (attempt + 1 == s.max_attempts) {
            out.attempts.push_back(a);
            break;
        }
        // Full jitter over an exponentially growing window, unless the server said when.
        const long long window =
            std::min<long long>(s.max_delay.count(), s.base_delay.count() << std::min(attempt, 20));
        std::chrono::milliseconds delay(
            std::uniform_int_distribution<long long>(0, std::max(0LL, window))(rng));
        if (const auto asked = asked_delay(out.response)) delay = std::min(*asked, s.max_delay);
        a.waited_ms = static_cast<double>(delay.count());
        out.attempts.push_back(a);
        if (sleep)
            sleep(delay);
        else
            std::this_thread::sleep_for(delay);
    }
    out.retryable_failure = true;
    out.error =
        "gave up after " + std::to_string(out.attempts.size()) + " attempts: " +
        (out.response.transport_error.empty() ? "HTTP " + std::to_string(out.response.status)
                                              : out.response.transport_error);
    return out;
}

}  // namespace cuopt
