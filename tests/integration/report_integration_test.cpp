// report.html through the real cuda-optimizer and fake-harness: written at the end of a run,
// rebuilt by `report RUN_DIR` from the folder's files alone, every text from the folder escaped,
// and a bad folder named with exit 11. Then the page in headless Chromium ([chromium]).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <regex>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "headless_chromium.hpp"
#include "loopback_http_server.hpp"
#include "orchestrator/artifacts/report_sections.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_holdout = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/holdout_cases.json";
const char* k_hostile = "// </script><script>document.title='owned'</script> <b>bold</b> & co\n";

// A files run: a faster kernel with hostile text in a comment (the winner), a compile error, a
// wrong answer and a middling valid one; holdout cases given, so the winner can be a go.
struct recorded_run {
    test::optimizer_fixture f;
    test::process_result result;
    explicit recorded_run(std::vector<std::string> extra = {}) {
        f.dir.write("cands/a_fast.cu", k_hostile + f.kernel("FAKE_MS=1"));
        f.dir.write("cands/b_broken.cu", f.kernel("FAKE_COMPILE_ERROR"));
        f.dir.write("cands/c_wrong.cu", f.kernel("FAKE_WRONG FAKE_MS=0.5"));
        f.dir.write("cands/d_middling.cu", f.kernel("FAKE_MS=1.5"));
        extra.insert(extra.begin(), {"--proposer", "files", "--candidates",
                                     (f.dir / "cands").string(), "--max-iterations", "4",
                                     "--holdout-cases", k_holdout, "--significance-runs", "3"});
        result = test::run_optimizer(f.args(extra));
    }
    std::string page() const { return test::read_text(f.run() / "report.html"); }
};

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The row of the attempt table whose label cell starts with `label`.
std::string row_of(const std::string& page, const std::string& label) {
    const std::size_t at = page.find("<td title=\"from " + label);
    if (at == std::string::npos) return "";
    const std::size_t start = page.rfind("<tr", at);
    return page.substr(start, page.find("</tr>", at) - start);
}

}  // namespace

TEST_CASE("a run ends with report.html: the verdict first, every attempt, the diff, escaped text",
          "[integration]") {
    recorded_run run;
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    CHECK_THAT(run.result.output,
               Catch::Contains("report: " + (run.f.run() / "report.html").string()));
    const std::string page = run.page();
    const std::size_t verdict = page.find("<section id=\"verdict\" class=\"verdict go\"");
    REQUIRE(verdict != std::string::npos);
    CHECK(verdict < page.find("id=\"latency\""));
    CHECK(page.find("id=\"latency\"") < page.find("id=\"attempts\""));
    CHECK(page.find("id=\"attempts\"") < page.find("id=\"diff\""));
    CHECK(page.find("id=\"diff\"") < page.find("id=\"environment\""));
    CHECK(page.find("id=\"model\"") < page.find("id=\"cost\""));
    CHECK_THAT(page, Catch::Contains("<div class=\"verdict-word\">GO</div>"));
    CHECK_THAT(page, Catch::Contains(
                         "a_fast.cu (iteration 1, attempt 0) is 2.000x [2.000, 2.000] faster"));
    CHECK(count(page, "<li class=\"met\">") == 4);
    // Every attempt, rejected ones with their verdict and reason.
    CHECK(count(page, "<tr class=\"valid") == 3);
    CHECK(count(page, "<tr class=\"rejected") == 2);
    CHECK_THAT(row_of(page, "b_broken.cu"), Catch::Contains("data-verdict=\"compile_error\"") &&
                                                Catch::Contains("FAKE_COMPILE_ERROR"));
    CHECK_THAT(row_of(page, "c_wrong.cu"),
               Catch::Contains("wrong_output") && Catch::Contains("1147"));
    CHECK_THAT(row_of(page, "a_fast.cu"),
               Catch::Contains("class=\"valid winner\"") && Catch::Contains("2.000&times;"));
    // The diff against the initial kernel: the marker changed, the hostile line added, escaped.
    CHECK_THAT(page, Catch::Contains("<td class=\"code\">-// FAKE_MS=2</td>"));
    CHECK_THAT(page, Catch::Contains("<td class=\"code\">+// FAKE_MS=1</td>"));
    CHECK_THAT(page,
               Catch::Contains("+// &lt;/script&gt;&lt;script&gt;document.title=&#39;owned&#39;"
                               "&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt; &amp; co"));
    CHECK(page.find("</script><script>document.title") == std::string::npos);
    CHECK(count(page, "<script>") == 2);  // the error catcher and the table's script, nothing else
    // Self-contained: the charts inline, nothing fetched.
    CHECK(count(page, "src=\"data:image/svg+xml;base64,") == 2);
    CHECK_FALSE(std::regex_search(page, std::regex(R"((src|href)="(https?:)?//)")));
    CHECK_THAT(page, Catch::Contains("Content-Security-Policy"));
}

TEST_CASE("report RUN_DIR rebuilds the same page from the run folder's files alone",
          "[integration]") {
    recorded_run run({"--gpu-hour-cost", "2.5", "--engineer-hours", "4", "--engineer-rate", "100",
                      "--invocations-per-month", "1e9"});
    REQUIRE(run.result.exit_code == 0);
    const fs::path again = run.f.dir / "again.html";
    const auto r = test::run_optimizer({"report", run.f.run().string(), "--out", again.string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains(again.string()));
    const std::string page = test::read_text(again);
    CHECK(page == run.page());
    // The economics came from run.json: the saving is the mean of (2 - 1) and (3.75 - 1.875) ms
    // times the fake harness's factor for the pilot's first tunables, 1 + 95/64.
    CHECK_THAT(page, Catch::Contains("$400.00"));  // 4 h x $100
    CHECK_THAT(page, Catch::Contains("3.5713 ms"));
    CHECK_THAT(page, Catch::Contains("992.02"));  // 3.5713 ms x 1e9 / 3.6e6 GPU hours
    CHECK_THAT(page, Catch::Contains("$2,480.06"));
    CHECK_THAT(page, Catch::Contains("kernel-only upper bound: measure the end-to-end workload "
                                     "before believing it"));
    // A flag given to report wins over the recorded one.
    const auto cheaper = test::run_optimizer(
        {"report", run.f.run().string(), "--out", again.string(), "--engineer-rate", "50"});
    REQUIRE(cheaper.exit_code == 0);
    CHECK_THAT(test::read_text(again), Catch::Contains("$200.00"));
}

TEST_CASE("a run without a winner still gets a report, a no-go saying why", "[integration]") {
    test::optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_WRONG"));
    const auto r = test::run_optimizer(f.args({"--max-iterations", "1"}));
    REQUIRE(r.exit_code == 21);
    const std::string page = test::read_text(f.run() / "report.html");
    CHECK_THAT(page, Catch::Contains("class=\"verdict no-go\""));
    CHECK_THAT(page, Catch::Contains("<div class=\"verdict-word\">NO-GO</div>"));
    CHECK_THAT(page, Catch::Contains("no declared winner"));
    CHECK(count(page, "<tr class=\"rejected") == 1);
}

TEST_CASE("a model run's report shows each iteration's conversation, collapsed and escaped",
          "[integration]") {
    test::optimizer_fixture f;
    const auto submit = [&f](const std::string& marker, const std::string& words) {
        rapidjson::Document args(rapidjson::kObjectType);
        args.AddMember("source", json_text(f.kernel(marker), args.GetAllocator()),
                       args.GetAllocator());
        args.AddMember("rationale", "tile <k> & unroll", args.GetAllocator());
        rapidjson::Document reply = parse_json(
            R"({"choices": [{"finish_reason": "tool_calls", "message": {"content": "",
                "tool_calls": [{"id": "c", "type": "function", "function": {"name":
                "submit_candidate", "arguments": ""}}]}}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100}})",
            "reply");
        auto& message = reply["choices"][0]["message"];
        message["content"].SetString(words.c_str(), reply.GetAllocator());
        message["tool_calls"][0]["function"]["arguments"].SetString(to_compact_json(args).c_str(),
                                                                    reply.GetAllocator());
        return test::scripted_reply{200, {}, to_compact_json(reply)};
    };
    test::loopback_http_server server(
        {submit("FAKE_MS=1.5", "First <try> & see"), submit("FAKE_MS=1", "Then </script>")});
    const auto r = test::run_program(
        "/usr/bin/env", test::joined({"-u", "ANTHROPIC_API_KEY", "-u", "OPENAI_BASE_URL",
                                      "OPENAI_API_KEY=sk-report-test", CUOPT_OPTIMIZER_BINARY},
                                     f.args({"--proposer", "llm", "--max-iterations", "2"}),
                                     {"--base-url", server.url("/v1")}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(parse_json(test::read_text(f.run() / "model-002.json"), "m")["iteration"].GetInt() == 2);
    const std::string page = test::read_text(f.run() / "report.html");
    CHECK_THAT(page, Catch::Contains("<details class=\"iteration\"><summary>Iteration 1 "));
    CHECK_THAT(page, Catch::Contains("<details class=\"iteration\"><summary>Iteration 2 "));
    CHECK_THAT(page, Catch::Contains("<pre>First &lt;try&gt; &amp; see</pre>"));
    CHECK_THAT(page, Catch::Contains("<pre>Then &lt;/script&gt;</pre>"));
    CHECK_THAT(page, Catch::Contains("rationale: tile &lt;k&gt; &amp; unroll"));
    CHECK(count(page, "<script>") == 2);
    // Against its parent (iteration 1, the best the model built on): one marker changed.
    CHECK_THAT(page, Catch::Contains("Against its parent"));
}

TEST_CASE("report names the file it cannot read and exits 11", "[integration]") {
    test::scratch_folder dir;
    auto r = test::run_optimizer({"report", (dir / "nowhere").string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("nowhere: no such run folder"));
    r = test::run_optimizer({"report", dir.path().string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains((dir / "run.json").string() + ": not found"));
    dir.write("run.json", R"({"stop_reason": "max_iterations"})");
    dir.write("history.json", "{ \"attempts\": [ ");
    r = test::run_optimizer({"report", dir.path().string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains((dir / "history.json").string()) &&
                             Catch::Contains("malformed JSON"));
    CHECK_FALSE(fs::exists(dir / "report.html"));
    r = test::run_optimizer({"report", dir.path().string(), "--gpu-hour-cost", "-1"});
    CHECK(r.exit_code == 64);
}

TEST_CASE("headless Chromium renders the report: verdict and attempts there, no script error",
          "[integration][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    recorded_run run;
    REQUIRE(run.result.exit_code == 0);
    const fs::path shot = run.f.dir / "report.png";
    const test::rendered_page p =
        test::render_headless(run.f.run() / "report.html", run.f.dir.path(), shot);
    INFO(p.console);
    REQUIRE(p.exit_code == 0);
    CHECK_THAT(p.dom, Catch::Contains("id=\"verdict\""));
    CHECK_THAT(p.dom, Catch::Contains("id=\"attempts\""));
    CHECK_THAT(p.dom, Catch::Contains("data-report-ready=\"yes\""));  // the table's script ran
    CHECK_THAT(p.dom, Catch::Contains("5 of 5 attempts shown"));
    CHECK(p.dom.find("<div id=\"script-error\"") == std::string::npos);
    CHECK(p.console.find("Uncaught") == std::string::npos);
    CHECK_FALSE(std::regex_search(p.console, std::regex(R"(CONSOLE\(\d+\).*(rror|Refused))")));
    REQUIRE(fs::exists(shot));
    CHECK(fs::file_size(shot) > 20000);
    if (const char* keep = std::getenv("CUOPT_REPORT_SCREENSHOT"); keep && *keep)
        fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}

TEST_CASE("the attempt table sorts on a header click and filters as one types, in Chromium",
          "[integration][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    recorded_run run;
    REQUIRE(run.result.exit_code == 0);
    // The page as written, plus a script that clicks "speedup" twice (descending), notes the
    // first row, then types "wrong" into the filter.
    std::string page = run.page();
    page.insert(page.rfind("</body>"), R"(<script>
var th = document.querySelectorAll('#attempts thead th')[5];
th.click(); th.click();
var first = document.querySelector('#attempts tbody tr');
document.body.setAttribute('data-first', first.cells[2].firstChild.textContent.trim() + ' ' + th.getAttribute('aria-sort'));
var f = document.getElementById('attempt-filter');
f.value = 'wrong'; f.dispatchEvent(new Event('input'));
</script>)");
    const fs::path clicked = run.f.dir.write("clicked.html", page);
    const test::rendered_page p = test::render_headless(clicked, run.f.dir.path());
    INFO(p.console);
    REQUIRE(p.exit_code == 0);
    CHECK_THAT(p.dom, Catch::Contains("data-first=\"a_fast.cu descending\""));
    CHECK_THAT(p.dom, Catch::Contains("1 of 5 attempts shown"));
    CHECK(p.dom.find("<div id=\"script-error\"") == std::string::npos);
}

TEST_CASE("the report never scrolls sideways at 1400 px: the wide latency table scrolls in its box",
          "[integration][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    recorded_run run;
    REQUIRE(run.result.exit_code == 0);
    std::string page = run.page();
    REQUIRE_THAT(page, Catch::Contains("<div class=\"scroll-x\"><table class=\"data\">"));
    // A table wider than any window here (the 11 columns with long figures reach ~1430 px).
    page.insert(page.rfind("</body>"), R"(<script>
document.querySelector('#latency table.data').style.minWidth = '2000px';
var d = document.documentElement, box = document.querySelector('#latency .scroll-x');
document.body.setAttribute('data-widths', (d.scrollWidth > d.clientWidth ? 'page-overflows' : 'page-fits') +
    ' ' + (box.scrollWidth > box.clientWidth ? 'box-scrolls' : 'box-fits'));
</script>)");
    const fs::path measured = run.f.dir.write("measured.html", page);
    for (const int width : {1400, 1024}) {
        const test::rendered_page p = test::render_headless(measured, run.f.dir.path(), {}, width);
        INFO(width << " px: " << p.console);
        REQUIRE(p.exit_code == 0);
        CHECK_THAT(p.dom, Catch::Contains("data-widths=\"page-fits box-scrolls\""));
    }
}

TEST_CASE("a script error on the page is caught and shown, so the test above would see one",
          "[integration][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    test::scratch_folder dir;
    std::string page = "<!DOCTYPE html><html><head><script>" +
                       std::string(report::error_catcher_js()) +
                       "</script></head><body><script>undefined_function();</script></body></html>";
    const fs::path file = dir.write("broken.html", page);
    const test::rendered_page p = test::render_headless(file, dir.path());
    REQUIRE(p.exit_code == 0);
    CHECK_THAT(p.dom, Catch::Contains("<div id=\"script-error\">script error:"));
    CHECK_THAT(p.console, Catch::Contains("Uncaught"));
}

TEST_CASE("the console and the report name an attempt by iteration and attempt, never as 1.0",
          "[integration]") {
    test::optimizer_fixture f;
    const auto r = test::run_optimizer(f.args({"--proposer", "autotune", "--max-iterations", "1"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::regex checking(R"(evidence: checking [^\n]+ \(iteration \d+, attempt \d+\)\n)");
    const std::regex verdict(R"(evidence: [^\n]+ \(iteration \d+, attempt \d+\): passed)");
    const std::regex number(R"(evidence: (checking )?\d+\.\d+ )");
    CHECK(std::regex_search(r.output, checking));
    CHECK(std::regex_search(r.output, verdict));
    CHECK_FALSE(std::regex_search(r.output, number));
    const std::string page = test::read_text(f.run() / "report.html");
    CHECK_FALSE(std::regex_search(page, std::regex(R"(iteration \d+\.\d+)")));
}

TEST_CASE("the report's diff shows the settings that differ where the sources are identical",
          "[integration]") {
    test::optimizer_fixture f;
    const auto r = test::run_optimizer(
        f.args({"--proposer", "autotune", "--max-iterations", "2", "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string page = test::read_text(f.run() / "report.html");
    CHECK_THAT(page, Catch::Contains("the kernels differ only in these settings: <code>-D") &&
                         !Catch::Contains("settings above"));
}

namespace {

rapidjson::Document summary_of(const recorded_run& run) {
    return test::read_checked_json(run.f.run() / "summary.json", "summary");
}

std::vector<std::string> reasons_of(const rapidjson::Document& summary) {
    std::vector<std::string> out;
    for (const auto& r : summary["verdict_reasons"].GetArray()) out.emplace_back(r.GetString());
    return out;
}

}  // namespace

TEST_CASE("a go: summary.json's verdict, the closing line and the report agree", "[integration]") {
    recorded_run run({"--fail-on-no-go"});
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);  // a go passes --fail-on-no-go
    const auto summary = summary_of(run);
    CHECK(std::string(summary["verdict"].GetString()) == "go");
    CHECK(reasons_of(summary).empty());
    CHECK_THAT(run.result.output,
               Catch::Contains("\ngo (FAKE RUN: simulated numbers): best: a_fast.cu (iteration 1, "
                               "attempt 0)"));
    CHECK_THAT(run.page(), Catch::Contains("<div class=\"verdict-word\">GO</div>"));
    // The verdict is the last line printed: stop, report and confinement come before it.
    const std::string& out = run.result.output;
    const auto verdict_at = out.rfind("\ngo (FAKE RUN");
    CHECK(out.find('\n', verdict_at + 1) == out.size() - 1);
    for (const char* before : {"\nstop: ", "\nreport: ", "\nconfinement: "})
        CHECK(out.rfind(before) < verdict_at);
}

TEST_CASE("a no_go names why on the closing lines and in summary.json, --fail-on-no-go exits 30",
          "[integration]") {
    recorded_run run({"--no-sanitizer", "--fail-on-no-go"});
    INFO(run.result.output);
    CHECK(run.result.exit_code == 30);
    const auto summary = summary_of(run);
    CHECK(std::string(summary["verdict"].GetString()) == "no_go");
    const auto reasons = reasons_of(summary);
    REQUIRE(reasons.size() == 1);
    CHECK_THAT(reasons[0], Catch::StartsWith("not run: sanitizer clean"));
    // The reason is the flag, not a missing tool.
    CHECK_THAT(reasons[0], Catch::Contains("--no-sanitizer") &&
                               !Catch::Contains("compute-sanitizer not found"));
    CHECK_THAT(run.result.output, Catch::Contains("\nno_go (FAKE RUN: simulated numbers): best: "
                                                  "a_fast.cu") &&
                                      Catch::Contains("\n  why: " + reasons[0] + "\n") &&
                                      Catch::Contains("--fail-on-no-go: the verdict is no_go"));
    CHECK_THAT(run.page(), Catch::Contains("<div class=\"verdict-word\">NO-GO</div>"));
    // Without the flag the same verdict exits 0: a verdict is data, failing on it is a choice.
    const recorded_run lenient({"--no-sanitizer"});
    CHECK(lenient.result.exit_code == 0);
    CHECK(std::string(summary_of(lenient)["verdict"].GetString()) == "no_go");
}

TEST_CASE("nothing beats the initial kernel: no_winner, and --fail-on-no-go exits 27",
          "[integration]") {
    test::optimizer_fixture f;
    f.dir.write("cands/slow.cu", f.kernel("FAKE_MS=4"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--max-iterations", "1", "--fail-on-no-go"}));
    INFO(r.output);
    CHECK(r.exit_code == 27);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["verdict"].GetString()) == "no_winner");
    CHECK(std::string(summary["verdict_reasons"][0].GetString()) ==
          "nothing beat the initial kernel");
    CHECK_THAT(r.output, Catch::Contains("\nno_winner (FAKE RUN: simulated numbers): best: "));
}

TEST_CASE("a fake run says so: its first line, the closing lines, the report and the cost sheet",
          "[integration]") {
    recorded_run run;
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    CHECK_THAT(run.result.output, Catch::StartsWith("cuda-optimizer: FAKE RUN: "));
    CHECK_THAT(run.result.output,
               Catch::Contains("\ntimer (simulated): ") && Catch::Contains("\ngpu (simulated): "));
    CHECK(summary_of(run)["simulated"].GetBool());
    const std::string page = run.page();
    CHECK(page.find("id=\"fake-run\"") < page.find("id=\"verdict\""));
    CHECK_THAT(page, Catch::Contains("<title>FAKE RUN "));
    CHECK_THAT(page, Catch::Contains("GPU busy time</th><td class=\"num\">none</td>") &&
                         Catch::Contains("Clock (simulated)") &&
                         !Catch::Contains("GPU busy time (measured)"));
    // The same folder as a real harness would have left it: no banner, measured busy time.
    write_file_atomic(
        run.f.run() / "summary.json",
        std::regex_replace(test::read_text(run.f.run() / "summary.json"),
                           std::regex(R"("simulated": true)"), R"("simulated": false)"));
    write_file_atomic(
        run.f.run() / "run.json",
        std::regex_replace(std::regex_replace(test::read_text(run.f.run() / "run.json"),
                                              std::regex(R"("simulated": true,?)"), ""),
                           std::regex(R"("source": "simulated")"), R"("source": "cupti")"));
    const fs::path real = run.f.dir / "real.html";
    REQUIRE(
        test::run_optimizer({"report", run.f.run().string(), "--out", real.string()}).exit_code ==
        0);
    const std::string again = test::read_text(real);
    CHECK_THAT(again, !Catch::Contains("id=\"fake-run\"") && !Catch::Contains("(simulated)"));
    // Busy time is never more than the wall time on the run's one GPU.
    CHECK_THAT(again, Catch::Contains("GPU busy time (measured)") ||
                          Catch::Contains("more than the wall time on 1 GPU(s)"));
}

TEST_CASE("headless Chromium shows a fake run's banner above the verdict",
          "[integration][chromium]") {
    REQUIRE_CHROMIUM_OR_SKIP();
    recorded_run run;
    REQUIRE(run.result.exit_code == 0);
    const fs::path shot = run.f.dir / "fake.png";
    const test::rendered_page p =
        test::render_headless(run.f.run() / "report.html", run.f.dir.path(), shot, 1400, 700);
    INFO(p.console);
    REQUIRE(p.exit_code == 0);
    CHECK(p.dom.find("id=\"fake-run\"") < p.dom.find("id=\"verdict\""));
    CHECK_THAT(p.dom, Catch::Contains("FAKE RUN: a stand-in harness"));
    REQUIRE(fs::exists(shot));
    if (const char* keep = std::getenv("CUOPT_FAKE_BANNER_SCREENSHOT"); keep && *keep)
        fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}

TEST_CASE(
    "report and replay read a run folder beneath it, never through a planted link, and replay "
    "writes only in a run folder of the caller's own",
    "[integration][security]") {
    recorded_run run;
    REQUIRE(run.result.exit_code == 0);
    const fs::path folder = run.f.run();
    run.f.dir.write("secret.txt", "TOPSECRET-4417\n");
    // Every attempt's kernel.cu a link to a file outside: the report shows none of it.
    for (const auto& e : fs::recursive_directory_iterator(folder))
        if (e.path().filename() == "kernel.cu") {
            fs::remove(e.path());
            fs::create_symlink(run.f.dir / "secret.txt", e.path());
        }
    test::process_result r = test::run_optimizer({"report", folder.string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(run.page().find("TOPSECRET-4417") == std::string::npos);
    // A record file that is a link: refused in one line naming it.
    fs::rename(folder / "summary.json", run.f.dir / "summary.json");
    fs::create_symlink(run.f.dir / "summary.json", folder / "summary.json");
    r = test::run_optimizer({"report", folder.string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains((folder / "summary.json").string()) && Catch::Contains("a link"));
    const std::string request = (folder / "best-case-0.json").string();
    r = test::run_optimizer({"replay", request, "--harness", CUOPT_FAKE_HARNESS_BINARY});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("summary.json"));
    fs::remove(folder / "summary.json");
    fs::rename(run.f.dir / "summary.json", folder / "summary.json");
    // RUN/replay planted as a link elsewhere: not followed.
    fs::create_directories(run.f.dir / "elsewhere");
    fs::create_directory_symlink(run.f.dir / "elsewhere", folder / "replay");
    r = test::run_optimizer({"replay", request, "--harness", CUOPT_FAKE_HARNESS_BINARY});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("not a folder (a link is not followed)"));
    CHECK(fs::is_empty(run.f.dir / "elsewhere"));
    fs::remove(folder / "replay");
    if (::geteuid() == 0) {  // another user's run folder: replay writes nothing there
        REQUIRE(test::run_program("/bin/chown", {"65534", folder.string()}).exit_code == 0);
        r = test::run_optimizer({"replay", request, "--harness", CUOPT_FAKE_HARNESS_BINARY});
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains("another user's (uid 65534)"));
        CHECK_FALSE(fs::exists(folder / "replay"));
        REQUIRE(test::run_program("/bin/chown", {"0", folder.string()}).exit_code == 0);
    }
    r = test::run_optimizer({"replay", request, "--harness", CUOPT_FAKE_HARNESS_BINARY});
    INFO(r.output);
    CHECK(r.exit_code == 0);  // its own folder, no link: it replays
}
