// The dashboard's boundary against other local users and other pages, through the real server
// on loopback: a state-changing request from a browser session needs the dashboard's own
// Origin and the session's CSRF token; a 401 or 403 closes the connection; idle or failing
// connections cannot keep the owner out.
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

// A signed-in browser: its session cookie and the CSRF token its pages carry.
struct browser_session {
    std::string cookie, csrf;
};

browser_session signed_in(const dashboard_under_test& d) {
    browser_session b;
    b.cookie = sign_in(d.port());
    b.csrf = csrf_of(d.get("/", {{"Cookie", b.cookie}}).body);
    REQUIRE(b.csrf.size() == 64);
    return b;
}

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

TEST_CASE(
    "a cross-origin POST with a valid session cookie gets 403 in one line and cancels "
    "nothing",
    "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    const browser_session b = signed_in(d);
    for (const std::string& origin :
         {std::string("http://127.0.0.1:1"), std::string("null"),
          origin_of(d.port()) + ".evil.example", "https://127.0.0.1:" + std::to_string(d.port())}) {
        INFO(origin);
        const http_reply r = d.post("/jobs/" + id + "/cancel", browser_post(b.cookie, origin),
                                    "csrf_token=" + b.csrf);
        CHECK(r.status == 403);
        CHECK(r.header("connection") == "close");
        CHECK_THAT(r.body, Catch::StartsWith("403: a request from " + origin));
        CHECK(std::count(r.body.begin(), r.body.end(), '\n') == 1);
    }
    header_list cross_site = browser_post(b.cookie, "");
    cross_site.emplace_back("Sec-Fetch-Site", "same-site");  // another port of 127.0.0.1
    CHECK(d.post("/jobs/" + id + "/cancel", cross_site, "csrf_token=" + b.csrf).status == 403);
    CHECK(d.post("/jobs/" + id + "/cancel", browser_post(b.cookie, ""), "csrf_token=" + b.csrf)
              .status == 403);  // neither Origin nor Sec-Fetch-Site
    CHECK_FALSE(d.jobs().cancel_requested(id));
    CHECK(d.jobs().read_status(id).state == job_state::running);
}

TEST_CASE("a same-origin POST without the session's CSRF token gets 403 and cancels nothing",
          "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    const browser_session b = signed_in(d), other = signed_in(d);
    const header_list own = browser_post(b.cookie, origin_of(d.port()));
    for (const std::string& body : {std::string(""), std::string("csrf_token="),
                                    "csrf_token=" + other.csrf, "csrf_token=" + b.csrf + "0"}) {
        INFO(body);
        const http_reply r = d.post("/jobs/" + id + "/cancel", own, body);
        CHECK(r.status == 403);
        CHECK_THAT(r.body, Catch::Contains("CSRF token"));
    }
    header_list wrong_header = own;
    wrong_header.emplace_back("X-CSRF-Token", other.csrf);
    CHECK(d.post("/jobs/" + id + "/cancel", wrong_header, "csrf_token=" + b.csrf).status == 403);
    form_body upload = matmul_upload();
    header_list multipart = {{"Cookie", b.cookie}, {"Origin", origin_of(d.port())}};
    multipart.push_back(upload.headers()[1]);
    CHECK(d.post("/submit", multipart, upload.close()).status == 403);
    CHECK(staged_files(d.jobs()).empty());
    CHECK_FALSE(d.jobs().cancel_requested(id));
}

TEST_CASE("a same-origin POST with the session's CSRF token, as a form field or a header, works",
          "[http]") {
    dashboard_under_test d;
    const std::string a = place_job(d.jobs(), job_state::running);
    const std::string b_job = place_job(d.jobs(), job_state::queued);
    const browser_session b = signed_in(d);
    const std::string page = d.get("/jobs/" + a, {{"Cookie", b.cookie}}).body;
    CHECK_THAT(page, Catch::Contains("name=\"csrf_token\" value=\"" + b.csrf + "\""));
    const http_reply r =
        d.post("/jobs/" + a + "/cancel", browser_post(b.cookie, origin_of(d.port())),
               "csrf_token=" + b.csrf);
    CHECK(r.status == 303);
    CHECK(d.jobs().cancel_requested(a));
    header_list by_header = {
        {"Cookie", b.cookie}, {"Sec-Fetch-Site", "same-origin"}, {"X-CSRF-Token", b.csrf}};
    CHECK(d.post("/jobs/" + b_job + "/cancel", by_header).status == 303);
    CHECK(d.jobs().cancel_requested(b_job));
    form_body upload;  // as the page's form sends it: the hidden field first, then the files
    upload.field("csrf_token", b.csrf);
    upload.body += matmul_upload().body;
    header_list multipart = {{"Cookie", b.cookie}, {"Origin", origin_of(d.port())}};
    multipart.push_back(upload.headers()[1]);
    const http_reply checked = d.post("/submit", multipart, upload.close());
    INFO(checked.body);
    CHECK(checked.status == 200);
    CHECK_THAT(checked.body, Catch::Contains("name=\"csrf_token\" value=\"" + b.csrf + "\""));
}

TEST_CASE("a Bearer client changes state without a CSRF token or an Origin", "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running);
    CHECK(d.post("/jobs/" + id + "/cancel").status == 303);
    CHECK(d.jobs().cancel_requested(id));
    CHECK(csrf_of(d.get("/").body).empty());  // nothing to steal from a Bearer client's pages
}

TEST_CASE("a 401 closes the connection, so a client without the token cannot hold it open",
          "[http]") {
    dashboard_under_test d;
    asio::io_context io;
    const std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    auto s = open_socket(io, d.port(), request + request + request);
    const auto [got, closed] = read_until_closed(*s, 5s);
    CHECK(closed);
    CHECK_THAT(got, Catch::StartsWith("HTTP/1.1 401") && Catch::Contains("Connection: close"));
    CHECK(got.find("HTTP/1.1 401", 5) == std::string::npos);  // one answer, then closed
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
