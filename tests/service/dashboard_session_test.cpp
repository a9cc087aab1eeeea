// The dashboard's browser sessions over real HTTP on loopback: opened with the token, sent as
// `Authorization: Session`, ended by sign-out and by their idle and absolute limits; tickets
// that open one document once; and the limits the dashboard's jobs are held to (priority,
// jobs queued or running) like any other submitter's.
#include <catch2/catch.hpp>
#include <regex>
#include <thread>

#include "common/json_document.hpp"
#include "dashboard_fixture.hpp"

using namespace cuopt;
using namespace cuopt::test;
using namespace std::chrono_literals;

namespace {

// What the dashboard's script sends with a POST: its session and its page's Origin.
header_list own(const dashboard_under_test& d, const std::string& session) {
    return browser_post(session, origin_of(d.port()));
}

std::string ticket_for(const dashboard_under_test& d, const std::string& session,
                       const std::string& path) {
    const http_reply r = d.post("/api/ticket?path=" + path, own(d, session));
    INFO(r.body);
    REQUIRE(r.status == 200);
    return parse_json(r.body, "/api/ticket")["ticket"].GetString();
}

bool is_shell(const http_reply& r) {
    return r.status == 200 && r.body.find("data-page=\"shell\"") != std::string::npos;
}

dashboard_settings session_limits_of(double idle_s, double max_s) {
    dashboard_settings s;
    s.session_idle_s = idle_s;
    s.session_max_s = max_s;
    return s;
}

}  // namespace

TEST_CASE("a session is opened with the token only, works as a header and ends at sign-out",
          "[http]") {
    dashboard_under_test d;
    const http_reply opened = d.post("/api/session");
    REQUIRE(opened.status == 200);
    CHECK(opened.header("set-cookie").empty());
    CHECK(opened.header("cache-control") == "no-store");
    const rapidjson::Document j = parse_json(opened.body, "/api/session");
    const std::string session = j["session"].GetString();
    CHECK(session.size() == 97);
    CHECK_THAT(session, !Catch::Contains(k_dashboard_token));
    CHECK(j["idle_s"].GetInt() == 3600);
    CHECK(j["max_s"].GetInt() == 43200);
    const http_reply page = d.get("/submit", session_header(session));
    CHECK(page.status == 200);
    CHECK_THAT(page.body, Catch::Contains("type=\"file\"") && Catch::Contains("id=\"sign-out\""));
    CHECK(d.get("/api/jobs", {{"Authorization", "session   " + session}}).status == 200);
    // A session cannot make another, nor does a GET open one.
    CHECK(d.post("/api/session", own(d, session)).status == 400);
    CHECK(d.get("/api/session").status == 405);
    CHECK(d.post("/api/logout").status == 400);  // the token has no session to end
    CHECK(d.post("/api/logout", own(d, session)).status == 200);
    CHECK(d.get("/api/jobs", session_header(session)).status == 401);
    CHECK(d.post("/api/logout", own(d, session)).status == 401);
    CHECK(d.get("/api/jobs").status == 200);  // the token itself still works
}

TEST_CASE("a session ends once idle too long, and once too old however busy", "[http]") {
    SECTION("idle") {
        dashboard_under_test d(session_limits_of(1.0, 60));
        const std::string s = sign_in(d.port());
        for (int i = 0; i < 3; ++i) {  // 1.5 s in all, each request within the idle limit
            std::this_thread::sleep_for(500ms);
            CHECK(d.get("/api/jobs", session_header(s)).status == 200);
        }
        std::this_thread::sleep_for(1200ms);
        CHECK(d.get("/api/jobs", session_header(s)).status == 401);
    }
    SECTION("absolute") {
        dashboard_under_test d(session_limits_of(60, 1.5));
        const std::string s = sign_in(d.port());
        CHECK(d.get("/api/jobs", session_header(s)).status == 200);
        for (int i = 0; i < 4; ++i) std::this_thread::sleep_for(500ms);
        CHECK(d.get("/api/jobs", session_header(s)).status == 401);
        CHECK(d.get("/api/jobs", session_header(sign_in(d.port()))).status == 200);
    }
}

TEST_CASE("a ticket opens one document, once, soon, in a live session, and nothing else",
          "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::done);
    const std::string s = sign_in(d.port()), report = "/jobs/" + id + "/report";
    const std::string t = ticket_for(d, s, report);
    CHECK(t.size() == 97);
    const http_reply opened = d.get(report + "?ticket=" + t, {});
    CHECK(opened.status == 200);
    CHECK_THAT(opened.body, Catch::Contains("report of " + id));
    CHECK(is_shell(d.get(report + "?ticket=" + t, {})));  // spent
    // Bound to its path: another file, or the report under another job, gets the shell.
    const std::string u = ticket_for(d, s, report);
    CHECK(is_shell(d.get("/jobs/" + id + "/files/best.cu?ticket=" + u, {})));
    CHECK(is_shell(d.get(report + "?ticket=" + u, {})));  // spent by the wrong try
    // Percent-encoded paths name the same file.
    const std::string v = ticket_for(d, s, "%2Fjobs%2F" + id + "%2Ffiles%2Fbest%252Ecu");
    const http_reply best = d.get("/jobs/" + id + "/files/best%2Ecu?ticket=" + v, {});
    CHECK(best.status == 200);
    CHECK(best.body == "__global__ void k() {}\n");
    // Only documents; only for a session; never for a POST.
    for (const std::string& bad : std::vector<std::string>{"/api/jobs", "/jobs/" + id, "/",
                                                           "/jobs//report", "/jobs/x/files/"})
        CHECK(d.post("/api/ticket?path=" + bad, own(d, s)).status == 400);
    CHECK(d.post("/api/ticket?path=" + report).status == 400);  // Bearer: it needs no ticket
    const std::string running = place_job(d.jobs(), job_state::running);
    const std::string w = ticket_for(d, s, "/jobs/" + running + "/report");
    CHECK(d.post("/jobs/" + running + "/cancel?ticket=" + w, {}).status == 401);
    CHECK_FALSE(d.jobs().cancel_requested(running));
    // A session's tickets end with it.
    const std::string x = ticket_for(d, s, report);
    REQUIRE(d.post("/api/logout", own(d, s)).status == 200);
    CHECK(is_shell(d.get(report + "?ticket=" + x, {})));
}

TEST_CASE("the dashboard's jobs keep to the web priority limit and the jobs-per-user limit",
          "[integration][http]") {
    SECTION("a priority above the limit is refused before anything runs") {
        dashboard_under_test d;
        form_body f = matmul_upload();
        f.field("priority", "5");
        const http_reply r = d.post("/submit", f.headers(), f.close());
        CHECK(r.status == 403);
        CHECK_THAT(r.body,
                   Catch::Contains("priority 5") && Catch::Contains("serve --web-max-priority"));
        CHECK(staged_files(d.jobs()).empty());
    }
    SECTION("at the limit of jobs queued or running, an upload is refused") {
        dashboard_settings s;
        s.max_jobs = 2;
        dashboard_under_test d(s);
        place_job(d.jobs(), job_state::running);
        place_job(d.jobs(), job_state::queued);
        place_job(d.jobs(), job_state::done);  // ended: not counted
        form_body f = matmul_upload();
        const http_reply r = d.post("/submit", f.headers(), f.close());
        CHECK(r.status == 429);
        CHECK_THAT(r.body, Catch::Contains("2 queued or running; the limit is 2") &&
                               Catch::Contains("serve --max-jobs-per-user"));
        CHECK(staged_files(d.jobs()).empty());
    }
    SECTION("and a checked upload is not queued once the limit was reached meanwhile") {
        dashboard_settings s;
        s.max_jobs = 1;
        s.max_priority = 4;
        dashboard_under_test d(s);
        form_body f = matmul_upload();
        f.field("priority", "4");
        const http_reply checked = d.post("/submit", f.headers(), f.close());
        INFO(checked.body);
        REQUIRE(checked.status == 200);
        std::smatch m;
        REQUIRE(
            std::regex_search(checked.body, m, std::regex("action=\"/submit/([^/\"]+)/queue\"")));
        place_job(d.jobs(), job_state::queued);
        const http_reply queued = d.post("/submit/" + m[1].str() + "/queue");
        CHECK(queued.status == 429);
        CHECK_THAT(queued.body, Catch::Contains("nothing was kept"));
        CHECK(d.jobs().job_ids().size() == 1);
        CHECK(staged_files(d.jobs()).empty());
    }
}
