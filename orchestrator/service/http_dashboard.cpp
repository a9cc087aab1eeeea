// The dashboard's HTTP: Boost.Beast sessions on the daemon's io_context. Each request's headers
// are read first and the credentials checked before any body is read; a body over the upload
// limit is refused with 413 unread; slow work (intake, commit) runs on a few threads whose
// results come back to the event loop by boost::asio::post.
//
// Lock-out: a connection that has not yet shown a credential has 5 s to send its headers, and
// a 401 or 403 closes it. Connections are capped (connection_table); when full, the oldest
// connection that never authenticated makes room, so idle or failing sockets from a local
// user (all of loopback is one address) cannot keep the operator out.
#include "orchestrator/service/http_dashboard.hpp"

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "orchestrator/service/dashboard_auth.hpp"
#include "orchestrator/service/dashboard_pages.hpp"
#include "orchestrator/service/dashboard_routes.hpp"
#include "orchestrator/service/dashboard_workers.hpp"

namespace cuopt {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto k_preauth_timeout = std::chrono::seconds(5);  // headers, until authenticated
constexpr auto k_idle_timeout = std::chrono::seconds(30);    // between an owner's requests
constexpr auto k_body_timeout = std::chrono::seconds(300);
constexpr std::size_t k_max_header_bytes = 16 * 1024;
// A refused upload's body is read and dropped (up to this much, for this long) after the 413
// went out, so that the browser sees the 413 rather than a connection reset mid-upload.
constexpr std::size_t k_max_drain_bytes = std::size_t(256) << 20;
constexpr auto k_drain_timeout = std::chrono::seconds(10);

const char* const k_page_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
// report.html carries its stylesheet and script inline (report_html.cpp); sandboxed, it runs
// in an origin of its own and can reach nothing.
const char* const k_report_csp =
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'; sandbox allow-scripts";
const char* const k_file_csp =
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    "sandbox";

// Beast 1.74 speaks boost::string_view.
std::string_view sv(beast::string_view s) {
    return std::string_view(s.data(), s.size());
}

class session;

dashboard_reply json_reply(int status, std::string body) {
    dashboard_reply r;
    r.status = status;
    r.content_type = "application/json";
    r.kind = reply_kind::api;
    r.body = std::move(body) + "\n";
    return r;
}

// A path a ticket may open: a job's report, or a file of its run folder.
bool ticket_path(const std::string& path) {
    const std::string prefix = "/jobs/";
    if (path.rfind(prefix, 0) != 0) return false;
    const std::size_t slash = path.find('/', prefix.size());
    if (slash == std::string::npos || slash == prefix.size()) return false;
    const std::string rest = path.substr(slash);
    return rest == "/report" || (rest.rfind("/files/", 0) == 0 && rest.size() > 7);
}

// The session API: POST /api/session (Bearer: a new session), /api/logout (ends this one),
// /api/ticket?path=P (a ticket for one GET of P). Empty for every other request.
std::optional<dashboard_reply> session_api(dashboard_keys& keys, const std::string& method,
                                           const std::string& target,
                                           const request_credentials& auth) {
    const std::string path = target_path(target);
    if (path != "/api/session" && path != "/api/logout" && path != "/api/ticket")
        return std::nullopt;
    if (method != "POST") {
        dashboard_reply r = json_reply(405, "{\"error\": \"POST only\"}");
        r.headers.emplace_back("Allow", "POST");
        return r;
    }
    const auto now = std::chrono::steady_clock::now();
    if (path == "/api/session") {
        if (auth.source != token_source::header)
            return json_reply(400,
                              "{\"error\": \"a session is opened with the token itself "
                              "(Authorization: Bearer TOKEN)\"}");
        return json_reply(
            200, "{\"session\": \"" + keys.open_session(now) +
                     "\", \"idle_s\": " + std::to_string(static_cast<long>(keys.limits().idle_s)) +
                     ", \"max_s\": " + std::to_string(static_cast<long>(keys.limits().max_s)) +
                     "}");
    }
    if (auth.source != token_source::session)
        return json_reply(400,
                          "{\"error\": \"only a browser session (Authorization: Session) "
                          "has this\"}");
    if (path == "/api/logout") {
        keys.end_session(auth.session);
        return json_reply(200, "{\"signed_out\": true}");
    }
    const std::string document = target_path(query_value(target, "path"));
    if (!ticket_path(document))
        return json_reply(400,
                          "{\"error\": \"a ticket opens /jobs/ID/report or "
                          "/jobs/ID/files/NAME only\"}");
    return json_reply(200,
                      "{\"ticket\": \"" + keys.new_ticket(auth.session, document, now) + "\"}");
}

dashboard_reply shell_reply() {
    dashboard_reply r;
    r.body = shell_page();
    return r;
}

// Every open connection, oldest first, and whether it has authenticated. Over a cap, the
// oldest unauthenticated connection (of that address, or of all) is closed to make room;
// authenticated ones are never pushed out.
class connection_table {
  public:
    static constexpr std::size_t k_max_total = 64;  // a file descriptor each
    static constexpr std::size_t k_max_unproven_per_address = 8;
    /// Makes room and registers; 0 when every slot holds an authenticated connection.
    std::uint64_t admit(const std::string& address, std::weak_ptr<session> who);
    void trust(std::uint64_t id);
    void remove(std::uint64_t id) { m_open.erase(id); }
    std::size_t size() const { return m_open.size(); }

  private:
    struct entry {
        std::string address;
        std::weak_ptr<session> who;
        bool trusted = false;
    };
    bool evict_oldest_unproven(const std::string* address);
    std::map<std::uint64_t, entry> m_open;  // ids grow: oldest first
    std::uint64_t m_next = 1;
};

// What every connection shares: the routes' context, the keys and the worker threads.
struct server_state {
    std::shared_ptr<dashboard_context> context;
    std::unique_ptr<dashboard_keys> keys;
    unsigned short port = 0;
    dashboard_workers workers;
    bool stopped = false;
    connection_table connections;
};

template <class Body>
void set_headers(http::response<Body>& res, const dashboard_reply& r) {
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::server, "cuda-optimizer");
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    // same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with its
    // POSTs, and the same-origin check (refuse_cross_site) could not tell our forms from others'.
    res.set("Referrer-Policy", "same-origin");
    const bool report = r.kind == reply_kind::report, file = r.kind == reply_kind::file;
    res.set("Content-Security-Policy", report ? k_report_csp : file ? k_file_csp : k_page_csp);
    res.set(http::field::cache_control, r.kind == reply_kind::asset ? "no-cache" : "no-store");
    for (const auto& [name, value] : r.headers) res.insert(name, value);
}

class session : public std::enable_shared_from_this<session> {
  public:
    session(tcp::socket socket, std::shared_ptr<server_state> state)
        : m_stream(std::move(socket)), m_state(std::move(state)) {}
    ~session() { m_state->connections.remove(m_id); }
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    void start(std::uint64_t id) {
        m_id = id;
        read_header();
    }
    void close();

  private:
    void read_header();
    void on_header(beast::error_code ec);
    bool refuse_before_body(const http::request<http::string_body>& req);
    bool refuse_unauthenticated(const http::request<http::string_body>& req);
    bool refuse_cross_site(const http::request<http::string_body>& req);
    void refuse(int status, const std::string& line);
    void read_body();
    void on_request(beast::error_code ec);
    void run_later(std::function<std::function<dashboard_reply()>()> later, bool close);
    void send(dashboard_reply r, bool close = false);
    template <class Body>
    void write(std::shared_ptr<http::response<Body>> res, bool close);
    void refuse_upload_size();
    void drain();

    beast::tcp_stream m_stream;
    beast::flat_buffer m_buffer;
    std::shared_ptr<server_state> m_state;
    std::optional<http::request_parser<http::string_body>> m_parser;
    std::uint64_t m_id = 0;      // in m_state->connections
    bool m_trusted = false;      // a request on this connection showed a valid credential
    request_credentials m_auth;  // the current request's
    bool m_drain = false;        // after the reply, read and drop the rest of the request
    std::size_t m_drained = 0;
    std::array<char, 64 * 1024> m_sink;
};

void session::read_header() {
    m_parser.emplace();
    m_parser->header_limit(k_max_header_bytes);
    // Judged once the token is (refuse_before_body); Beast 1.74 would judge it first.
    m_parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    m_stream.expires_after(m_trusted ? k_idle_timeout : k_preauth_timeout);
    http::async_read_header(
        m_stream, m_buffer, *m_parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void session::on_header(beast::error_code ec) {
    if (ec) return close();  // the peer went away, timed out or sent no HTTP
    if (refuse_before_body(m_parser->get())) return;
    m_parser->body_limit(m_state->context->settings.max_upload_bytes);  // chunked bodies
    if (beast::iequals(m_parser->get()[http::field::expect], "100-continue")) {
        auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
        http::async_write(m_stream, *cont,
                          [self = shared_from_this(), cont](beast::error_code e, std::size_t) {
                              if (e) return self->close();
                              self->read_body();
                          });
        return;
    }
    read_body();
}

// The credentials, the origin of a state-changing request, and a body's declared size are
// judged on the headers alone.
bool session::refuse_before_body(const http::request<http::string_body>& req) {
    const dashboard_settings& settings = m_state->context->settings;
    if (refuse_unauthenticated(req) || refuse_cross_site(req)) return true;
    if (m_parser->content_length().value_or(0) > settings.max_upload_bytes) {
        refuse_upload_size();
        return true;
    }
    return false;
}

bool session::refuse_unauthenticated(const http::request<http::string_body>& req) {
    const std::string_view target = sv(req.target());
    if (token_in_query(target)) {
        // Not even checked: an address is kept in history and logs, so the token is spent.
        refuse(400,
               "the token does not go in the address's query: open the dashboard and sign in "
               "with it, or put it after '#' (/#token=...), which the browser never sends; if "
               "this token was shared, make a new one (delete the token file and restart serve)");
        return true;
    }
    const std::string_view authorization = sv(req[http::field::authorization]);
    m_auth = find_credentials(authorization, target, sv(req.method_string()), *m_state->keys,
                              std::chrono::steady_clock::now());
    if (m_auth.source != token_source::none) {
        m_trusted = true;
        m_state->connections.trust(m_id);
        return false;
    }
    // Without any credential, a browser's GET gets what holds no data: the script and
    // stylesheet, or the page shell, whose script signs in or fetches the page with its session.
    // The connection closes after it, as after a 401.
    const std::string path = target_path(target);
    // Not for //host/...: the page's script would read that path as another origin's URL.
    if (req.method() == http::verb::get && authorization.empty() && path.rfind("/api/", 0) != 0 &&
        path.rfind("//", 0) != 0) {
        send(path.rfind("/static/", 0) == 0
                 ? route_request(m_state->context, "GET", std::string(target), "", "").now.value()
                 : shell_reply(),
             true);
        return true;
    }
    dashboard_reply r;
    r.status = 401;
    r.body = unauthorized_page();
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    // Closed, so that a client without the token cannot hold the connection open by sending
    // request after request (each would restart the header timer).
    send(std::move(r), true);
    return true;
}

// Every request of a browser session carries `Authorization: Session`, which a page of
// another origin cannot make the browser send (it is no CORS-safelisted header, and the
// dashboard grants no preflight). A state-changing one must still come from the dashboard's
// own origin, as a second lock.
bool session::refuse_cross_site(const http::request<http::string_body>& req) {
    const bool safe = req.method() == http::verb::get || req.method() == http::verb::head;
    if (safe || m_auth.source != token_source::session) return false;
    const std::string problem = cross_origin_problem(
        sv(req[http::field::origin]), sv(req["Sec-Fetch-Site"]), sv(req[http::field::host]));
    if (problem.empty()) return false;
    refuse(403, problem + ".");
    return true;
}

// 403 in one line of text, and the connection closed (as after a 401).
void session::refuse(int status, const std::string& line) {
    dashboard_reply r;
    r.status = status;
    r.content_type = "text/plain; charset=utf-8";
    r.kind = reply_kind::api;
    r.body = std::to_string(status) + ": " + line + "\n";
    send(std::move(r), true);
}

void session::refuse_upload_size() {
    m_drain = true;
    send(message_reply(413, "Upload too large",
                       "The limit is " +
                           std::to_string(m_state->context->settings.max_upload_bytes) +
                           " bytes per upload; nothing was kept."),
         true);
}

void session::read_body() {
    m_stream.expires_after(k_body_timeout);
    http::async_read(
        m_stream, m_buffer, *m_parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void session::on_request(beast::error_code ec) {
    if (ec == http::error::body_limit) return refuse_upload_size();
    if (ec) return close();
    http::request<http::string_body> req = m_parser->release();
    const std::string content_type(req[http::field::content_type]);
    if (auto reply = session_api(*m_state->keys, std::string(req.method_string()),
                                 std::string(req.target()), m_auth))
        return send(std::move(*reply), !req.keep_alive());
    routed r;
    try {  // nothing a request does may end the daemon (and with it every running job)
        r = route_request(m_state->context, std::string(req.method_string()),
                          std::string(req.target()), content_type, std::move(req.body()));
    } catch (const std::invalid_argument& e) {
        r.now = message_reply(404, "Not found", e.what());
    } catch (const std::exception& e) {
        r.now = message_reply(500, "Error", e.what());
    }
    if (r.now) return send(std::move(*r.now), !req.keep_alive());
    run_later(std::move(r.later), !req.keep_alive());
}

void session::run_later(std::function<std::function<dashboard_reply()>()> later, bool close) {
    if (m_state->stopped || m_state->workers.busy())
        return send(message_reply(503, "Busy", "Too many uploads are being checked; try again."),
                    close);
    m_state->workers.start([self = shared_from_this(), later = std::move(later), close]() {
        std::function<dashboard_reply()> finish;
        try {
            finish = later();
        } catch (const std::exception& e) {
            const std::string why = e.what();
            finish = [why]() { return message_reply(500, "Internal error", why); };
        }
        asio::post(self->m_stream.get_executor(),
                   [self, finish = std::move(finish), close]() { self->send(finish(), close); });
    });
}

void session::send(dashboard_reply r, bool close) {
    if (!r.file.empty()) {
        auto res = std::make_shared<http::response<http::file_body>>(
            static_cast<http::status>(r.status), 11);
        beast::error_code ec;
        res->body().open(r.file.c_str(), beast::file_mode::scan, ec);
        if (!ec) {
            set_headers(*res, r);
            return write(std::move(res), close);
        }
        r = message_reply(404, "Not found", "The file could not be opened.");
    }
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), 11);
    set_headers(*res, r);
    res->body() = std::move(r.body);
    write(std::move(res), close);
}

template <class Body>
void session::write(std::shared_ptr<http::response<Body>> res, bool close) {
    res->keep_alive(!close);
    res->prepare_payload();
    m_stream.expires_after(k_body_timeout);
    http::async_write(m_stream, *res,
                      [self = shared_from_this(), res, close](beast::error_code ec, std::size_t) {
                          if (!ec && close && self->m_drain) return self->drain();
                          if (ec || close) return self->close();
                          self->read_header();
                      });
}

void session::drain() {
    if (m_drained == 0) {
        beast::error_code ec;
        m_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
        m_stream.expires_after(k_drain_timeout);
    }
    m_stream.async_read_some(asio::buffer(m_sink),
                             [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                                 self->m_drained += n + 1;
                                 if (ec || self->m_drained > k_max_drain_bytes)
                                     return self->close();
                                 self->drain();
                             });
}

std::uint64_t connection_table::admit(const std::string& address, std::weak_ptr<session> who) {
    std::size_t unproven = 0;
    for (const auto& [id, e] : m_open) unproven += !e.trusted && e.address == address;
    if (unproven >= k_max_unproven_per_address) evict_oldest_unproven(&address);
    if (m_open.size() >= k_max_total && !evict_oldest_unproven(nullptr)) return 0;
    const std::uint64_t id = m_next++;
    m_open[id] = entry{address, std::move(who), false};
    return id;
}

void connection_table::trust(std::uint64_t id) {
    if (const auto it = m_open.find(id); it != m_open.end()) it->second.trusted = true;
}

bool connection_table::evict_oldest_unproven(const std::string* address) {
    for (auto it = m_open.begin(); it != m_open.end(); ++it) {
        if (it->second.trusted || (address && it->second.address != *address)) continue;
        const std::shared_ptr<session> victim = it->second.who.lock();
        m_open.erase(it);
        if (victim) victim->close();
        return true;
    }
    return false;
}

void session::close() {
    beast::error_code ec;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    m_stream.close();
}

// Accepts connections for as long as its acceptor is open.
class listener : public std::enable_shared_from_this<listener> {
  public:
    listener(asio::io_context& io, const dashboard_settings& settings,
             std::shared_ptr<server_state> state)
        : m_acceptor(io), m_state(std::move(state)) {
        const std::string where = settings.address + ":" + std::to_string(settings.port);
        try {
            const std::string host =
                settings.address == "localhost" ? "127.0.0.1" : settings.address;
            const tcp::endpoint endpoint(asio::ip::make_address(host), settings.port);
            m_acceptor.open(endpoint.protocol());
            m_acceptor.set_option(asio::socket_base::reuse_address(true));
            m_acceptor.bind(endpoint);
            m_acceptor.listen(asio::socket_base::max_listen_connections);
        } catch (const std::exception& e) {
            throw std::runtime_error("the dashboard cannot listen on " + where + ": " + e.what());
        }
    }
    void accept() {
        m_acceptor.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket s) {
            if (!self->m_acceptor.is_open()) return;
            if (!ec) self->admit(std::move(s));
            // After an error (no descriptors left) wait a little rather than spin on an accept
            // that fails at once.
            if (!ec) return self->accept();
            self->m_retry.expires_after(std::chrono::milliseconds(100));
            self->m_retry.async_wait([self](beast::error_code) {
                if (self->m_acceptor.is_open()) self->accept();
            });
        });
    }
    unsigned short port() const { return m_acceptor.local_endpoint().port(); }
    // Over the cap (every slot authenticated) the new socket closes here.
    void admit(tcp::socket s) {
        beast::error_code ec;
        const auto peer = s.remote_endpoint(ec);
        if (ec) return;
        auto who = std::make_shared<session>(std::move(s), m_state);
        const std::uint64_t id = m_state->connections.admit(peer.address().to_string(), who);
        if (id != 0) who->start(id);
    }
    void close() {
        beast::error_code ec;
        m_acceptor.close(ec);
    }

  private:
    tcp::acceptor m_acceptor;
    asio::steady_timer m_retry{m_acceptor.get_executor()};
    std::shared_ptr<server_state> m_state;
};

}  // namespace

struct http_dashboard::impl {
    std::shared_ptr<server_state> state;
    std::shared_ptr<listener> accepting;
    unsigned short port = 0;
};

http_dashboard::http_dashboard(asio::io_context& io, const spool& s,
                               const dashboard_settings& settings, std::filesystem::path optimizer,
                               std::filesystem::path harness)
    : m_impl(std::make_unique<impl>()) {
    if (settings.token.empty()) throw std::runtime_error("the dashboard needs a token");
    m_impl->state = std::make_shared<server_state>();
    m_impl->state->context = std::make_shared<dashboard_context>(
        dashboard_context{s, settings, std::move(optimizer), std::move(harness), {}});
    m_impl->state->keys = std::make_unique<dashboard_keys>(
        settings.token, session_limits{settings.session_idle_s, settings.session_max_s});
    m_impl->accepting = std::make_shared<listener>(io, settings, m_impl->state);
    m_impl->port = m_impl->state->port = m_impl->accepting->port();
    m_impl->accepting->accept();
}

http_dashboard::~http_dashboard() {
    stop();
}

unsigned short http_dashboard::port() const {
    return m_impl->port;
}

void http_dashboard::stop() {
    m_impl->accepting->close();
    m_impl->state->stopped = true;
    m_impl->state->workers.join();  // an intake's check may take seconds to end
}

}  // namespace cuopt
