#include "loopback_http_server.hpp"

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cctype>

namespace cuopt::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct loopback_http_server::impl {
    asio::io_context io;
    tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
};

loopback_http_server::loopback_http_server(std::vector<scripted_reply> script)
    : m_script(std::move(script)), m_impl(new impl) {
    m_port = m_impl->acceptor.local_endpoint().port();
    m_thread = std::thread([this] { serve(); });
}

loopback_http_server::~loopback_http_server() {
    m_stop = true;
    {
        // Unblocks accept(); the socket must be gone before its io_context is.
        boost::system::error_code ec;
        tcp::socket wake(m_impl->io);
        wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), m_port), ec);
        m_thread.join();
    }
    delete m_impl;
}

std::string loopback_http_server::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + path;
}

std::vector<recorded_request> loopback_http_server::requests() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_requests;
}

void loopback_http_server::serve() {
    std::size_t next = 0;
    while (!m_stop) {
        tcp::socket socket(m_impl->io);
        boost::system::error_code ec;
        m_impl->acceptor.accept(socket, ec);
        if (ec || m_stop) break;
        // One request per connection is all the clients under test need; keep-alive is refused.
        beast::flat_buffer buffer;
        http::request<http::string_body> req;
        http::read(socket, buffer, req, ec);
        if (ec) continue;
        recorded_request rec;
        rec.target = std::string(req.target());
        rec.body = req.body();
        for (const auto& field : req) {
            std::string name(field.name_string());
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return std::tolower(c); });
            rec.headers[name] = std::string(field.value());
        }
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_requests.push_back(rec);
        }
        const scripted_reply& reply = m_script.at(std::min(next++, m_script.size() - 1));
        for (auto waited = std::chrono::milliseconds(0); waited < reply.delay && !m_stop;
             waited += std::chrono::milliseconds(10))
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (m_stop) break;
        std::string head =
            "HTTP/1.1 " + std::to_string(reply.status) + " Scripted\r\nConnection: close\r\n";
        for (const auto& [k, v] : reply.headers) head += k + ": " + v + "\r\n";
        const std::size_t announced = reply.truncate ? reply.body.size() + 100 : reply.body.size();
        head += "Content-Length: " + std::to_string(announced) + "\r\n\r\n";
        asio::write(socket, asio::buffer(head + reply.body), ec);
        socket.shutdown(tcp::socket::shutdown_both, ec);
    }
}

}  // namespace cuopt::test
