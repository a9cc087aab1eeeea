// The dashboard in headless chromium, used as a person would: sign in with the token after '#'
// (or in the sign-in form), upload the matmul example through the intake form, read check's
// table, queue it, watch the job run to done under the real `cuda-optimizer serve` with the
// fake harness, open its report, sign out; and as an attacker would: a page on another
// loopback port receives everything the browser sends it and replays it to the dashboard.
// Screenshots go to build/screenshots/ ($CUOPT_SCREENSHOTS overrides).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "dashboard_fixture.hpp"
#include "devtools_browser.hpp"
#include "headless_chromium.hpp"
#include "loopback_http_server.hpp"

using namespace cuopt;
using namespace cuopt::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

fs::path screenshots() {
    const char* given = std::getenv("CUOPT_SCREENSHOTS");
    return given && *given ? fs::path(given) : fs::path(CUOPT_SOURCE_DIR) / "build" / "screenshots";
}

std::vector<fs::path> matmul_files() {
    const fs::path example = fs::path(CUOPT_SOURCE_DIR) / "examples" / "matmul";
    return {example / "config.json", example / "initial.cu", example / "reference.cu",
            example / "input_cases.json", example / "holdout_cases.json"};
}

// `cuda-optimizer serve` with the dashboard on a free loopback port, the fake harness and the
// fake compute-sanitizer; stopped with SIGTERM when the test ends.
class serve_child {
  public:
    explicit serve_child(const fs::path& dir) : m_log(dir / "serve.log") {
        const std::vector<std::string> args = {
            CUOPT_OPTIMIZER_BINARY,
            "serve",
            "--spool",
            (dir / "spool").string(),
            "--http",
            "127.0.0.1:0",
            "--token-file",
            (dir / "token").string(),
            "--harness",
            CUOPT_FAKE_HARNESS_BINARY,
            "--sanitizer",
            std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh",
            "--poll",
            "0.2"};
        std::vector<char*> argv;
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        m_pid = ::fork();
        REQUIRE(m_pid >= 0);
        if (m_pid == 0) {
            const int log = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(log, 1);
            ::dup2(log, 2);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        const std::regex address("dashboard: http://127\\.0\\.0\\.1:([0-9]+)/");
        for (int i = 0; i < 300 && m_port == 0; ++i) {
            std::smatch m;
            const std::string text = log();
            if (std::regex_search(text, m, address))
                m_port = static_cast<unsigned short>(std::stoi(m[1]));
            else
                std::this_thread::sleep_for(100ms);
        }
        INFO(log());
        REQUIRE(m_port != 0);
        m_token = read_text_file(dir / "token");
        while (!m_token.empty() && m_token.back() == '\n') m_token.pop_back();
    }
    ~serve_child() {
        ::kill(m_pid, SIGTERM);
        int status = 0;
        for (int i = 0; i < 100 && ::waitpid(m_pid, &status, WNOHANG) == 0; ++i)
            std::this_thread::sleep_for(100ms);
        if (::waitpid(m_pid, &status, WNOHANG) == 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, &status, 0);
        }
    }
    std::string base() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    const std::string& token() const { return m_token; }
    std::string log() const {
        try {
            return read_text_file(m_log);
        } catch (const std::exception&) {
            return "";
        }
    }

  private:
    fs::path m_log;
    pid_t m_pid = -1;
    unsigned short m_port = 0;
    std::string m_token;
};

// A script's string value.
std::string string_of(devtools_browser& b, const std::string& expression) {
    const rapidjson::Document v = parse_json(b.evaluate(expression), expression);
    return v.IsString() ? v.GetString() : "";
}

std::string text_of(devtools_browser& b, const std::string& selector) {
    return string_of(b, "(document.querySelector(" + json_quoted(selector) +
                            ") || {textContent: ''}).textContent");
}

// Opens a dashboard address and waits until its script has shown the page.
void open_page(devtools_browser& b, const std::string& url) {
    b.navigate(url);
    REQUIRE(
        b.wait_for("document.documentElement.getAttribute('data-dashboard-ready') === 'yes'", 15s));
}

// Clicks a form's button; the script sends the form and shows the answer in place.
void click_and_show(devtools_browser& b, const std::string& selector, const std::string& shown,
                    std::chrono::seconds limit) {
    b.evaluate("document.querySelector(" + json_quoted(selector) + ").click()");
    REQUIRE(b.wait_for(shown, limit));
}

// The intake as a person does it: the form, the files, a flag; then check's page.
void submit_matmul(devtools_browser& b, const std::string& base) {
    open_page(b, base + "/submit");
    b.set_input_files("#files", matmul_files());
    b.evaluate("document.getElementById('args').value = '--max-iterations 2'");
    b.evaluate("document.getElementById('priority').value = '-2'");
    click_and_show(b, "#upload", "document.getElementById('check-table') !== null", 120s);
    INFO(string_of(b, "document.body.innerText"));
    REQUIRE(b.wait_for("document.getElementById('check-table') !== null", 10s));
    CHECK_THAT(text_of(b, "#check-table"), Catch::Contains("initial compiles"));
    CHECK_THAT(text_of(b, "h1"), Catch::Contains("ready to queue"));
}

// A copy of matmul whose config's signature is cut short: check refuses it, the page says so.
void reject_broken_signature(devtools_browser& b, const std::string& base, const fs::path& dir) {
    std::vector<fs::path> files;
    for (const fs::path& f : matmul_files()) {
        std::string text = read_text_file(f);
        if (f.filename() == "config.json")
            text = std::regex_replace(text, std::regex("\"signature\": \"[^\"]*\""),
                                      "\"signature\": \"void matmul_f32(const float* a\"");
        write_file_atomic(dir / f.filename(), text);
        files.push_back(dir / f.filename());
    }
    open_page(b, base + "/submit");
    b.set_input_files("#files", files);
    click_and_show(b, "#upload", "document.getElementById('check-table') !== null", 120s);
    CHECK(text_of(b, "h1") == "Rejected");
    CHECK_THAT(text_of(b, "#check-table"), Catch::Contains("FAIL  signature"));
    CHECK(b.evaluate("document.getElementById('queue') === null") == "true");
    b.screenshot(screenshots() / "dashboard-rejected.png");
}

// No script errors, refused resources or CSP violations on any page.
void check_console_clean(const devtools_browser& b) {
    INFO(b.console());
    CHECK_THAT(b.console(), !Catch::Contains("exception:") && !Catch::Contains("Refused") &&
                                !Catch::Contains("Content Security Policy") &&
                                !Catch::Contains("Failed to load"));
}

// A second job, queued by `submit` behind the first and cancelled from its page.
void submit_and_cancel_second(devtools_browser& b, const serve_child& serve,
                              const fs::path& spool) {
    const process_result r =
        run_optimizer({"submit", "--spool", spool.string(), "--config",
                       std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/config.json", "--harness",
                       CUOPT_FAKE_HARNESS_BINARY, "--max-iterations", "1"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string id = r.output.substr(0, r.output.find('\n'));
    open_page(b, serve.base() + "/jobs/" + id);
    b.click_and_wait("#cancel-form button", 10s);
    CHECK(b.wait_for("document.querySelector('#job-state .state-cancelled') !== null", 60s));
}

}  // namespace

TEST_CASE(
    "in chromium, the intake form uploads matmul, shows check's table, queues it and "
    "cancels it",
    "[integration][http][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    dashboard_under_test d;
    const std::string base = "http://127.0.0.1:" + std::to_string(d.port());
    devtools_browser b(d.root() / "chromium");
    b.navigate(base + "/#token=" + k_dashboard_token);
    CHECK(b.evaluate("location.href") == json_quoted(base + "/"));  // the token left the URL
    CHECK(b.wait_for("document.documentElement.getAttribute('data-refreshes') >= 1", 10s));
    open_page(b, base + "/submit");
    b.screenshot(screenshots() / "dashboard-submit.png");
    submit_matmul(b, base);
    b.click_and_wait("#queue", 30s);
    REQUIRE(d.jobs().job_ids().size() == 1);
    const std::string id = d.jobs().job_ids()[0];
    CHECK(b.evaluate("location.pathname") == json_quoted("/jobs/" + id));
    CHECK(b.wait_for("document.documentElement.getAttribute('data-refreshes') >= 1", 10s));
    CHECK_THAT(text_of(b, "#job-state"), Catch::Contains("queued"));
    CHECK(d.jobs().read_spec(id).priority == -2);
    b.click_and_wait("#cancel-form button", 10s);
    CHECK(d.jobs().cancel_requested(id));
    check_console_clean(b);  // before the rejection, whose page comes with status 422
    reject_broken_signature(b, base, d.root() / "broken");
    CHECK(d.jobs().job_ids().size() == 1);
    // A sign-in link with a wrong token, which any page can open, leaves the session alone.
    const std::string session = string_of(b, "localStorage.getItem('cuopt-dashboard-session')");
    REQUIRE(session.size() == 97);
    b.navigate(base + "/#token=00");
    REQUIRE(b.wait_for("document.body.getAttribute('data-page') === 'queue'", 10s));
    CHECK(string_of(b, "localStorage.getItem('cuopt-dashboard-session')") == session);
    CHECK(b.evaluate("location.hash") == "\"\"");
    // Signing out ends the session on the server, not only in the page.
    CHECK(d.get("/api/jobs", session_header(session)).status == 200);
    b.evaluate("document.getElementById('sign-out').click()");
    REQUIRE(b.wait_for("document.body.getAttribute('data-page') === 'sign-in'", 10s));
    CHECK(b.evaluate("localStorage.getItem('cuopt-dashboard-session')") == "null");
    CHECK(d.get("/api/jobs", session_header(session)).status == 401);
    b.screenshot(screenshots() / "dashboard-sign-in.png");
    // The sign-in form opens a new one.
    b.evaluate("document.getElementById('token').value = " + json_quoted(k_dashboard_token));
    click_and_show(b, "#sign-in-button", "document.body.getAttribute('data-page') === 'queue'",
                   10s);
    CHECK(string_of(b, "localStorage.getItem('cuopt-dashboard-session')") != session);
}

TEST_CASE(
    "in chromium, a job submitted through the form runs to done under serve and its report "
    "opens, another is cancelled from its page",
    "[http][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    scratch_folder dir;
    serve_child serve(dir.path());
    devtools_browser b(dir / "chromium");
    const fs::path shots = screenshots();
    b.navigate(serve.base() + "/#token=" + serve.token());
    REQUIRE(b.wait_for("document.documentElement.getAttribute('data-refreshes') >= 1", 10s));
    submit_matmul(b, serve.base());
    b.screenshot(shots / "dashboard-intake.png");
    b.click_and_wait("#queue", 30s);
    const std::string first = string_of(b, "location.pathname");
    CHECK(first == "/jobs/job-000001");
    INFO(serve.log());
    submit_and_cancel_second(b, serve, dir / "spool");
    open_page(b, serve.base() + first);
    REQUIRE(b.wait_for("document.querySelector('#job-state .state-done') !== null", 300s));
    REQUIRE(b.wait_for("!document.getElementById('job-report').hidden", 15s));
    CHECK_THAT(text_of(b, "#job-best"), Catch::Matches("[0-9.]+x"));
    b.screenshot(shots / "dashboard-job-done.png");
    open_page(b, serve.base() + "/");
    REQUIRE(b.wait_for("document.querySelectorAll('#jobs tr').length === 2", 10s));
    CHECK_THAT(text_of(b, "#jobs"), Catch::Contains("done") && Catch::Contains("cancelled"));
    b.screenshot(shots / "dashboard-queue.png");
    b.click_and_wait("#jobs a[href$=\"/report\"]", 15s);
    REQUIRE(
        b.wait_for("document.documentElement.getAttribute('data-report-ready') === 'yes'", 15s));
    CHECK(string_of(b, "location.pathname") == first + "/report");
    b.screenshot(shots / "dashboard-report.png");
    check_console_clean(b);
    CHECK_THAT(serve.log(), !Catch::Contains(serve.token()));
}

TEST_CASE(
    "in chromium, a page on another loopback port gets nothing that opens the dashboard: what "
    "the browser sends it, replayed, is refused",
    "[integration][http][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    dashboard_under_test d;
    const std::string by_form = place_job(d.jobs(), job_state::running);
    const std::string by_fetch = place_job(d.jobs(), job_state::queued);
    const std::string base = origin_of(d.port());
    // The page any other local service could serve (an SSH-forwarded tool, a notebook): it
    // loads an image and a script from its own port (so the browser sends it whatever it would
    // send there), tries the dashboard's API with credentials, then posts a form to it.
    scripted_reply page;
    page.headers["Content-Type"] = "text/html; charset=utf-8";
    page.body =
        "<!DOCTYPE html><html><body><img src=\"/pixel\"><form id=\"f\" method=\"post\" "
        "action=\"" +
        base + "/jobs/" + by_form +
        "/cancel\"><input name=\"x\" value=\"1\"></form><script>\n"
        "fetch('/echo', {credentials: 'include'}).catch(function () {})"
        ".then(function () { return fetch('" +
        base +
        "/api/jobs', {credentials: 'include'}); })"
        ".catch(function () {}).then(function () { return fetch('" +
        base + "/jobs/" + by_fetch +
        "/cancel', {method: 'POST', mode: 'no-cors', credentials: 'include', "
        "headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'x=1'}); })"
        ".catch(function () {}).then(function () { document.getElementById('f')"
        ".submit(); });\n</script></body></html>";
    loopback_http_server attacker({page});
    devtools_browser b(d.root() / "chromium");
    b.navigate(base + "/#token=" + k_dashboard_token);  // the operator signed in
    REQUIRE(b.evaluate("location.href") == json_quoted(base + "/"));
    REQUIRE(b.wait_for("document.documentElement.getAttribute('data-refreshes') >= 1", 10s));
    const std::string session = string_of(b, "localStorage.getItem('cuopt-dashboard-session')");
    REQUIRE(session.size() == 97);
    CHECK(b.evaluate("document.cookie") == "\"\"");  // the dashboard set none
    b.navigate(attacker.url("/"));
    REQUIRE(b.wait_for("location.href.indexOf(" + json_quoted(base) + ") === 0", 15s));
    REQUIRE(b.wait_for("document.readyState === 'complete'", 10s));
    CHECK_THAT(string_of(b, "document.body.innerText"), Catch::Contains("401"));
    CHECK_FALSE(d.jobs().cancel_requested(by_form));
    CHECK_FALSE(d.jobs().cancel_requested(by_fetch));
    // Everything the browser sent the other port names neither the session nor the token; and
    // sent to the dashboard, the same headers open nothing.
    const std::vector<recorded_request> seen = attacker.requests();
    REQUIRE(seen.size() >= 2);
    for (const recorded_request& r : seen) {
        header_list replay;
        for (const auto& [name, value] : r.headers) {
            CHECK_THAT(value, !Catch::Contains(session) && !Catch::Contains(k_dashboard_token));
            if (name != "host" && name != "content-length" && name != "connection")
                replay.emplace_back(name, value);
        }
        CHECK_THAT(r.target, !Catch::Contains(session) && !Catch::Contains(k_dashboard_token));
        INFO(r.target);
        CHECK(d.get("/api/jobs", replay).status == 401);
        CHECK(d.post("/jobs/" + by_form + "/cancel", replay, "x=1").status == 401);
    }
    CHECK_FALSE(d.jobs().cancel_requested(by_form));
    CHECK(d.jobs().read_status(by_form).state == job_state::running);
    CHECK(d.jobs().read_status(by_fetch).state == job_state::queued);
}
