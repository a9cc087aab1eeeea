#pragma once
/// The dashboard's credentials. The operator's token (from the token file) opens a browser
/// session: `?token=` on a GET, answered with a session cookie named after the port and a
/// redirect that takes the token out of the address bar. The cookie holds a session id signed
/// with a per-daemon random key, never the token; each session has a CSRF token derived from
/// it. Scripts send the token itself as `Authorization: Bearer`. All comparisons take constant
/// time.

#include <array>
#include <string>
#include <string_view>

namespace cuopt {

/// How a request showed who it is.
enum class token_source { none, header, cookie, query };

/// A request's credentials: where they were, and the session id when a cookie held it.
struct request_credentials {
    token_source source = token_source::none;
    std::string session;
};

/// The operator's token and the daemon's session key (random, made at construction: sessions
/// end when the daemon does).
class dashboard_keys {
  public:
    explicit dashboard_keys(std::string token);
    const std::string& token() const { return m_token; }
    /// A new session id: a random nonce and its signature, "NONCE.MAC" in hex.
    std::string new_session() const;
    /// True when `session` is one that new_session made (in this daemon).
    bool valid_session(std::string_view session) const;
    /// The session's CSRF token: HMAC-SHA256 of the session id under the key, in hex.
    std::string csrf_token(std::string_view session) const;
    bool valid_csrf(std::string_view session, std::string_view csrf) const;

  private:
    std::string mac(std::string_view purpose, std::string_view data) const;
    std::string m_token;
    std::array<unsigned char, 32> m_key{};
};

/// Where the request shows the token (Authorization header, then `?token=` in the target) or
/// a valid session (the port's cookie), in that order. Only a GET may log in with `?token=`.
request_credentials find_credentials(std::string_view authorization, std::string_view cookie,
                                     std::string_view target, std::string_view method,
                                     const dashboard_keys& keys, unsigned short port);

/// "cuopt_session_PORT": every port of a host shares its cookies, so each dashboard has its own.
std::string session_cookie_name(unsigned short port);

/// The Set-Cookie value that carries a session: HttpOnly, SameSite=Strict, Path=/.
std::string session_cookie(unsigned short port, const std::string& session);

/// "" when a state-changing browser request comes from the dashboard's own pages: its Origin
/// is "http://" + Host, or (no Origin) Sec-Fetch-Site is same-origin or none. Else one line
/// saying why not.
std::string cross_origin_problem(std::string_view origin, std::string_view fetch_site,
                                 std::string_view host);

/// The `csrf_token` field of a form body (urlencoded or multipart/form-data); "" when absent.
std::string csrf_field(std::string_view content_type, std::string_view body);

/// Equal strings, in time that depends on their lengths only.
bool tokens_equal(std::string_view a, std::string_view b);

/// The target with every `token` query parameter removed ("/x?token=a&b=1" -> "/x?b=1").
std::string target_without_token(std::string_view target);

/// Percent-decoding ("%2e" -> "."; '+' as a space when `plus_is_space`). Bad escapes are kept
/// as they are.
std::string url_decode(std::string_view s, bool plus_is_space);

/// The decoded value of query parameter `name` in target ("" when absent).
std::string query_value(std::string_view target, std::string_view name);

/// The target's path (before '?'), percent-decoded.
std::string target_path(std::string_view target);

}  // namespace cuopt
