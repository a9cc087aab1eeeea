// The libcurl transport and the retry policy against a real HTTP server on loopback.
#include <catch2/catch.hpp>

#include "loopback_http_server.hpp"
#include "orchestrator/model/retry_policy.hpp"

using namespace cuopt;
using namespace std::chrono_literals;

namespace {

http_request post_to(const std::string& url, std::chrono::milliseconds timeout = 5s) {
    http_request r;
    r.url = url;
    r.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer sk-test-secret"}};
    r.body = R"({"model": "m", "messages": []})";
    r.timeout = timeout;
    return r;
}

struct recorded_sleeps {
    std::vector<std::chrono::milliseconds> delays;
    sleeper fn() {
        return [this](std::chrono::milliseconds d) { delays.push_back(d); };
    }
};

}  // namespace

TEST_CASE("a POST reaches the loopback server and its reply comes back whole") {
    test::loopback_http_server server({{200, {{"X-Request-Id", "abc"}}, R"({"ok": true})"}});
    const http_response r =
        make_curl_transport()->perform(post_to(server.url("/v1/chat/completions")));
    CHECK(r.status == 200);
    CHECK(r.transport_error.empty());
    CHECK(r.body == R"({"ok": true})");
    CHECK(r.headers.at("x-request-id") == "abc");
    const auto reqs = server.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].target == "/v1/chat/completions");
    CHECK(reqs[0].headers.at("authorization") == "Bearer sk-test-secret");
    CHECK(reqs[0].body == R"({"model": "m", "messages": []})");
}

TEST_CASE("429 with Retry-After waits as asked, then succeeds") {
    test::loopback_http_server server(
        {{429, {{"Retry-After", "2"}}, R"({"error": "slow down"})"}, {200, {}, "{}"}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    const exchange_result r =
        post_with_retries(*transport, post_to(server.url()), retry_settings{}, sleeps.fn());
    CHECK(r.ok);
    REQUIRE(r.attempts.size() == 2);
    CHECK(r.attempts[0].status == 429);
    REQUIRE(sleeps.delays.size() == 1);
    CHECK(sleeps.delays[0] == 2000ms);
}

TEST_CASE("5xx is retried with jittered backoff inside its window") {
    test::loopback_http_server server({{500, {}, "oops"}, {503, {}, "busy"}, {200, {}, "{}"}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    retry_settings s;
    s.base_delay = 100ms;
    const exchange_result r = post_with_retries(*transport, post_to(server.url()), s, sleeps.fn());
    CHECK(r.ok);
    CHECK(r.attempts.size() == 3);
    REQUIRE(sleeps.delays.size() == 2);
    CHECK(sleeps.delays[0] <= 100ms);
    CHECK(sleeps.delays[1] <= 200ms);
}

TEST_CASE("a 4xx other than 429 is final and reported with its body") {
    test::loopback_http_server server(
        {{401, {}, R"({"error": {"message": "Incorrect API key provided"}})"}, {200, {}, "{}"}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    const exchange_result r =
        post_with_retries(*transport, post_to(server.url()), retry_settings{}, sleeps.fn());
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.retryable_failure);
    CHECK(r.attempts.size() == 1);
    CHECK_THAT(r.error, Catch::StartsWith("HTTP 401: ") && Catch::Contains("Incorrect API key"));
    CHECK(sleeps.delays.empty());
}

TEST_CASE("a server that hangs past the request timeout is a timeout, retried, then given up") {
    test::loopback_http_server server({{200, {}, "{}", 3000ms}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    retry_settings s;
    s.max_attempts = 2;
    const auto start = std::chrono::steady_clock::now();
    const exchange_result r =
        post_with_retries(*transport, post_to(server.url(), 300ms), s, sleeps.fn());
    CHECK(std::chrono::steady_clock::now() - start < 2500ms);
    CHECK_FALSE(r.ok);
    CHECK(r.retryable_failure);
    CHECK(r.response.timed_out);
    CHECK(r.attempts.size() == 2);
    CHECK_THAT(r.error, Catch::StartsWith("gave up after 2 attempts"));
}

TEST_CASE("a truncated body is a transport error, retried") {
    test::loopback_http_server server({{200, {}, R"({"choices": [)", 0ms, true}, {200, {}, "{}"}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    const exchange_result r =
        post_with_retries(*transport, post_to(server.url()), retry_settings{}, sleeps.fn());
    CHECK(r.ok);
    REQUIRE(r.attempts.size() == 2);
    CHECK_FALSE(r.attempts[0].transport_error.empty());
}

TEST_CASE("a refused connection is a transport error") {
    std::string url;
    {
        test::loopback_http_server gone({});
        url = gone.url();
    }
    const http_response r = make_curl_transport()->perform(post_to(url, 2s));
    CHECK(r.status == 0);
    CHECK_FALSE(r.transport_error.empty());
    CHECK(is_retryable(r));
}

TEST_CASE("Retry-After parses seconds and HTTP dates") {
    CHECK(*parse_retry_after("3") == 3000ms);
    CHECK(*parse_retry_after("0.5") == 500ms);
    CHECK(*parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0ms);  // in the past: now
    CHECK_FALSE(parse_retry_after("soon"));
    CHECK_FALSE(parse_retry_after(""));
}

TEST_CASE("retry-after-ms wins over Retry-After, 409 is retried, x-should-retry is obeyed") {
    test::loopback_http_server server(
        {{429, {{"Retry-After", "9"}, {"retry-after-ms", "250"}}, "{}"},
         {409, {}, R"({"error": "conflict"})"},
         {200, {}, "{}"}});
    const auto transport = make_curl_transport();
    recorded_sleeps sleeps;
    const exchange_result r =
        post_with_retries(*transport, post_to(server.url()), retry_settings{}, sleeps.fn());
    CHECK(r.ok);
    REQUIRE(r.attempts.size() == 3);
    REQUIRE(sleeps.delays.size() == 2);
    CHECK(sleeps.delays[0] == 250ms);

    test::loopback_http_server no({{503, {{"x-should-retry", "false"}}, "down for good"}});
    const exchange_result n =
        post_with_retries(*transport, post_to(no.url()), retry_settings{}, sleeps.fn());
    CHECK_FALSE(n.ok);
    CHECK(n.attempts.size() == 1);
    test::loopback_http_server yes(
        {{400, {{"x-should-retry", "true"}}, "try again"}, {200, {}, "{}"}});
    CHECK(post_with_retries(*transport, post_to(yes.url()), retry_settings{}, sleeps.fn()).ok);
}

TEST_CASE("a 429 that says the quota or spend limit is exhausted is final, with its message") {
    test::loopback_http_server server(
        {{429,
          {},
          R"({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}})"}});
    recorded_sleeps sleeps;
    const exchange_result r = post_with_retries(*make_curl_transport(), post_to(server.url()),
                                                retry_settings{}, sleeps.fn());
    CHECK_FALSE(r.ok);
    CHECK(r.attempts.size() == 1);
    CHECK(sleeps.delays.empty());
    CHECK_FALSE(r.retryable_failure);
    CHECK_THAT(r.error, Catch::Contains("quota or spend limit exhausted") &&
                            Catch::Contains("exceeded your current quota"));
}
