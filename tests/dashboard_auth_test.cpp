// The dashboard's token: where a request may carry it, the constant-time comparison, and the
// URL handling around ?token=.
#include "orchestrator/service/dashboard_auth.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;

namespace {
const std::string k_token = "0123456789abcdef0123456789abcdef";
}

TEST_CASE("the token is found in a Bearer header, the cuopt_token cookie or ?token=", "[http]") {
    CHECK(find_token("Bearer " + k_token, "", "/", k_token) == token_source::header);
    CHECK(find_token("bearer  " + k_token + " ", "", "/", k_token) == token_source::header);
    CHECK(find_token("", "a=1; cuopt_token=" + k_token + "; b=2", "/", k_token) ==
          token_source::cookie);
    CHECK(find_token("", "", "/jobs/x?a=1&token=" + k_token, k_token) == token_source::query);
}

TEST_CASE("a wrong, partial, empty or misplaced token is no token", "[http]") {
    CHECK(find_token("", "", "/", k_token) == token_source::none);
    CHECK(find_token("Bearer " + k_token.substr(1), "", "/", k_token) == token_source::none);
    CHECK(find_token("Bearer " + k_token + "0", "", "/", k_token) == token_source::none);
    CHECK(find_token("Basic " + k_token, "", "/", k_token) == token_source::none);
    CHECK(find_token("Bearer ", "cuopt_token=", "/?token=", k_token) == token_source::none);
    CHECK(find_token("", "other_token=" + k_token, "/", k_token) == token_source::none);
    CHECK(find_token("", "", "/?xtoken=" + k_token, k_token) == token_source::none);
    CHECK(find_token("", "", "/" + k_token, k_token) == token_source::none);
    CHECK(find_token("Bearer ", "", "/", "") ==
          token_source::none);  // no token set: nothing passes
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
    CHECK(token_cookie("t0k") == "cuopt_token=t0k; HttpOnly; SameSite=Strict; Path=/");
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
