// The dashboard's HTTP: Boost.Beast sessions on the daemon's io_context. Each request's headers
// are read first and the token checked before any body is read; a body over the upload limit
// is refused with 413 unread; slow work (intake, commit) runs on a few threads whose results
// come back to the event loop by boost::asio::post.
#include "orchestrator/service/http_dashboard.hpp"

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <limits>
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

constexpr auto k_header_timeout = std::chrono::seconds(30);
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

// What every connection shares: the routes' context and the worker threads.
struct server_state {
    std::shared_ptr<dashboard_context> context;
    dashboard_workers workers;
    bool stopped = false;
    std::size_t sessions = 0;  // open connections (capped: a file descriptor each)
};

constexpr std::size_t k_max_sessions = 64;

template <class Body>
void set_headers(http::response<Body>& res, const dashboard_reply& r) {
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::server, "cuda-optimizer");
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "no-referrer");
    const bool report = r.kind == reply_kind::report, file = r.kind == reply_kind::file;
    res.set("Content-Security-Policy", report ? k_report_csp : file ? k_file_csp : k_page_csp);
    res.set(http::field::cache_control, r.kind == reply_kind::asset ? "no-cache" : "no-store");
    for (const auto& [name, value] : r.headers) res.insert(name, value);
}

class session : public std::enable_shared_from_this<session> {
  public:
    session(tcp::socket socket, std::shared_ptr<server_state> state)
        : m_stream(std::move(socket)), m_state(std::move(state)) {
        ++m_state->sessions;
    }
    ~session() { --m_state->sessions; }
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    void start() { read_header(); }

  private:
    void read_header();
    void on_header(beast::error_code ec);
    bool refuse_before_body(const http::request<http::string_body>& req);
    void read_body();
    void on_request(beast::error_code ec);
    void run_later(std::function<std::function<dashboard_reply()>()> later, bool close);
    void send(dashboard_reply r, bool close = false);
    template <class Body>
    void write(std::shared_ptr<http::response<Body>> res, bool close);
    void refuse_upload_size();
    void drain();
    void close();

    beast::tcp_stream m_stream;
    beast::flat_buffer m_buffer;
    std::shared_ptr<server_state> m_state;
    std::optional<http::request_parser<http::string_body>> m_parser;
    std::string m_set_cookie;  // the token's cookie, for the reply to a ?token= request
    bool m_drain = false;      // after the reply, read and drop the rest of the request
    std::size_t m_drained = 0;
    std::array<char, 64 * 1024> m_sink;
};

void session::read_header() {
    m_parser.emplace();
    m_parser->header_limit(k_max_header_bytes);
    // Judged once the token is (refuse_before_body); Beast 1.74 would judge it first.
    m_parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    m_stream.expires_after(k_header_timeout);
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

// The token, and a body's declared size, are judged on the headers alone.
bool session::refuse_before_body(const http::request<http::string_body>& req) {
    const dashboard_settings& settings = m_state->context->settings;
    const bool has_body = m_parser->content_length().value_or(0) > 0 || m_parser->chunked();
    const token_source source =
        find_token(sv(req[http::field::authorization]), sv(req[http::field::cookie]),
                   sv(req.target()), settings.token);
    if (source == token_source::none) {
        dashboard_reply r;
        r.status = 401;
        r.body = unauthorized_page();
        r.headers.emplace_back("WWW-Authenticate", "Bearer");
        send(std::move(r), has_body);
        return true;
    }
    if (source == token_source::query) {
        m_set_cookie = token_cookie(settings.token);
        if (req.method() == http::verb::get) {  // the same address without the token in it
            dashboard_reply r;
            r.status = 302;
            r.headers.emplace_back("Location", target_without_token(sv(req.target())));
            send(std::move(r), has_body);
            return true;
        }
    }
    if (m_parser->content_length().value_or(0) > settings.max_upload_bytes) {
        refuse_upload_size();
        return true;
    }
    return false;
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
    routed r;
    try {  // nothing a request does may end the daemon (and with it every running job)
        r = route_request(m_state->context, std::string(req.method_string()),
                          std::string(req.target()), std::string(req[http::field::content_type]),
                          std::move(req.body()));
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
    if (!m_set_cookie.empty()) r.headers.emplace_back("Set-Cookie", m_set_cookie);
    m_set_cookie.clear();
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
            if (!ec && self->m_state->sessions < k_max_sessions)
                std::make_shared<session>(std::move(s), self->m_state)->start();
            // (over the cap the socket closes here.) After an error (no descriptors left) wait
            // a little rather than spin on an accept that fails at once.
            if (!ec) return self->accept();
            self->m_retry.expires_after(std::chrono::milliseconds(100));
            self->m_retry.async_wait([self](beast::error_code) {
                if (self->m_acceptor.is_open()) self->accept();
            });
        });
    }
    unsigned short port() const { return m_acceptor.local_endpoint().port(); }
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
    m_impl->accepting = std::make_shared<listener>(io, settings, m_impl->state);
    m_impl->port = m_impl->accepting->port();
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
