// One dashboard connection's requests: the headers judged (credentials, origin, declared size),
// the body read, the session API or a route answering, slow work handed to the workers, and
// the reply written with its security headers.
#include "orchestrator/service/dashboard_connection.hpp"

#include <boost/asio/post.hpp>
#include <chrono>
#include <limits>
#include <stdexcept>

#include "orchestrator/service/dashboard_pages.hpp"
#include "orchestrator/service/dashboard_session_api.hpp"

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

dashboard_reply shell_reply() {
    dashboard_reply r;
    r.body = shell_page();
    return r;
}

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

}  // namespace

void dashboard_connection::read_header() {
    m_parser.emplace();
    m_parser->header_limit(k_max_header_bytes);
    // Judged once the token is (refuse_before_body); Beast 1.74 would judge it first.
    m_parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    m_stream.expires_after(m_trusted ? k_idle_timeout : k_preauth_timeout);
    http::async_read_header(
        m_stream, m_buffer, *m_parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void dashboard_connection::on_header(beast::error_code ec) {
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
bool dashboard_connection::refuse_before_body(const http::request<http::string_body>& req) {
    const dashboard_settings& settings = m_state->context->settings;
    if (refuse_unauthenticated(req) || refuse_cross_site(req)) return true;
    if (m_parser->content_length().value_or(0) > settings.max_upload_bytes) {
        refuse_upload_size();
        return true;
    }
    return false;
}

bool dashboard_connection::refuse_unauthenticated(const http::request<http::string_body>& req) {
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
bool dashboard_connection::refuse_cross_site(const http::request<http::string_body>& req) {
    const bool safe = req.method() == http::verb::get || req.method() == http::verb::head;
    if (safe || m_auth.source != token_source::session) return false;
    const std::string problem = cross_origin_problem(
        sv(req[http::field::origin]), sv(req["Sec-Fetch-Site"]), sv(req[http::field::host]));
    if (problem.empty()) return false;
    refuse(403, problem + ".");
    return true;
}

// 403 in one line of text, and the connection closed (as after a 401).
void dashboard_connection::refuse(int status, const std::string& line) {
    dashboard_reply r;
    r.status = status;
    r.content_type = "text/plain; charset=utf-8";
    r.kind = reply_kind::api;
    r.body = std::to_string(status) + ": " + line + "\n";
    send(std::move(r), true);
}

void dashboard_connection::refuse_upload_size() {
    m_drain = true;
    send(message_reply(413, "Upload too large",
                       "The limit is " +
                           std::to_string(m_state->context->settings.max_upload_bytes) +
                           " bytes per upload; nothing was kept."),
         true);
}

void dashboard_connection::read_body() {
    m_stream.expires_after(k_body_timeout);
    http::async_read(
        m_stream, m_buffer, *m_parser,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void dashboard_connection::on_request(beast::error_code ec) {
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

void dashboard_connection::run_later(std::function<std::function<dashboard_reply()>()> later,
                                     bool close) {
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

void dashboard_connection::send(dashboard_reply r, bool close) {
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
void dashboard_connection::write(std::shared_ptr<http::response<Body>> res, bool close) {
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

void dashboard_connection::drain() {
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

void dashboard_connection::close() {
    beast::error_code ec;
    m_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    m_stream.close();
}

}  // namespace cuopt
