// The dashboard's credentials: the token as a Bearer header, sessions as a Session header
// (opened, used, idle, too old, ended, evicted), one-time tickets for a document's address,
// the same-origin rule, the constant-time comparison and the URL handling.
#include "orchestrator/service/dashboard_auth.hpp"

#include <catch2/catch.hpp>

using namespace cuopt;
using namespace std::chrono_literals;

namespace {
const std::string k_token = "0123456789abcdef0123456789abcdef";
const auto t0 = dashboard_keys::clock::time_point() + 1000h;

token_source source_of(dashboard_keys& keys, const std::string& authorization,
                       const std::string& target, const std::string& method = "GET",
                       dashboard_keys::clock::time_point now = t0) {
    return find_credentials(authorization, target, method, keys, now).source;
}
}  // namespace

TEST_CASE("the token is found in a Bearer header, a session in a Session header", "[http]") {
    dashboard_keys keys(k_token);
    const std::string session = keys.open_session(t0);
    CHECK(source_of(keys, "Bearer " + k_token, "/", "POST") == token_source::header);
    CHECK(source_of(keys, "bearer  " + k_token + " ", "/") == token_source::header);
    const request_credentials c = find_credentials("Session " + session, "/", "POST", keys, t0);
    CHECK(c.source == token_source::session);
    CHECK(c.session == session);
    CHECK(source_of(keys, "SESSION " + session, "/") == token_source::session);
}

TEST_CASE("a wrong, partial, empty or misplaced token or session is nothing", "[http]") {
    dashboard_keys keys(k_token), other(k_token);
    const std::string session = keys.open_session(t0);
    const auto none = [&](const std::string& authorization, const std::string& target,
                          const std::string& method = "GET") {
        return source_of(keys, authorization, target, method) == token_source::none;
    };
    CHECK(none("", "/"));
    CHECK(none("Bearer " + k_token.substr(1), "/"));
    CHECK(none("Bearer " + k_token + "0", "/"));
    CHECK(none("Basic " + k_token, "/"));
    CHECK(none("Bearer", "/"));
    CHECK(none("Bearer" + k_token, "/"));
    CHECK(none("Session " + k_token, "/"));                 // the token is not a session
    CHECK(none("Bearer " + session, "/"));                  // nor a session the token
    CHECK(none("Session " + other.open_session(t0), "/"));  // another daemon's
    std::string altered = session;
    altered.back() = altered.back() == '0' ? '1' : '0';  // one signature digit changed
    CHECK(none("Session " + altered, "/"));
    CHECK(none("Session " + session + "0", "/"));
    CHECK(none("", "/?token=" + k_token));  // the query is no place for the token
    CHECK(none("", "/" + k_token));
    CHECK(none("", "/?session=" + session));
    dashboard_keys unset("");
    CHECK(source_of(unset, "Bearer ", "/") == token_source::none);
}

TEST_CASE("a session ends when idle too long, too old, signed out, or pushed out", "[http]") {
    dashboard_keys keys(k_token, session_limits{60, 600});
    const std::string s = keys.open_session(t0);
    CHECK(s.size() == 97);
    CHECK(keys.use_session(s, t0 + 59s));
    CHECK(keys.use_session(s, t0 + 118s));  // each use restarts the idle clock
    CHECK_FALSE(keys.use_session(s, t0 + 179s));
    CHECK_FALSE(keys.use_session(s, t0 + 180s));  // and once ended, it stays ended
    const std::string busy = keys.open_session(t0);
    for (auto t = t0; t < t0 + 590s; t += 50s) CHECK(keys.use_session(busy, t));
    CHECK_FALSE(keys.use_session(busy, t0 + 600s));  // 10 minutes after sign-in, however busy
    const std::string out = keys.open_session(t0);
    keys.end_session(out);
    CHECK_FALSE(keys.use_session(out, t0 + 1s));
    const std::string first = keys.open_session(t0);
    for (std::size_t i = 0; i < dashboard_keys::k_max_sessions; ++i) keys.open_session(t0 + 1s);
    CHECK(keys.live_sessions() == dashboard_keys::k_max_sessions);
    CHECK_FALSE(keys.use_session(first, t0 + 2s));  // the least recently used made room
}

TEST_CASE("a ticket opens its one path once, within 30 s, while its session lives", "[http]") {
    dashboard_keys keys(k_token), other(k_token);
    const std::string s = keys.open_session(t0);
    const std::string path = "/jobs/j-1/report";
    const std::string t = keys.new_ticket(s, path, t0);
    CHECK(t.size() == 97);
    CHECK(source_of(keys, "", path + "?ticket=" + t, "POST") == token_source::none);  // GET only
    CHECK(source_of(keys, "", path + "?ticket=" + t) == token_source::ticket);
    CHECK(source_of(keys, "", path + "?ticket=" + t) == token_source::none);  // spent
    const std::string u = keys.new_ticket(s, path, t0);
    CHECK(source_of(keys, "", "/jobs/j-1/files/x?ticket=" + u) == token_source::none);
    CHECK(source_of(keys, "", path + "?ticket=" + u) == token_source::none);  // spent
    const std::string v = keys.new_ticket(s, path, t0);
    CHECK(source_of(keys, "", path + "?a=1&ticket=" + v, "GET", t0 + 29s) == token_source::ticket);
    CHECK(source_of(keys, "", path + "?ticket=" + v, "GET", t0 + 29s) == token_source::none);
    const std::string late = keys.new_ticket(s, path, t0);
    CHECK_FALSE(keys.take_ticket(late, path, t0 + 30s));
    CHECK_FALSE(keys.take_ticket(s, path, t0));  // a session id is no ticket
    CHECK_FALSE(keys.take_ticket(other.new_ticket(other.open_session(t0), path, t0), path, t0));
    const std::string orphan = keys.new_ticket(s, path, t0);
    keys.end_session(s);
    CHECK_FALSE(keys.take_ticket(orphan, path, t0 + 1s));
}

TEST_CASE("the token in a query is found under any spelling of its name", "[http]") {
    CHECK(token_in_query("/?token=x"));
    CHECK(token_in_query("/a?b=1&token"));
    CHECK(token_in_query("/?%74oken=x"));
    CHECK(token_in_query("/?to%6Ben="));
    CHECK_FALSE(token_in_query("/token=x"));
    CHECK_FALSE(token_in_query("/?tokens=x&xtoken=y"));
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

TEST_CASE("tokens compare equal only when every byte and the length agree", "[http]") {
    CHECK(tokens_equal("abc", "abc"));
    CHECK_FALSE(tokens_equal("abd", "abc"));
    CHECK_FALSE(tokens_equal("ab", "abc"));
    CHECK_FALSE(tokens_equal("abcd", "abc"));
    CHECK_FALSE(tokens_equal(std::string("ab\0", 3), "ab"));
    CHECK_FALSE(tokens_equal("", ""));
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
