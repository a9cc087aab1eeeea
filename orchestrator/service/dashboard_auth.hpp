#pragma once
/// The dashboard's credentials, bound to its own origin (scheme, host and port). No cookie is
/// ever set: a browser sends a host's cookies to every port of it, so any local service the
/// operator's browser opened would receive them. Instead:
///  * scripts send the operator's token (from the token file) as `Authorization: Bearer`;
///  * the dashboard's page trades the token for a session (POST /api/session), keeps the
///    session id in its own origin's localStorage and sends it as `Authorization: Session`,
///    which a page of any other origin can neither read nor make a browser send;
///  * a document the browser must open by address (a run's report, its files) is fetched with a
///    ticket: one GET of one path, within 30 s, in a live session (POST /api/ticket).
/// Sessions end after an idle period and an absolute one, on logout, and with the daemon.
/// Ids and tickets are a random nonce and its HMAC under a per-daemon key, checked in constant
/// time before any table is consulted. Not thread-safe: the event loop alone uses it.

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace cuopt {

/// How a request showed who it is.
enum class token_source { none, header, session, ticket };

/// A request's credentials: where they were, and the session id when one was used.
struct request_credentials {
    token_source source = token_source::none;
    std::string session;
};

/// How long a browser session lasts (serve --session-idle-minutes, --session-hours).
struct session_limits {
    double idle_s = 3600;        // ends this long after its last request
    double max_s = 12 * 3600.0;  // ends this long after sign-in, however busy
};

/// The operator's token, the daemon's key (random, made at construction), the live sessions
/// and the unspent tickets.
class dashboard_keys {
  public:
    using clock = std::chrono::steady_clock;
    static constexpr std::size_t k_max_sessions = 64;  // over it, the least recently used ends
    static constexpr std::size_t k_max_tickets = 256;  // over it, the oldest is dropped
    static constexpr auto k_ticket_life = std::chrono::seconds(30);

    explicit dashboard_keys(std::string token, session_limits limits = {});
    const std::string& token() const { return m_token; }
    const session_limits& limits() const { return m_limits; }

    /// A new session id, "NONCE.MAC" in hex.
    std::string open_session(clock::time_point now);
    /// True when `session` is live (made here, not ended, within both limits at `now`); the
    /// request counts as its last use.
    bool use_session(std::string_view session, clock::time_point now);
    /// Ends the session and its tickets (nothing when it is not live).
    void end_session(std::string_view session);
    std::size_t live_sessions() const { return m_sessions.size(); }

    /// A ticket for one GET of `path` (decoded, as target_path gives it) within k_ticket_life.
    std::string new_ticket(std::string_view session, const std::string& path,
                           clock::time_point now);
    /// True when `ticket` is unspent, in time, for `path` and of a live session; spent here.
    bool take_ticket(std::string_view ticket, const std::string& path, clock::time_point now);

  private:
    struct session_entry {
        clock::time_point opened, used;
    };
    struct ticket_entry {
        std::string session, path;
        clock::time_point made;
    };
    std::string mac(std::string_view purpose, std::string_view data) const;
    std::string signed_nonce(std::string_view purpose) const;
    /// The nonce of a "NONCE.MAC" whose MAC is right for `purpose`; "" otherwise.
    std::string verified_nonce(std::string_view purpose, std::string_view value) const;
    bool live(const session_entry& s, clock::time_point now) const;

    std::string m_token;
    session_limits m_limits;
    std::array<unsigned char, 32> m_key{};
    std::map<std::string, session_entry> m_sessions;  // by nonce
    std::map<std::string, ticket_entry> m_tickets;    // by nonce
};

/// The request's credential: the Authorization header's token (Bearer) or live session
/// (Session), else, on a GET, a `ticket` query parameter for the target's own path.
request_credentials find_credentials(std::string_view authorization, std::string_view target,
                                     std::string_view method, dashboard_keys& keys,
                                     dashboard_keys::clock::time_point now);

/// True when the target's query carries a `token` parameter: the token has been put in an
/// address, which the browser keeps in its history and sends to the server.
bool token_in_query(std::string_view target);

/// "" when a state-changing browser request comes from the dashboard's own pages: its Origin
/// is "http://" + Host, or (no Origin) Sec-Fetch-Site is same-origin or none. Else one line
/// saying why not.
std::string cross_origin_problem(std::string_view origin, std::string_view fetch_site,
                                 std::string_view host);

/// Equal strings, in time that depends on their lengths only.
bool tokens_equal(std::string_view a, std::string_view b);

/// Percent-decoding ("%2e" -> "."; '+' as a space when `plus_is_space`). Bad escapes are kept
/// as they are.
std::string url_decode(std::string_view s, bool plus_is_space);

/// The decoded value of query parameter `name` in target ("" when absent).
std::string query_value(std::string_view target, std::string_view name);

/// The target's path (before '?'), percent-decoded.
std::string target_path(std::string_view target);

}  // namespace cuopt
