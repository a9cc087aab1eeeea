// The dashboard's listener: Boost.Beast connections (dashboard_connection) accepted on the
// daemon's io_context, each checked before any body is read (see dashboard_connection.cpp).
//
// Lock-out: a connection that has not yet shown a credential has 5 s to send its headers, and
// a 401 or 403 closes it. Connections are capped (connection_table); when full, the oldest
// connection that never authenticated makes room, so idle or failing sockets from a local
// user (all of loopback is one address) cannot keep the operator out.
#include "orchestrator/service/http_dashboard.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <stdexcept>

#include "orchestrator/service/dashboard_connection.hpp"

namespace cuopt {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

std::uint64_t connection_table::admit(const std::string& address,
                                      std::weak_ptr<dashboard_connection> who) {
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
        const std::shared_ptr<dashboard_connection> victim = it->second.who.lock();
        m_open.erase(it);
        if (victim) victim->close();
        return true;
    }
    return false;
}

namespace {

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
        auto who = std::make_shared<dashboard_connection>(std::move(s), m_state);
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
