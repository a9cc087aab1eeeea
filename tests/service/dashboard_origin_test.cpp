// The dashboard's boundary against other local users and other pages, through the real server
// on loopback: a browser's credential is a header no other page can make it send, never a
// cookie; a state-changing request of a session must still come from the dashboard's own
// Origin; a 401 or 403 closes the connection; idle or failing connections cannot keep the owner
// out.
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "dashboard_fixture.hpp"
#include "orchestrator/service/dashboard_auth.hpp"

using namespace cuopt;
using namespace cuopt::test;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// A connected socket to the dashboard that has sent `request` (maybe nothing).
std::unique_ptr<tcp::socket> open_socket(asio::io_context& io, unsigned short port,
                                         const std::string& request = "") {
    auto s = std::make_unique<tcp::socket>(io);
    s->connect({asio::ip::make_address("127.0.0.1"), port});
    if (!request.empty()) asio::write(*s, asio::buffer(request));
    return s;
}

// Everything the peer sends until it closes (or `limit` passes); closed says which.
std::pair<std::string, bool> read_until_closed(tcp::socket& s, std::chrono::seconds limit) {
    std::string got;
    const auto until = std::chrono::steady_clock::now() + limit;
    s.non_blocking(true);
    char buf[4096];
    while (std::chrono::steady_clock::now() < until) {
        boost::system::error_code ec;
        const std::size_t n = s.read_some(asio::buffer(buf), ec);
        if (ec == asio::error::would_block) {
            std::this_thread::sleep_for(10ms);
            continue;
        }
        got.append(buf, n);
        if (ec) return {got, true};
    }
    return {got, false};
}

}  // namespace

TEST_CASE("a cross-origin POST with a valid session gets 403 in one line and cancels nothing",
          "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    const std::string session = sign_in(d.port());
    for (const std::string& origin :
         {std::string("http://127.0.0.1:1"), std::string("null"),
          origin_of(d.port()) + ".evil.example", "https://127.0.0.1:" + std::to_string(d.port())}) {
        INFO(origin);
        const http_reply r = d.post("/jobs/" + id + "/cancel", browser_post(session, origin));
        CHECK(r.status == 403);
        CHECK(r.header("connection") == "close");
        CHECK_THAT(r.body, Catch::StartsWith("403: a request from " + origin));
        CHECK(std::count(r.body.begin(), r.body.end(), '\n') == 1);
    }
    header_list cross_site = browser_post(session, "");
    cross_site.emplace_back("Sec-Fetch-Site", "same-site");  // another port of 127.0.0.1
    CHECK(d.post("/jobs/" + id + "/cancel", cross_site).status == 403);
    CHECK(d.post("/jobs/" + id + "/cancel", browser_post(session, "")).status ==
          403);  // neither Origin nor Sec-Fetch-Site
    CHECK_FALSE(d.jobs().cancel_requested(id));
    CHECK(d.jobs().read_status(id).state == job_state::running);
}

TEST_CASE("what a forged form sends (cookies, its own origin's headers) gets 401", "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    const std::string session = sign_in(d.port());
    for (const header_list& h : std::vector<header_list>{
             {{"Cookie", "cuopt_session_" + std::to_string(d.port()) + "=" + session},
              {"Origin", origin_of(d.port())},
              {"Content-Type", "application/x-www-form-urlencoded"}},
             {{"Cookie", "cuopt_token=" + k_dashboard_token}, {"Sec-Fetch-Site", "same-origin"}},
             {{"X-Session", session}, {"Origin", origin_of(d.port())}}}) {
        const http_reply r = d.post("/jobs/" + id + "/cancel", h, "x=1");
        CHECK(r.status == 401);
        CHECK(r.header("connection") == "close");
    }
    form_body upload = matmul_upload();
    const http_reply r =
        d.post("/submit",
               {{"Cookie", "cuopt_session_" + std::to_string(d.port()) + "=" + session},
                upload.headers()[1]},
               upload.close());
    CHECK(r.status == 401);
    CHECK(staged_files(d.jobs()).empty());
    CHECK_FALSE(d.jobs().cancel_requested(id));
}

TEST_CASE("a same-origin POST with the session, by Origin or Sec-Fetch-Site, works",
          "[integration][http]") {
    dashboard_under_test d;
    const std::string a = place_job(d.jobs(), job_state::running);
    const std::string b = place_job(d.jobs(), job_state::queued);
    const std::string session = sign_in(d.port());
    const http_reply r =
        d.post("/jobs/" + a + "/cancel", browser_post(session, origin_of(d.port())));
    CHECK(r.status == 303);
    CHECK(d.jobs().cancel_requested(a));
    header_list by_fetch_site = session_header(session);
    by_fetch_site.emplace_back("Sec-Fetch-Site", "same-origin");
    CHECK(d.post("/jobs/" + b + "/cancel", by_fetch_site).status == 303);
    CHECK(d.jobs().cancel_requested(b));
    form_body upload = matmul_upload();
    header_list multipart = session_header(session);
    multipart.emplace_back("Origin", origin_of(d.port()));
    multipart.push_back(upload.headers()[1]);
    const http_reply checked = d.post("/submit", multipart, upload.close());
    INFO(checked.body);
    CHECK(checked.status == 200);
    CHECK_THAT(checked.body, Catch::Contains("Queue this job"));
}

TEST_CASE("a Bearer client changes state without an Origin", "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    CHECK(d.post("/jobs/" + id + "/cancel").status == 303);
    CHECK(d.jobs().cancel_requested(id));
}

TEST_CASE(
    "a 401, or the shell, closes the connection: a client without the token cannot hold "
    "it open",
    "[http]") {
    dashboard_under_test d;
    for (const auto& [target, status] : std::vector<std::pair<std::string, std::string>>{
             {"/api/jobs", "401"}, {"/", "200"}, {"/static/dashboard.css", "200"}}) {
        INFO(target);
        asio::io_context io;
        const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        auto s = open_socket(io, d.port(), request + request + request);
        const auto [got, closed] = read_until_closed(*s, 5s);
        CHECK(closed);
        CHECK_THAT(got,
                   Catch::StartsWith("HTTP/1.1 " + status) && Catch::Contains("Connection: close"));
        CHECK(got.find("HTTP/1.1 ", 5) == std::string::npos);  // one answer, then closed
    }
}

TEST_CASE("64 idle sockets and clients that keep failing the token do not keep the owner out",
          "[http]") {
    dashboard_under_test d;
    asio::io_context io;
    std::vector<std::unique_ptr<tcp::socket>> idle;
    for (int i = 0; i < 64; ++i) idle.push_back(open_socket(io, d.port()));
    std::atomic<bool> stop{false};
    std::vector<std::thread> noisy;
    for (int t = 0; t < 2; ++t)
        noisy.emplace_back([&] {
            asio::io_context own;
            while (!stop) {
                try {
                    auto s = open_socket(own, d.port(),
                                         "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                         "wrong\r\n\r\n");
                    read_until_closed(*s, 1s);
                } catch (const std::exception&) {
                }
            }
        });
    std::this_thread::sleep_for(300ms);
    for (int i = 0; i < 5; ++i) {
        const auto start = std::chrono::steady_clock::now();
        CHECK(d.get("/api/jobs").status == 200);
        CHECK(std::chrono::steady_clock::now() - start < 3s);
    }
    stop = true;
    for (std::thread& t : noisy) t.join();
    // And an idle socket that never authenticated is closed within the 5 s header timeout.
    auto late = open_socket(io, d.port());
    CHECK(read_until_closed(*late, 8s).second);
}
