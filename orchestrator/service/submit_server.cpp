#include "orchestrator/service/submit_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/service/dashboard_workers.hpp"
#include "orchestrator/service/submit_requests.hpp"

namespace cuopt {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using local = asio::local::stream_protocol;

// The listening socket, the connections and the workers. Shared with every pending handler,
// so that a reply arriving after the daemon began to stop finds it still alive.
struct submit_server::impl : std::enable_shared_from_this<submit_server::impl> {
    impl(asio::io_context& io, const spool& s, submit_settings settings)
        : io(io), jobs(s), settings(std::move(settings)), acceptor(io) {}

    asio::io_context& io;
    spool jobs;
    submit_settings settings;
    local::acceptor acceptor;
    dashboard_workers workers{2};
    dashboard_workers parsers{4};       // each request's JSON is parsed here, off the event loop
    std::map<unsigned, int> in_flight;  // submissions being checked, per uid (event loop only)
    // Request bytes held while they arrive and are parsed, per uid and in all (event loop only):
    // one user holds one request's worth, everyone four.
    std::map<unsigned, std::size_t> held_per_uid;
    std::size_t held_total = 0;
    // Open connections, per uid and in all: a user who opens many and sends nothing holds
    // descriptors for the read timeout at most, and only this many.
    // Past k_max_open, a user with none open still gets one (to k_max_open_hard in all), so a
    // few accounts that collude cannot lock everyone else out.
    static constexpr int k_max_open_per_uid = 8, k_max_open = 64, k_max_open_hard = 256;
    std::mutex open_mutex;  // the last owner of a connection may be a worker thread
    std::map<unsigned, int> open_per_uid;
    int open_total = 0;
    std::shared_ptr<local::socket> take_slot(local::socket sock, unsigned uid);

    void listen();
    void accept();
    void serve(local::socket accepted);
    std::size_t request_cap() const {  // base64 is 4/3 of the bytes, plus the other fields
        return settings.max_upload_bytes / 3 * 4 + (1u << 20);
    }
    void read_request(std::shared_ptr<local::socket> sock, const peer& p,
                      std::shared_ptr<asio::steady_timer> timer,
                      std::shared_ptr<std::string> request);
    void release(const peer& p, std::size_t bytes);
    void parse(std::shared_ptr<local::socket> sock, const peer& p,
               std::shared_ptr<std::string> request);
    void answer(std::shared_ptr<local::socket> sock, const peer& p,
                std::shared_ptr<rapidjson::Document> d, const std::string& parse_error);
    void submit(std::shared_ptr<local::socket> sock, const peer& p,
                std::shared_ptr<rapidjson::Document> request);
    void reply(std::shared_ptr<local::socket> sock, std::string text);
};

void submit_server::impl::listen() {
    const fs::path path = socket_path(jobs);
    ::unlink(path.c_str());  // one left by a daemon that died: we hold the spool's lock
    acceptor.open();
    acceptor.bind(local::endpoint(path.string()));
    // Anyone may connect; every peer is identified by the kernel and checked per request.
    ::chmod(path.c_str(), 0666);
    acceptor.listen();
    accept();
}

void submit_server::impl::accept() {
    acceptor.async_accept(
        [self = shared_from_this()](const boost::system::error_code& ec, local::socket sock) {
            if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
            if (!ec) self->serve(std::move(sock));
            self->accept();
        });
}

// One request: read within the timeout and the byte cap, then answered.
// The connection, counted against its uid until the last handler holding it lets it go; null
// (closed with one line) when that uid, or everyone, has too many open.
std::shared_ptr<local::socket> submit_server::impl::take_slot(local::socket sock, unsigned uid) {
    {
        std::lock_guard<std::mutex> lock(open_mutex);
        const int mine = open_per_uid[uid];
        if (mine < k_max_open_per_uid &&
            (open_total < k_max_open || (mine == 0 && open_total < k_max_open_hard))) {
            ++open_per_uid[uid];
            ++open_total;
            return std::shared_ptr<local::socket>(
                new local::socket(std::move(sock)),
                [self = shared_from_this(), uid](local::socket* s) {
                    delete s;
                    std::lock_guard<std::mutex> lock(self->open_mutex);
                    --self->open_per_uid[uid];
                    --self->open_total;
                });
        }
    }
    const std::string busy = refusal_reply(
        refusal("too many connections open to the daemon; try again", exit_code::io_error));
    (void)::send(sock.native_handle(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    return nullptr;
}

void submit_server::impl::serve(local::socket accepted) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(accepted.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return;
    const std::shared_ptr<local::socket> sock = take_slot(std::move(accepted), cred.uid);
    if (!sock) return;
    peer p{cred.uid, cred.gid, user_name(cred.uid),
           is_operator(cred.uid, cred.gid, settings.operators)};
    auto timer = std::make_shared<asio::steady_timer>(io);
    timer->expires_after(milliseconds_of(settings.read_timeout_s));
    timer->async_wait([sock](const boost::system::error_code& ec) {
        if (!ec) sock->close();  // a request not whole in time: no reply
    });
    read_request(sock, p, timer, std::make_shared<std::string>());
}

// The request, a chunk at a time to its newline, each byte counted against its uid's share and
// the daemon's before it is kept: a user who sends many large requests at once is told to wait,
// not held in memory.
void submit_server::impl::read_request(std::shared_ptr<local::socket> sock, const peer& p,
                                       std::shared_ptr<asio::steady_timer> timer,
                                       std::shared_ptr<std::string> request) {
    auto chunk = std::make_shared<std::array<char, 1 << 16>>();
    sock->async_read_some(
        asio::buffer(*chunk), [self = shared_from_this(), sock, p, timer, request, chunk](
                                  const boost::system::error_code& ec, std::size_t n) {
            if (ec) {  // closed, or the read timeout closed it: nothing to answer
                self->release(p, request->size());
                return;
            }
            const char* end = chunk->data() + n;
            const char* newline = std::find(static_cast<const char*>(chunk->data()), end, '\n');
            const std::size_t take = static_cast<std::size_t>(newline - chunk->data());
            const std::size_t cap = self->request_cap();
            std::optional<refusal> refused;
            if (request->size() + take > cap)
                refused = refusal("the request exceeds " + std::to_string(cap) +
                                  " bytes (serve --max-upload-mb)");
            else if (self->held_per_uid[p.uid] + take > cap || self->held_total + take > 4 * cap)
                refused = refusal(p.name +
                                      "'s other requests, or everyone's, fill what the daemon "
                                      "reads at once; try again when they are answered",
                                  exit_code::io_error);
            if (refused) {
                timer->cancel();
                self->release(p, request->size());
                request->clear();
                return self->reply(sock, refusal_reply(*refused));
            }
            self->held_per_uid[p.uid] += take;
            self->held_total += take;
            request->append(chunk->data(), take);
            if (newline == end) return self->read_request(sock, p, timer, request);
            timer->cancel();
            self->parse(sock, p, request);
        });
}

void submit_server::impl::release(const peer& p, std::size_t bytes) {
    held_per_uid[p.uid] -= std::min(held_per_uid[p.uid], bytes);
    held_total -= std::min(held_total, bytes);
    if (held_per_uid[p.uid] == 0) held_per_uid.erase(p.uid);
}

// The JSON parsed on a thread of its own (a large request takes a while), then answered on the
// event loop, which meanwhile serves everyone else.
void submit_server::impl::parse(std::shared_ptr<local::socket> sock, const peer& p,
                                std::shared_ptr<std::string> request) {
    if (parsers.busy()) {
        release(p, request->size());
        return reply(sock, refusal_reply(refusal("the daemon is reading other requests; try again",
                                                 exit_code::io_error)));
    }
    parsers.start([self = shared_from_this(), sock, p, request]() {
        auto d = std::make_shared<rapidjson::Document>();
        std::string why = try_parse_json(*d, *request);
        const std::size_t bytes = request->size();
        std::string().swap(*request);
        asio::post(self->io, [self, sock, p, d, why = std::move(why), bytes]() {
            self->release(p, bytes);
            self->answer(sock, p, d, why);
        });
    });
}

void submit_server::impl::answer(std::shared_ptr<local::socket> sock, const peer& p,
                                 std::shared_ptr<rapidjson::Document> d,
                                 const std::string& parse_error) {
    try {
        if (!parse_error.empty()) throw refusal("the request: " + parse_error);
        if (!d->IsObject()) throw refusal("the request is not a JSON object");
        std::string op, job;
        try {
            const json_field fields(*d, "");
            op = fields.optional_text("op").value_or("");
            if (op == "status" || op == "cancel") job = fields.optional_text("job").value_or("");
        } catch (const json_error& e) {
            throw refusal(e.what());
        }
        if (op == "submit") return submit(sock, p, d);
        if (op == "status") return reply(sock, answer_status(jobs, p, job));
        if (op == "cancel") return reply(sock, answer_cancel(jobs, p, job));
        throw refusal("op " + quote_value(op, 40) + ": expected submit, status or cancel");
    } catch (const refusal& r) {
        reply(sock, refusal_reply(r));
    } catch (const std::exception& e) {
        reply(sock, refusal_reply(refusal(e.what(), exit_code::io_error)));
    }
}

// Counted against the uid's limit from here (queued, running, or being checked), then checked
// on a worker; the reply goes out from the event loop.
void submit_server::impl::submit(std::shared_ptr<local::socket> sock, const peer& p,
                                 std::shared_ptr<rapidjson::Document> request) {
    const int active = active_jobs_of(jobs, static_cast<int>(p.uid)) + in_flight[p.uid];
    if (active >= settings.max_jobs_per_user)
        throw refusal(
            p.name + " has " + std::to_string(active) + " jobs queued or running; the limit is " +
            std::to_string(settings.max_jobs_per_user) + " per user (serve --max-jobs-per-user)");
    if (in_flight[p.uid] > 0)  // one check at a time per user: nobody holds every worker
        throw refusal(p.name +
                          " has a submission being checked already; submit again once it is "
                          "answered",
                      exit_code::io_error);
    if (workers.busy())
        throw refusal("the daemon is checking other jobs; submit again shortly",
                      exit_code::io_error);
    ++in_flight[p.uid];
    workers.start([self = shared_from_this(), sock, p, request]() {
        std::string text;
        try {
            text = submit_uploaded(self->jobs, self->settings, p, *request);
        } catch (const refusal& r) {
            text = refusal_reply(r);
        } catch (const std::exception& e) {
            text = refusal_reply(refusal(std::string("submit: ") + e.what(), exit_code::io_error));
        }
        asio::post(self->io, [self, sock, p, text = std::move(text)]() mutable {
            --self->in_flight[p.uid];
            self->reply(sock, std::move(text));
        });
    });
}

void submit_server::impl::reply(std::shared_ptr<local::socket> sock, std::string text) {
    auto body = std::make_shared<std::string>(std::move(text));
    // A client that never reads its reply would hold the connection (and the reply) forever.
    auto deadline = std::make_shared<asio::steady_timer>(io);
    deadline->expires_after(milliseconds_of(settings.read_timeout_s));
    deadline->async_wait([sock](const boost::system::error_code& ec) {
        boost::system::error_code ignored;
        if (!ec) sock->close(ignored);
    });
    asio::async_write(*sock, asio::buffer(*body),
                      [sock, body, deadline](const boost::system::error_code&, std::size_t) {
                          deadline->cancel();
                          boost::system::error_code ignored;
                          sock->shutdown(local::socket::shutdown_both, ignored);
                          sock->close(ignored);
                      });
}

submit_server::submit_server(asio::io_context& io, const spool& s, submit_settings settings)
    : m_impl(std::make_shared<impl>(io, s, std::move(settings))) {
    if (const std::size_t n = empty_staging(s); n > 0)
        std::cerr << "serve: removed " << n << " staged upload(s) left in " << s.staging_dir()
                  << "\n";
    try {
        m_impl->listen();
    } catch (const std::exception& e) {
        std::cerr << "serve: " << socket_path(s).string() << ": no submission socket (" << e.what()
                  << "); only the spool's owner can submit\n";
    }
}

submit_server::~submit_server() {
    boost::system::error_code ignored;
    m_impl->acceptor.close(ignored);
    ::unlink(socket_path(m_impl->jobs).c_str());
    m_impl->parsers.join();
    m_impl->workers.join();  // a check under way ends before the spool goes
}

fs::path submit_server::socket_path(const spool& s) {
    return s.root() / "submit.sock";
}

}  // namespace cuopt
