#pragma once
/// One connection to the dashboard, a Boost.Beast session on the daemon's event loop: its
/// headers read and its credentials judged before any body is read, then the request routed
/// and answered. server_state is what every connection shares, connection_table among it.

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "orchestrator/service/dashboard_auth.hpp"
#include "orchestrator/service/dashboard_routes.hpp"
#include "orchestrator/service/dashboard_workers.hpp"

namespace cuopt {

class dashboard_connection;

/// Every open connection, oldest first, and whether it has authenticated. Over a cap, the
/// oldest unauthenticated connection (of that address, or of all) is closed to make room;
/// authenticated ones are never pushed out.
class connection_table {
  public:
    static constexpr std::size_t k_max_total = 64;  // a file descriptor each
    static constexpr std::size_t k_max_unproven_per_address = 8;
    /// Makes room and registers; 0 when every slot holds an authenticated connection.
    std::uint64_t admit(const std::string& address, std::weak_ptr<dashboard_connection> who);
    void trust(std::uint64_t id);
    void remove(std::uint64_t id) { m_open.erase(id); }
    std::size_t size() const { return m_open.size(); }

  private:
    struct entry {
        std::string address;
        std::weak_ptr<dashboard_connection> who;
        bool trusted = false;
    };
    bool evict_oldest_unproven(const std::string* address);
    std::map<std::uint64_t, entry> m_open;  // ids grow: oldest first
    std::uint64_t m_next = 1;
};

/// What every connection shares: the routes' context, the keys and the worker threads.
struct server_state {
    std::shared_ptr<dashboard_context> context;
    std::unique_ptr<dashboard_keys> keys;
    unsigned short port = 0;
    dashboard_workers workers;
    bool stopped = false;
    connection_table connections;
};

/// One accepted socket, request after request until it closes (see dashboard_connection.cpp).
class dashboard_connection : public std::enable_shared_from_this<dashboard_connection> {
  public:
    dashboard_connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<server_state> state)
        : m_stream(std::move(socket)), m_state(std::move(state)) {}
    ~dashboard_connection() { m_state->connections.remove(m_id); }
    dashboard_connection(const dashboard_connection&) = delete;
    dashboard_connection& operator=(const dashboard_connection&) = delete;
    void start(std::uint64_t id) {
        m_id = id;
        read_header();
    }
    void close();

  private:
    using http_request = boost::beast::http::request<boost::beast::http::string_body>;
    void read_header();
    void on_header(boost::beast::error_code ec);
    bool refuse_before_body(const http_request& req);
    bool refuse_unauthenticated(const http_request& req);
    bool refuse_cross_site(const http_request& req);
    void refuse(int status, const std::string& line);
    void read_body();
    void on_request(boost::beast::error_code ec);
    void run_later(std::function<std::function<dashboard_reply()>()> later, bool close);
    void send(dashboard_reply r, bool close = false);
    template <class Body>
    void write(std::shared_ptr<boost::beast::http::response<Body>> res, bool close);
    void refuse_upload_size();
    void drain();

    boost::beast::tcp_stream m_stream;
    boost::beast::flat_buffer m_buffer;
    std::shared_ptr<server_state> m_state;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> m_parser;
    std::uint64_t m_id = 0;      // in m_state->connections
    bool m_trusted = false;      // a request on this connection showed a valid credential
    request_credentials m_auth;  // the current request's
    bool m_drain = false;        // after the reply, read and drop the rest of the request
    std::size_t m_drained = 0;
    std::array<char, 64 * 1024> m_sink;
};

}  // namespace cuopt
