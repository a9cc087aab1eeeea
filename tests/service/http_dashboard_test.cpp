// The web dashboard over real HTTP on loopback: the token on every request, the pages and API,
// the report and run folder files (never anything outside), cancel, and the intake form with
// its limits, its name checks, `check`'s table and "Queue this job".
#include <unistd.h>

#include <catch2/catch.hpp>
#include <regex>

#include "common/file_io.hpp"
#include "dashboard_fixture.hpp"
#include "orchestrator/service/dashboard_auth.hpp"
#include "orchestrator/service/dashboard_pages.hpp"

using namespace cuopt;
using namespace cuopt::test;
namespace fs = std::filesystem;

namespace {

// The staging folder name in the check page's "Queue this job" form.
std::string staged_name(const std::string& page) {
    std::smatch m;
    return std::regex_search(page, m, std::regex("action=\"/submit/([^/\"]+)/queue\"")) ? m[1].str()
                                                                                        : "";
}

}  // namespace

TEST_CASE("requests without the token, or with a wrong one, get 401 saying where it is", "[http]") {
    dashboard_under_test d, other;
    const std::string wrong = k_dashboard_token.substr(0, 63) + "0";
    const std::string elsewhere = sign_in(other.port());  // a session of another daemon
    for (const auto& [target, headers] : std::vector<std::pair<std::string, header_list>>{
             {"/api/jobs", {}},
             {"/api/jobs", {{"Authorization", "Bearer " + wrong}}},
             {"/submit", {{"Authorization", "Session " + wrong}}},
             {"/submit", session_header(elsewhere)},
             {"/submit", {{"Authorization", "Session"}}},
             {"/static/dashboard.js", {{"Authorization", "Basic " + k_dashboard_token}}}}) {
        INFO(target);
        const http_reply r = d.get(target, headers);
        CHECK(r.status == 401);
        CHECK_THAT(r.body, Catch::Contains("--token-file"));
        CHECK(r.header("set-cookie").empty());
        CHECK(r.header("connection") == "close");
    }
    form_body f = matmul_upload();
    const http_reply r = d.post("/submit", {f.headers()[1]}, f.close());
    CHECK(r.status == 401);
    CHECK(staged_files(d.jobs()).empty());
}

TEST_CASE("without a credential a page's address gets the shell, which holds no data", "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::running, "secret reason");
    const std::string session = sign_in(d.port());
    for (const auto& [target, headers] : std::vector<std::pair<std::string, header_list>>{
             {"/", {}},
             {"/jobs/" + id, {}},
             {"/jobs/" + id + "/report", {}},
             {"/jobs/" + id + "/files/best.cu", {}},
             // A cookie is no credential, whatever it holds.
             {"/jobs/" + id,
              {{"Cookie", "cuopt_session_" + std::to_string(d.port()) + "=" + session}}},
             {"/jobs/" + id, {{"Cookie", "cuopt_token=" + k_dashboard_token}}}}) {
        INFO(target);
        const http_reply r = d.get(target, headers);
        CHECK(r.status == 200);
        CHECK_THAT(r.body, Catch::Contains("data-page=\"shell\"") &&
                               Catch::Contains("/static/dashboard.js"));
        CHECK_THAT(r.body, !Catch::Contains("secret reason") && !Catch::Contains("__global__"));
        CHECK(r.header("set-cookie").empty());
        CHECK(r.header("connection") == "close");
    }
    // Not for a path the page's script would read as another origin's URL.
    CHECK(d.get("//127.0.0.1:1/x", {}).status == 401);
    const http_reply script = d.get("/static/dashboard.js", {});
    CHECK(script.status == 200);
    CHECK_THAT(script.body, Catch::Contains("Authorization"));
    // With the session, the page itself.
    CHECK_THAT(d.get("/jobs/" + id, session_header(session)).body,
               Catch::Contains("secret reason"));
}

TEST_CASE("the token in an address's query is refused, never checked nor used", "[http]") {
    dashboard_under_test d;
    for (const std::string& target :
         std::vector<std::string>{"/?token=" + k_dashboard_token, "/submit?a=1&token=x",
                                  "/api/jobs?token=" + k_dashboard_token, "/?%74oken=x"}) {
        INFO(target);
        const http_reply r = d.get(target, {});
        CHECK(r.status == 400);
        CHECK_THAT(r.body, Catch::Contains("does not go in the address's query"));
        CHECK(r.header("set-cookie").empty());
    }
    CHECK(d.get("/?token=" + k_dashboard_token).status == 400);  // even with the Bearer header
}

TEST_CASE("every reply carries the security headers, the API is never cached", "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::done);
    const http_reply page = d.get("/"), api = d.get("/api/jobs"),
                     report = d.get("/jobs/" + id + "/report");
    for (const http_reply* r : {&page, &api, &report}) {
        CHECK(r->header("x-content-type-options") == "nosniff");
        CHECK_THAT(r->header("content-security-policy"), Catch::Contains("default-src 'none'"));
    }
    CHECK_THAT(page.header("content-security-policy"), Catch::Contains("script-src 'self'"));
    CHECK_THAT(page.header("content-security-policy"), !Catch::Contains("unsafe-inline"));
    CHECK(api.header("cache-control") == "no-store");
    CHECK(api.header("content-type") == "application/json");
    CHECK_THAT(
        report.header("content-security-policy"),
        Catch::Contains("script-src 'unsafe-inline'") && Catch::Contains("sandbox allow-scripts"));
}

TEST_CASE("the queue and /api/jobs show each job's state, progress and best speedup", "[http]") {
    dashboard_under_test d;
    const std::string done = place_job(d.jobs(), job_state::done);
    const std::string failed = place_job(d.jobs(), job_state::failed, "<script>alert(1)</script>");
    const http_reply q = d.get("/");
    CHECK_THAT(q.body, Catch::Contains("href=\"/jobs/" + done + "\"") &&
                           Catch::Contains("state-failed") &&
                           Catch::Contains("iteration 2, 7 attempts") && Catch::Contains("2.50x") &&
                           Catch::Contains("/jobs/" + done + "/report"));
    const http_reply api = d.get("/api/jobs");
    CHECK_THAT(api.body, Catch::Contains("\"id\":\"" + failed + "\"") &&
                             Catch::Contains("\"state\":\"failed\""));
    const http_reply job = d.get("/jobs/" + failed);
    CHECK_THAT(job.body, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;") &&
                             !Catch::Contains("<script>alert"));
    CHECK_THAT(job.body, Catch::Contains("iteration 2 &lt;b&gt;"));  // the log's tail, escaped
    CHECK(d.get("/api/jobs/" + failed).status == 200);
    CHECK(d.get("/api/jobs/job-999999").status == 404);
    CHECK(d.get("/jobs/job-999999").status == 404);
    CHECK(d.get("/api/jobs/" + failed + "/log").body == "starting\niteration 1\niteration 2 <b>\n");
}

TEST_CASE("a job's report and run folder files are served, nothing outside the run folder",
          "[http]") {
    dashboard_under_test d;
    const std::string id = place_job(d.jobs(), job_state::done);
    const http_reply report = d.get("/jobs/" + id + "/report");
    CHECK(report.status == 200);
    CHECK_THAT(report.body, Catch::Contains("report of " + id));
    const http_reply best = d.get("/jobs/" + id + "/files/best.cu");
    CHECK(best.status == 200);
    CHECK(best.header("content-type") == "text/plain; charset=utf-8");
    CHECK(best.body == "__global__ void k() {}\n");
    const fs::path run = d.jobs().job_dir(id) / "results" / "run-001";
    fs::create_directory_symlink(d.jobs().job_dir(id), run / "up");
    fs::create_symlink(run / "best.cu", run / "best-link.cu");
    for (const std::string bad : {"../../job.json", "%2e%2e/%2e%2e/job.json", "..%2f..%2fjob.json",
                                  "/etc/passwd", "up/job.json", "up/files/config.json"}) {
        INFO(bad);
        const http_reply r = d.get("/jobs/" + id + "/files/" + bad);
        CHECK(r.status == 403);
        CHECK_THAT(r.body, !Catch::Contains("\"schema_version\""));
    }
    CHECK(d.get("/jobs/" + id + "/files/best-link.cu").status == 200);  // a link inside is fine
    CHECK(d.get("/jobs/" + id + "/files/nothing.txt").status == 404);
    CHECK(d.get("/jobs/../spool.json").status == 404);
    fs::remove(run / "report.html");
    fs::create_symlink(d.jobs().job_dir(id) / "job.json", run / "report.html");
    CHECK(d.get("/jobs/" + id + "/report").status == 404);  // a report linked from outside
}

TEST_CASE("Cancel asks the spool to cancel a job, and is refused once it has ended", "[http]") {
    dashboard_under_test d;
    const std::string running = place_job(d.jobs(), job_state::running);
    const std::string done = place_job(d.jobs(), job_state::done);
    CHECK_THAT(d.get("/jobs/" + running).body, Catch::Contains("id=\"cancel-form\""));
    const http_reply r = d.post("/jobs/" + running + "/cancel");
    CHECK(r.status == 303);
    CHECK(r.header("location") == "/jobs/" + running);
    CHECK(d.jobs().cancel_requested(running));
    CHECK(d.post("/jobs/" + done + "/cancel").status == 409);
    CHECK_FALSE(d.jobs().cancel_requested(done));
    CHECK(d.get("/jobs/" + running + "/cancel").status == 404);  // GET changes nothing
}

TEST_CASE("upload names that would leave the staging folder are refused and nothing is written",
          "[http]") {
    dashboard_under_test d;
    for (const std::string bad : {"../x", "/etc/passwd", "a/../../b", "..\\x", "a/./b"}) {
        INFO(bad);
        form_body f = matmul_upload();
        f.file("files", bad, "payload");
        const http_reply r = d.post("/submit", f.headers(), f.close());
        CHECK(r.status == 400);
        CHECK_THAT(r.body, Catch::Contains("upload name"));
    }
    CHECK(staged_files(d.jobs()).empty());
    CHECK_FALSE(fs::exists(d.jobs().root() / "x"));
    CHECK_FALSE(fs::exists(d.jobs().root() / "b"));
    CHECK_FALSE(fs::exists(d.jobs().staging_dir() / "x"));
}

TEST_CASE("a config naming files outside its upload is refused before anything runs",
          "[integration][http]") {
    dashboard_under_test d;
    // From SPOOL/staging/stage-X/files/config.json, four levels up is the test's folder.
    const std::string secret = "not for the job " + std::to_string(::getpid());
    write_file_atomic(d.root() / "secret.cu", secret);
    const fs::path example = fs::path(CUOPT_SOURCE_DIR) / "examples" / "matmul";
    form_body evil;
    evil.file("files", "config.json",
              std::regex_replace(read_text_file(example / "config.json"),
                                 std::regex("\"reference.cu\""), "\"../../../../secret.cu\""));
    for (const char* name : {"initial.cu", "input_cases.json", "holdout_cases.json"})
        evil.file("files", name, read_text_file(example / name));
    const http_reply r = d.post("/submit", evil.headers(), evil.close());
    CHECK(r.status == 400);
    CHECK_THAT(r.body, Catch::Contains("outside the files it was given"));
    CHECK(staged_files(d.jobs()).empty());
    CHECK(d.jobs().job_ids().empty());
}

TEST_CASE("an upload over the body limit, or a file over the file limit, gets 413", "[http]") {
    dashboard_under_test d(64u << 10, 16u << 10);
    form_body big = matmul_upload();
    big.file("files", "big.bin", std::string(80u << 10, 'x'));
    const http_reply r = d.post("/submit", big.headers(), big.close());
    CHECK(r.status == 413);
    CHECK_THAT(r.body, Catch::Contains("65536 bytes per upload"));
    form_body one = matmul_upload();
    one.file("files", "inputs/a.bin", std::string(20u << 10, 'y'));
    const http_reply f = d.post("/submit", one.headers(), one.close());
    CHECK(f.status == 413);
    CHECK_THAT(f.body, Catch::Contains("inputs/a.bin"));
    CHECK(staged_files(d.jobs()).empty());
    CHECK(d.get("/").status == 200);  // and the dashboard goes on
}

TEST_CASE("an upload is checked, its table shown, and Queue this job queues it as submitted",
          "[integration][http]") {
    dashboard_under_test d;
    form_body f = matmul_upload();
    f.field("priority", "-3").field("args", "--max-iterations 2\r\n");
    const http_reply checked = d.post("/submit", f.headers(), f.close());
    INFO(checked.body);
    REQUIRE(checked.status == 200);
    CHECK_THAT(checked.body, Catch::Contains("id=\"check-table\"") &&
                                 Catch::Contains("initial compiles") &&
                                 Catch::Contains("Queue this job"));
    const std::string stage = staged_name(checked.body);
    REQUIRE_FALSE(stage.empty());
    CHECK(d.jobs().job_ids().empty());  // nothing queued before the click
    const http_reply queued = d.post("/submit/" + stage + "/queue");
    CHECK(queued.status == 303);
    REQUIRE(d.jobs().job_ids().size() == 1);
    const std::string id = d.jobs().job_ids()[0];
    CHECK(queued.header("location") == "/jobs/" + id);
    const job_spec spec = d.jobs().read_spec(id);
    CHECK(spec.submitted_by == "web");
    CHECK(spec.config == "config.json");
    CHECK(spec.priority == -3);
    CHECK(spec.args == std::vector<std::string>{"--max-iterations", "2"});
    CHECK(spec.files.size() == 5);
    CHECK(d.jobs().read_status(id).state == job_state::queued);
    CHECK(d.post("/submit/" + stage + "/queue").status == 404);  // a second click queues nothing
    CHECK(d.post("/submit/..%2f..%2fjobs/queue").status == 404);
    CHECK(staged_files(d.jobs()).empty());
}

TEST_CASE("at most 16 checked uploads wait to be queued, the next gets 429 and keeps nothing",
          "[http]") {
    dashboard_under_test d;
    std::string first;
    for (int i = 0; i < 16; ++i) {
        form_body f = matmul_upload();
        const http_reply checked = d.post("/submit", f.headers(), f.close());
        INFO(i << ": " << checked.body);
        REQUIRE(checked.status == 200);
        if (i == 0) first = staged_name(checked.body);
    }
    const std::size_t files = staged_files(d.jobs()).size();
    form_body more = matmul_upload();
    const http_reply refused = d.post("/submit", more.headers(), more.close());
    CHECK(refused.status == 429);
    CHECK_THAT(refused.body, Catch::Contains("16 checked jobs wait to be queued or discarded"));
    CHECK(staged_files(d.jobs()).size() == files);
    REQUIRE_FALSE(first.empty());
    CHECK(d.post("/submit/" + first + "/discard").status == 303);
    form_body again = matmul_upload();
    CHECK(d.post("/submit", again.headers(), again.close()).status == 200);
}

TEST_CASE("a malformed config is rejected with check's table and nothing is queued",
          "[integration][http]") {
    dashboard_under_test d;
    const std::string config =
        read_text_file(fs::path(CUOPT_SOURCE_DIR) / "examples/matmul/config.json");
    form_body f;
    f.file("files", "config.json",
           std::regex_replace(config, std::regex("\"signature\": \"[^\"]*\""),
                              "\"signature\": \"void matmul_f32(const float* a\""));
    for (const char* name :
         {"initial.cu", "reference.cu", "input_cases.json", "holdout_cases.json"})
        f.file("files", name,
               read_text_file(fs::path(CUOPT_SOURCE_DIR) / "examples/matmul" / name));
    const http_reply r = d.post("/submit", f.headers(), f.close());
    CHECK(r.status == 422);
    CHECK_THAT(r.body, Catch::Contains("Rejected") && Catch::Contains("id=\"check-table\"") &&
                           Catch::Contains("FAIL  signature") &&
                           !Catch::Contains("Queue this job"));
    CHECK(staged_name(r.body).empty());
    CHECK(staged_files(d.jobs()).empty());
    CHECK(d.jobs().job_ids().empty());
}

TEST_CASE("an address naming no job gets 404 and the dashboard goes on", "[http]") {
    dashboard_under_test d;
    for (const char* target : {"/jobs/foo", "/jobs/job-1", "/api/jobs/job-1", "/api/jobs/x/log",
                               "/jobs/job-1/report", "/jobs/job-999999"}) {
        INFO(target);
        CHECK(d.get(target).status == 404);
    }
    CHECK(d.post("/jobs/job-1/cancel").status >= 400);
    CHECK(d.get("/").status == 200);
}

TEST_CASE(
    "the queue names each job's problem, escaped and on one line, with its progress of the "
    "run's iterations, a job cancelled while queued links no report",
    "[http]") {
    dashboard_under_test d;
    const std::string running = place_job(d.jobs(), job_state::running);
    fs::permissions(d.jobs().job_dir(running) / "files", fs::perms::owner_all);
    fs::permissions(d.jobs().job_dir(running) / "files" / "config.json",
                    fs::perms::owner_read | fs::perms::owner_write);
    write_file_atomic(d.jobs().job_dir(running) / "files" / "config.json",
                      R"J({"description": "<img src=x onerror=alert(1)>\nsecond line"})J");
    write_file_atomic(d.jobs().job_dir(running) / "results/run-001/run.json",
                      R"J({"settings": {"max_iterations": 7}})J");
    write_file_atomic(d.jobs().job_dir(running) / "results/run-001/history.json",
                      R"J({"attempts": [{"iteration": 0}, {"iteration": 2}]})J");
    // Cancelled while queued: never started, no run folder.
    const fs::path stage = d.jobs().new_staging();
    write_file_atomic(stage / "files" / "config.json", "{}\n");
    job_spec spec;
    spec.config = "config.json";
    const std::string cancelled = d.jobs().commit(stage, spec);
    job_status st = d.jobs().read_status(cancelled);
    st.state = job_state::cancelled;
    st.reason = "cancelled while queued; it never started";
    d.jobs().write_status(st);

    const http_reply q = d.get("/");
    INFO(q.body);
    CHECK_THAT(q.body, Catch::Contains("<th>Problem</th>") &&
                           Catch::Contains("&lt;img src=x onerror=alert(1)&gt; second line") &&
                           !Catch::Contains("<img") &&
                           Catch::Contains("iteration 2 of 7, 2 attempts") &&
                           !Catch::Contains("/jobs/" + cancelled + "/report"));
    const http_reply api = d.get("/api/jobs");
    CHECK_THAT(api.body,
               Catch::Contains("\"max_iterations\":7") && Catch::Contains("\"has_report\":false"));
    const http_reply job = d.get("/jobs/" + cancelled);
    CHECK_THAT(job.body, Catch::Contains("<p id=\"job-report\" hidden>") &&
                             Catch::Contains("cancelled while queued; it never started"));
    CHECK(d.get("/jobs/" + cancelled + "/report").status == 404);
    // The script links a report only where the API says one exists.
    CHECK_THAT(std::string(dashboard_js()), Catch::Contains("field(j, 'has_report') === true") &&
                                                Catch::Contains("field(j, 'problem')"));
}
