// cuda-optimizer suite: a folder of problems through optimize, one record each in suite.json,
// KernelBench's fast_p over them all, and a second run that skips what is done. Through the
// real binary, on fake-harness.
#include <signal.h>

#include <boost/process.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/commands/suite_command.hpp"
#include "orchestrator/commands/suite_jobs.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_pilot = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";

// A problem folder DECK/NAME with the pilot's files and its config.json.
void write_pilot(const test::scratch_folder& deck, const std::string& name) {
    for (const char* f :
         {"config.json", "reference.cu", "initial.cu", "input_cases.json", "holdout_cases.json"})
        deck.write(name + "/" + f, test::read_text(k_pilot + f));
}

// The words after `--`: one quick iteration on fake-harness, with the stand-in sanitizer.
std::vector<std::string> quick_optimize() {
    return {"--",
            "--harness",
            CUOPT_FAKE_HARNESS_BINARY,
            "--max-iterations",
            "1",
            "--significance-runs",
            "2",
            "--sanitizer",
            std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh"};
}

const rapidjson::Value& record_named(const rapidjson::Document& suite, const std::string& name) {
    for (const rapidjson::Value& r : suite["results"].GetArray())
        if (r["name"].GetString() == name) return r;
    FAIL("no record named " << name);
    return suite["results"][0];
}

suite_record go_with(double speedup) {
    suite_record r;
    r.verdict = "go";
    r.speedup = speedup;
    return r;
}

}  // namespace

TEST_CASE(
    "a suite runs each problem, records a broken one's exit code, and a second run skips "
    "the finished ones",
    "[integration]") {
    test::scratch_folder deck;
    write_pilot(deck, "alpha");
    write_pilot(deck, "beta");
    write_pilot(deck, "broken");
    deck.write("broken/input_cases.json", "{ \"cases\": [\n");  // a syntax error: exit 11
    const auto first =
        test::run_optimizer(test::joined({"suite", deck.path().string()}, quick_optimize()));
    INFO(first.output);
    REQUIRE(first.exit_code == 0);
    CHECK_THAT(first.output, Catch::Contains("suite [1/3] alpha: go ") &&
                                 Catch::Contains("suite [2/3] beta: go ") &&
                                 Catch::Contains("suite [3/3] broken: failed (exit 11): "));

    const fs::path results = deck / "suite-results";
    const rapidjson::Document suite = test::read_checked_json(results / "suite.json", "suite");
    CHECK(suite["problems"].GetInt() == 3);
    REQUIRE(suite["results"].Size() == 3);
    const rapidjson::Value& broken = record_named(suite, "broken");
    CHECK(std::string(broken["verdict"].GetString()) == "failed");
    CHECK(broken["exit_code"].GetInt() == 11);
    CHECK_THAT(broken["reason"].GetString(), Catch::Contains("input_cases.json"));
    const rapidjson::Value& alpha = record_named(suite, "alpha");
    CHECK(std::string(alpha["verdict"].GetString()) == "go");
    CHECK(alpha["speedup"].GetDouble() > 1);
    CHECK(fs::is_regular_file(fs::path(alpha["run"].GetString()) / "summary.json"));
    const double fast_0 = suite["fast_0"].GetDouble(), fast_1 = suite["fast_1"].GetDouble(),
                 fast_2 = suite["fast_2"].GetDouble();
    CHECK(fast_0 >= fast_1);
    CHECK(fast_1 >= fast_2);
    CHECK(fast_0 == Approx(2.0 / 3));  // two correct winners of three problems
    CHECK(suite["geomean_speedup"].IsNumber());
    const std::string html = test::read_text(results / "suite.html");
    CHECK_THAT(html, Catch::Contains("alpha") && Catch::Contains("beta") &&
                         Catch::Contains("broken") && Catch::Contains("fast_2"));

    const auto second =
        test::run_optimizer(test::joined({"suite", deck.path().string()}, quick_optimize()));
    INFO(second.output);
    CHECK(second.exit_code == 0);
    CHECK_THAT(second.output, Catch::Contains("alpha: already in suite.json") &&
                                  Catch::Contains("beta: already in suite.json") &&
                                  Catch::Contains("broken: already in suite.json"));
    CHECK(!fs::exists(results / "runs/alpha/run-002"));
    CHECK(!fs::exists(results / "runs/beta/run-002"));
    CHECK(test::read_checked_json(results / "suite.json", "suite")["results"].Size() == 3);
}

TEST_CASE("a source the suite imports first is a problem too: its failed import is a record",
          "[integration]") {
    test::scratch_folder deck;
    deck.write("23_Softmax.py", "def forward(x:\n");  // does not parse
    const auto r = test::run_optimizer({"suite", deck.path().string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    const rapidjson::Document suite =
        test::read_checked_json(deck / "suite-results/suite.json", "suite");
    const rapidjson::Value& softmax = record_named(suite, "23_Softmax");
    CHECK(std::string(softmax["verdict"].GetString()) == "failed");
    CHECK(softmax["exit_code"].GetInt() != 0);
    CHECK_THAT(softmax["reason"].GetString(), Catch::StartsWith("import: "));
}

TEST_CASE("a suite refuses a folder with no problem with 11, and an unknown option with 64",
          "[integration]") {
    test::scratch_folder deck;
    deck.write("notes.txt", "nothing to run\n");
    const auto empty = test::run_optimizer({"suite", deck.path().string()});
    CHECK(empty.exit_code == 11);
    CHECK_THAT(empty.output, Catch::Contains("holds no problem"));
    CHECK(test::run_optimizer({"suite", (deck / "missing").string()}).exit_code == 11);
    CHECK(test::run_optimizer({"suite", deck.path().string(), "--max-iterations", "1"}).exit_code ==
          64);
}

TEST_CASE("fast_p counts only go verdicts with a speedup strictly above p, over all problems") {
    suite_record no_go = go_with(3);
    no_go.verdict = "no_go";
    suite_record failed;
    failed.verdict = "failed";
    const suite_figures f =
        suite_figures_of({go_with(0.5), go_with(1.0), go_with(2.5), no_go, failed});
    CHECK(f.problems == 5);
    CHECK(f.fast_0 == Approx(3.0 / 5));
    CHECK(f.fast_1 == Approx(1.0 / 5));  // 1.0 is not above 1
    CHECK(f.fast_2 == Approx(1.0 / 5));
    REQUIRE(f.geomean_speedup);
    CHECK(*f.geomean_speedup == Approx(std::pow(0.5 * 1.0 * 2.5 * 3, 0.25)));
}

TEST_CASE(
    "a summary's re-measured speedup, its interval and torch.compile's ratio go into the "
    "record") {
    const suite_record r = record_from_summary(R"({
        "verdict": "go", "verdict_reasons": [], "run_dir": "/r/run-001",
        "counts": {"attempts": 14}, "initial": {"label": "pytorch-eager"},
        "best": {"geomean_ms": 2.0, "speedup_vs_initial": 2.2},
        "pytorch_compile": {"geomean_ms": 3.0},
        "evidence": {"significance": {"speedup": {"ratio": 2.31, "low": 2.2, "high": 2.4}},
                     "sol": [{"sol_score": 0.6}, {"sol_score": 0.8}]}})");
    CHECK(r.verdict == "go");
    CHECK(*r.speedup == Approx(2.31));
    CHECK(*r.speedup_low == Approx(2.2));
    CHECK(*r.speedup_high == Approx(2.4));
    CHECK(*r.speedup_vs_compile == Approx(1.5));
    CHECK(*r.sol_score == Approx(0.7));
    CHECK(*r.attempts == 14);
    CHECK_THAT(describe_record(r), Catch::StartsWith("go 2.31x over eager (compile 1.50x), 14 "
                                                     "attempts, "));
    CHECK(record_from_summary("not json").verdict == "failed");
}

TEST_CASE(
    "suite --submit queues each problem on the daemon, collects each as it ends, and "
    "never submits twice",
    "[integration][daemon]") {
    namespace bp = boost::process;
    test::scratch_folder deck;
    write_pilot(deck, "alpha");
    write_pilot(deck, "beta");
    write_pilot(deck, "broken");
    deck.write("broken/input_cases.json", "{ \"cases\": [\n");  // submit's check refuses it
    const fs::path spool = deck / "spool";
    const std::vector<std::string> job_args = {"--",
                                               "--harness",
                                               CUOPT_FAKE_HARNESS_BINARY,
                                               "--max-iterations",
                                               "1",
                                               "--significance-runs",
                                               "2"};
    bp::child serve(
        CUOPT_OPTIMIZER_BINARY,
        bp::args({"serve", "--spool", spool.string(), "--harness", CUOPT_FAKE_HARNESS_BINARY,
                  "--sanitizer", std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh",
                  "--poll", "0.05"}),
        bp::std_out > (deck / "serve.log").string(), bp::std_err > (deck / "serve.err").string(),
        bp::std_in < bp::null);
    for (int i = 0; i < 200 && !fs::exists(spool / "jobs"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto r = test::run_optimizer(test::joined(
        {"suite", deck.path().string(), "--submit", spool.string(), "--poll", "0.2"}, job_args));
    INFO(r.output << test::read_text(deck / "serve.err"));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("suite [1/3] alpha: queued as job-") &&
                             Catch::Contains("suite [2/3] beta: queued as job-") &&
                             Catch::Contains("suite [3/3] broken: failed") &&
                             Catch::Contains("suite [1/3] alpha: job-"));
    const fs::path results = deck / "suite-results";
    const rapidjson::Document suite = test::read_checked_json(results / "suite.json", "suite");
    REQUIRE(suite["results"].Size() == 3);
    CHECK(suite["pending"].ObjectEmpty());
    const rapidjson::Value& alpha = record_named(suite, "alpha");
    CHECK(std::string(alpha["verdict"].GetString()) == "go");
    CHECK(alpha["speedup"].GetDouble() > 1);
    CHECK(alpha["speedup_low"].IsNumber());  // the summary came back through status
    CHECK(std::string(alpha["job"].GetString()).rfind("job-", 0) == 0);
    CHECK(fs::is_regular_file(fs::path(alpha["run"].GetString()) / "summary.json"));
    CHECK_THAT(record_named(suite, "broken")["reason"].GetString(), Catch::Contains("submit: "));
    const auto again = test::run_optimizer(test::joined(
        {"suite", deck.path().string(), "--submit", spool.string(), "--poll", "0.2"}, job_args));
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.output, Catch::Contains("alpha: already in suite.json"));
    CHECK(again.output.find("queued as") == std::string::npos);
    ::kill(serve.id(), SIGTERM);
    serve.wait();
}

TEST_CASE("a job's status answer becomes a record: the summary's figures, else the daemon's own") {
    CHECK_FALSE(
        record_from_status(R"({"status": {"id": "job-000001", "state": "running"}})", "/s"));
    auto r = record_from_status(
        R"({"status": {"id": "job-000002", "state": "done", "exit_code": 0, "verdict": "go",
            "started": "2026-12-06T10:00:00Z", "finished": "2026-12-06T10:01:30Z",
            "run_dir": "results/run-001", "best_speedup": 2.0, "attempts": 5},
            "summary": {"verdict": "go", "verdict_reasons": [], "counts": {"attempts": 5},
                        "best": {"geomean_ms": 1.0, "speedup_vs_initial": 2.5}}})",
        "/s");
    REQUIRE(r);
    CHECK(r->verdict == "go");
    CHECK(*r->speedup == Approx(2.5));
    CHECK(r->wall_s == Approx(90));
    CHECK(r->run == "/s/jobs/job-000002/results/run-001");
    CHECK(r->job == "job-000002");
    r = record_from_status(
        R"({"status": {"id": "job-000003", "state": "failed", "exit_code": 21,
            "reason": "the initial kernel fails", "verdict": ""}})",
        "/s");
    REQUIRE(r);
    CHECK(r->verdict == "failed");
    CHECK(*r->exit_code == 21);
    CHECK(r->reason == "failed: the initial kernel fails");
    CHECK_THROWS_AS(record_from_status("[]", "/s"), suite_job_error);
}

TEST_CASE("a suite with jobs pending on a spool is collected from that spool only",
          "[integration]") {
    test::scratch_folder deck;
    write_pilot(deck, "alpha");
    deck.write("suite-results/suite.json", R"({"schema_version": 1,
        "tool": {"name": "cuda-optimizer", "version": "0", "commit": "0"},
        "dir": "/d", "results_dir": "/r", "optimize_args": [], "problems": 1, "finished": 0,
        "fast_0": 0, "fast_1": 0, "fast_2": 0, "geomean_speedup": null, "results": [],
        "spool": "/srv/spool-a", "pending": {"alpha": "job-000009"}})");
    auto r = test::run_optimizer({"suite", deck.path().string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("job(s) queued on /srv/spool-a: collect them with "
                                         "--submit /srv/spool-a"));
    r = test::run_optimizer({"suite", deck.path().string(), "--submit", (deck / "other").string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("pending jobs are in /srv/spool-a"));
    CHECK(!fs::exists(deck / "suite-results/runs"));  // nothing ran
}
