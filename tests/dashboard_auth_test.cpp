// The dashboard's credentials: where a request may carry the token or a session, the sessions'
// CSRF tokens, the same-origin rule, the constant-time comparison and the URL handling.
#include "orchestrator/service/dashboard_auth.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {
const std::string k_token = "0123456789abcdef0123456789abcdef";
}

TEST_CASE("the token is found in a Bearer header, a session in the port's cookie, ?token= on a GET",
          "[http]") {
    const dashboard_keys keys(k_token);
    const std::string session = keys.new_session();
    CHECK(find_credentials("Bearer " + k_token, "", "/", "POST", keys, 80).source ==
          token_source::header);
    CHECK(find_credentials("bearer  " + k_token + " ", "", "/", "GET", keys, 80).source ==
          token_source::header);
    const request_credentials c =
        find_credentials("", "a=1; cuopt_session_80=" + session + "; b=2", "/", "POST", keys, 80);
    CHECK(c.source == token_source::cookie);
    CHECK(c.session == session);
    CHECK(find_credentials("", "", "/jobs/x?a=1&token=" + k_token, "GET", keys, 80).source ==
          token_source::query);
    CHECK(find_credentials("", "cuopt_session_80=" + session, "/?token=" + k_token, "GET", keys, 80)
              .source == token_source::query);  // signed in already: the link still goes
}

TEST_CASE("a wrong, partial, empty or misplaced token or session is nothing", "[http]") {
    const dashboard_keys keys(k_token), other(k_token);
    const std::string session = keys.new_session();
    const auto none = [&](const std::string& authorization, const std::string& cookie,
                          const std::string& target, const std::string& method = "GET") {
        return find_credentials(authorization, cookie, target, method, keys, 80).source ==
               token_source::none;
    };
    CHECK(none("", "", "/"));
    CHECK(none("Bearer " + k_token.substr(1), "", "/"));
    CHECK(none("Bearer " + k_token + "0", "", "/"));
    CHECK(none("Basic " + k_token, "", "/"));
    CHECK(none("Bearer ", "cuopt_session_80=", "/?token="));
    CHECK(none("", "cuopt_token=" + k_token, "/"));                   // the token is not a session
    CHECK(none("", "cuopt_session_81=" + session, "/"));              // another port's cookie
    CHECK(none("", "cuopt_session_80=" + other.new_session(), "/"));  // another daemon's
    CHECK(none("", "cuopt_session_80=" + session.substr(0, 97) + "0", "/"));
    CHECK(none("", "", "/?xtoken=" + k_token));
    CHECK(none("", "", "/" + k_token));
    CHECK(none("", "", "/?token=" + k_token, "POST"));  // a login link is a GET only
    const dashboard_keys unset("");
    CHECK(find_credentials("Bearer ", "", "/", "GET", unset, 80).source == token_source::none);
}

TEST_CASE("a CSRF token belongs to its session and its daemon only", "[http]") {
    const dashboard_keys keys(k_token), other(k_token);
    const std::string a = keys.new_session(), b = keys.new_session();
    CHECK(a != b);
    CHECK(keys.csrf_token(a).size() == 64);
    CHECK(keys.valid_csrf(a, keys.csrf_token(a)));
    CHECK_FALSE(keys.valid_csrf(a, keys.csrf_token(b)));
    CHECK_FALSE(keys.valid_csrf(a, other.csrf_token(a)));
    CHECK_FALSE(keys.valid_csrf(a, ""));
    CHECK_FALSE(keys.valid_csrf(a, a.substr(33)));  // the session's own MAC is not its token
    CHECK(session_cookie(8470, a) ==
          "cuopt_session_8470=" + a + "; HttpOnly; SameSite=Strict; Path=/");
}

TEST_CASE("only the dashboard's own origin may change state", "[http]") {
    CHECK(cross_origin_problem("http://127.0.0.1:8470", "", "127.0.0.1:8470").empty());
    CHECK(cross_origin_problem("", "same-origin", "127.0.0.1:8470").empty());
    CHECK(cross_origin_problem("", "none", "127.0.0.1:8470").empty());
    CHECK_THAT(cross_origin_problem("http://127.0.0.1:9000", "same-origin", "127.0.0.1:8470"),
               Catch::Contains("http://127.0.0.1:9000"));
    CHECK_FALSE(cross_origin_problem("null", "", "127.0.0.1:8470").empty());
    CHECK_FALSE(cross_origin_problem("https://127.0.0.1:8470", "", "127.0.0.1:8470").empty());
    CHECK_FALSE(cross_origin_problem("", "same-site", "127.0.0.1:8470").empty());
    CHECK_FALSE(cross_origin_problem("", "cross-site", "127.0.0.1:8470").empty());
    CHECK_FALSE(cross_origin_problem("", "", "127.0.0.1:8470").empty());
}

TEST_CASE("the CSRF field is read from urlencoded and multipart form bodies", "[http]") {
    CHECK(csrf_field("application/x-www-form-urlencoded", "a=1&csrf_token=ab%43") == "abC");
    const std::string multipart =
        "--B\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n"
        "t0k\r\n--B--\r\n";
    CHECK(csrf_field("multipart/form-data; boundary=B", multipart) == "t0k");
    CHECK(csrf_field("multipart/form-data; boundary=B", "garbage").empty());
    CHECK(csrf_field("text/plain", "csrf_token=x").empty());
}

TEST_CASE("tokens compare equal only when every byte and the length agree", "[http]") {
    CHECK(tokens_equal("abc", "abc"));
    CHECK_FALSE(tokens_equal("abd", "abc"));
    CHECK_FALSE(tokens_equal("ab", "abc"));
    CHECK_FALSE(tokens_equal("abcd", "abc"));
    CHECK_FALSE(tokens_equal(std::string("ab\0", 3), "ab"));
    CHECK_FALSE(tokens_equal("", ""));
}

TEST_CASE("the address without its token keeps every other parameter", "[http]") {
    CHECK(target_without_token("/?token=abc") == "/");
    CHECK(target_without_token("/jobs/j-1?token=abc&x=1") == "/jobs/j-1?x=1");
    CHECK(target_without_token("/a?x=1&token=abc&y=2&token=z") == "/a?x=1&y=2");
    CHECK(target_without_token("/a") == "/a");
}

TEST_CASE("percent-decoding turns escapes into bytes and leaves bad ones alone", "[http]") {
    CHECK(url_decode("%2e%2E/x%2Fy", false) == "../x/y");
    CHECK(url_decode("a+b%20c", true) == "a b c");
    CHECK(url_decode("a+b", false) == "a+b");
    CHECK(url_decode("%zz%4", false) == "%zz%4");
    CHECK(url_decode("%00", false) == std::string(1, '\0'));
    CHECK(query_value("/x?a=1&b=two%20words", "b") == "two words");
    CHECK(query_value("/x?a=1", "b").empty());
    CHECK(target_path("/jobs/%2e%2e/x?token=1") == "/jobs/../x");
}
