// The daemon's spool and intake, in process: locking a job's files, ids, states, cancellation,
// progress, and what a submission may not do. (The daemon itself: daemon_integration_test.)
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "orchestrator/service/job_finaliser.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/job_queue.hpp"
#include "orchestrator/service/spool.hpp"
#include "orchestrator/service/submit_client.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_example = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";

// A copy of examples/matmul with `config` as its config.json.
fs::path example_copy(const test::scratch_folder& dir, const std::string& config) {
    for (const char* f : {"reference.cu", "initial.cu", "input_cases.json", "holdout_cases.json"})
        dir.write(std::string("job/") + f, test::read_text(k_example + f));
    return dir.write("job/config.json", config);
}

const char* k_config = R"({"reference": "reference.cu", "initial_kernel": "initial.cu",
  "input_cases": "input_cases.json", "holdout_cases": "holdout_cases.json",
  "results_dir": "../../results", "max_iterations": 2})";

bool writable_by_anyone(const fs::path& p) {
    const fs::perms x = fs::status(p).permissions();
    return (x & (fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write)) !=
           fs::perms::none;
}

// A committed job whose config.json is `config`, as the daemon's intake leaves it.
std::string commit_job(const spool& s, const std::string& config) {
    const fs::path stage = s.new_staging();
    write_file_atomic(stage / "files" / "config.json", config);
    job_spec spec;
    spec.config = "config.json";
    return s.commit(stage, spec);
}

// The job as the finaliser leaves it after its optimize exited with `code`, its run folder
// holding `summary` as summary.json ("" for none).
job_status finalised(const spool& s, const std::string& summary, int code) {
    const std::string id = commit_job(s, "{}");
    const fs::path run = s.job_dir(id) / "results" / "run-001";
    fs::create_directories(run);
    if (!summary.empty()) write_file_atomic(run / "summary.json", summary);
    job_queue queue(s, {0}, true);
    job_finaliser finaliser(queue, 3600, [](const fs::path&) {});
    job_exit ex;
    ex.exit_code = code;
    finaliser.ended(id, active_job{}, ex, false);
    return s.read_status(id);
}

const char* k_best = R"("best": {"label": "tile-32x8", "speedup_vs_initial": 1.4791})";

}  // namespace

TEST_CASE("a staged job holds exactly the files its config names, read-only, with their sha256",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path config = example_copy(dir, k_config);
    dir.write("job/unrelated.txt", "not named by the job");
    const spool s(dir / "spool");
    submission sub;
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    sub.config = config;
    sub.args = {"--max-iterations", "1"};
    job_spec spec;
    const fs::path stage = stage_submission(s, sub, spec);
    const std::string id = s.commit(stage, spec);
    CHECK(id == "job-000001");
    CHECK_FALSE(fs::exists(stage));
    const fs::path job = s.job_dir(id);
    const job_spec read = s.read_spec(id);
    CHECK(read.config == "config.json");
    CHECK(read.args == std::vector<std::string>{"--max-iterations", "1"});
    std::vector<std::string> names;
    for (const locked_file& f : read.files) {
        names.push_back(f.path);
        CHECK(f.sha256 == sha256_file_hex(dir / "job" / f.path));
        CHECK_FALSE(writable_by_anyone(job / "files" / f.path));
    }
    CHECK(names == std::vector<std::string>{"config.json", "holdout_cases.json", "initial.cu",
                                            "input_cases.json", "reference.cu"});
    CHECK_FALSE(writable_by_anyone(job / "files"));
    CHECK(s.read_status(id).state == job_state::queued);
    CHECK(s.verify_locked(id).empty());
    // The original changing after submit changes nothing; the locked copy changing is caught.
    dir.write("job/initial.cu", "// changed\n");
    CHECK(s.verify_locked(id).empty());
    fs::permissions(job / "files" / "initial.cu", fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(job / "files" / "initial.cu", std::ios::app) << "// tampered\n";
    CHECK(s.verify_locked(id) ==
          "files/initial.cu changed after it was submitted (sha256 differs)");
    // The next job gets the next number.
    job_spec spec2;
    const fs::path stage2 = stage_submission(s, sub, spec2);
    CHECK(s.commit(stage2, spec2) == "job-000002");
}

TEST_CASE("files outside the config's folder keep their layout, an absolute path is refused",
          "[daemon]") {
    test::scratch_folder dir;
    example_copy(dir, k_config);
    const fs::path config =
        dir.write("job/conf/config.json",
                  R"({"reference": "../reference.cu", "initial_kernel": "../initial.cu",
            "input_cases": "../input_cases.json"})");
    const spool s(dir / "spool");
    submission sub;
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    sub.config = config;
    job_spec spec;
    const fs::path stage = stage_submission(s, sub, spec);
    CHECK(spec.config == "conf/config.json");
    CHECK(fs::is_regular_file(stage / "files" / "reference.cu"));

    const fs::path absolute =
        dir.write("job/abs.json",
                  std::string(R"({"reference": ")") + (dir / "job/reference.cu").string() +
                      R"(", "initial_kernel": "initial.cu", "input_cases": "input_cases.json"})");
    sub.config = absolute;
    // Absolute paths inside the job's own folder are copied like any other; one the copy would
    // still reach is refused (here: the config sits beside the files it names absolutely, so
    // the copy's config would name the original).
    try {
        job_spec spec2;
        stage_submission(s, sub, spec2);
        FAIL("an absolute path was accepted");
    } catch (const intake_error& e) {
        CHECK(std::string(e.what()).find("by an absolute path") != std::string::npos);
    }
    // The first stage is still there (never committed); the refused one was removed.
    std::size_t stages = 0;
    for (const auto& e : fs::directory_iterator(s.staging_dir())) stages += e.is_directory();
    CHECK(stages == 1);
}

TEST_CASE("a submission may not name programs, the daemon's flags, or unknown flags",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const auto refusal = [&](const std::string& config, std::vector<std::string> args) {
        submission sub;
        sub.optimizer = CUOPT_OPTIMIZER_BINARY;
        sub.config = example_copy(dir, config);
        sub.args = std::move(args);
        try {
            job_spec spec;
            stage_submission(s, sub, spec);
        } catch (const intake_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(refusal(R"({"harness": "/bin/sh", "reference": "reference.cu"})", {})
              .find("field harness: a job may not name the programs that run it") !=
          std::string::npos);
    CHECK(refusal(R"({"sanitizer": "/bin/sh"})", {}).find("field sanitizer") != std::string::npos);
    CHECK(refusal(R"({"base_url": "https://elsewhere.example"})", {})
              .find("field base_url: a job may not name the programs that run it, where the "
                    "model's key is sent") != std::string::npos);
    CHECK(refusal(k_config, {"--base-url", "https://elsewhere.example"}).find("--base-url") !=
          std::string::npos);
    for (const char* flag : {"--results-dir", "--harness", "--devices", "--resume", "--reference"})
        CHECK(refusal(k_config, {flag, "x"}).find(std::string(flag) + " is set by the daemon") !=
              std::string::npos);
    // Whether a job's kernels may run unconfined, or count as a job's, is the daemon's to say.
    for (const char* flag : {"--allow-unconfined", "--daemon-job", "--daemon-job=false"})
        CHECK(refusal(k_config, {flag}).find(" is set by the daemon") != std::string::npos);
    CHECK(refusal(R"({"allow_unconfined": true})", {})
              .find("field allow_unconfined: a job may not name") != std::string::npos);
    CHECK(refusal(R"({"daemon_job": false})", {}).find("field daemon_job") != std::string::npos);
    CHECK(refusal(k_config, {"--results-dir=x"}).find("--results-dir") != std::string::npos);
    CHECK(refusal(k_config, {"--no-such-flag"}).find("no option a job may set") !=
          std::string::npos);
    // An allow-list: the hidden flags (a job that lists files instead of running would end
    // "done") and the documentation tool (its network) are the daemon's, as flags and as keys.
    for (const char* flag : {"--list-files", "--files-within", "--nvidia-research", "--docs-hosts"})
        CHECK(refusal(k_config, {flag, "x"}).find(std::string(flag) + " is set by the daemon") !=
              std::string::npos);
    for (const char* key : {"list_files", "files-within", "nvidia_research", "no_such_key"})
        CHECK(refusal("{\"" + std::string(key) + "\": true}", {})
                  .find(std::string("field ") + key + ": a job may not name") != std::string::npos);
    CHECK(refusal(k_config, {"--seed", "3", "--significance-runs=5", "--no-evidence"}).empty());
    // Config keys in either case, as apply_json_options reads them: "base-url" is --base-url.
    for (const char* key : {"base-url", "allow-unconfined", "docs-cache", "docs_hosts",
                            "use-nsight", "max_model_calls", "max-tokens-total", "temperature"})
        CHECK(refusal("{\"" + std::string(key) + "\": 1}", {})
                  .find(std::string("field ") + key + ": a job may not name") != std::string::npos);
    // How much of the daemon's model key a job spends, and where, is serve's to say.
    for (const char* flag :
         {"--reasoning-effort", "--max-model-calls", "--max-tokens-total", "--max-output-tokens",
          "--docs-pages", "--use-nsight", "--temperature", "--base_url"})
        CHECK(refusal(k_config, {flag, "1"}).find(std::string(flag) + " is set by the daemon") !=
              std::string::npos);
    CHECK(refusal(k_config, {"--max-iterations", "1"}).empty());
    submission none;
    none.optimizer = CUOPT_OPTIMIZER_BINARY;
    none.config = dir / "missing.json";
    job_spec spec;
    CHECK_THROWS_WITH(stage_submission(s, none, spec), Catch::Contains("no such file"));
}

TEST_CASE("confine_to refuses a file the config names outside the given folder, before copying",
          "[integration][daemon]") {
    test::scratch_folder dir;
    example_copy(dir, k_config);
    dir.write("secret.cu", "host file");
    const spool s(dir / "spool");
    submission sub;
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    sub.config = dir.write("job/evil.json", R"({"reference": "../secret.cu",
        "initial_kernel": "initial.cu", "input_cases": "input_cases.json"})");
    sub.confine_to = dir / "job";
    job_spec spec;
    CHECK_THROWS_WITH(stage_submission(s, sub, spec),
                      Catch::Contains("names secret.cu outside the files it was given"));
    CHECK(fs::is_empty(s.staging_dir()));
    fs::create_symlink(dir / "secret.cu", dir / "job" / "link.cu");  // a symlink out, too
    sub.config = dir.write("job/link.json", R"({"reference": "link.cu",
        "initial_kernel": "initial.cu", "input_cases": "input_cases.json"})");
    CHECK_THROWS_WITH(stage_submission(s, sub, spec), Catch::Contains("outside the files"));
    // Nothing outside is read first: /dev/zero as the manifest would never end.
    sub.config = dir.write("job/zero.json", R"({"reference": "reference.cu",
        "initial_kernel": "initial.cu", "input_cases": "/dev/zero"})");
    CHECK_THROWS_WITH(stage_submission(s, sub, spec), Catch::Contains("outside the files"));
    REQUIRE(::mkfifo((dir / "job" / "fifo.json").c_str(), 0600) == 0);
    sub.config = dir.write("job/fifo-config.json", R"({"reference": "reference.cu",
        "initial_kernel": "initial.cu", "input_cases": "fifo.json"})");
    CHECK_THROWS_WITH(stage_submission(s, sub, spec),
                      Catch::Contains("fifo.json is not a regular file"));
    sub.config = dir / "job" / "config.json";
    CHECK_NOTHROW(stage_submission(s, sub, spec));
}

TEST_CASE("upload names: relative paths inside the job only", "[daemon]") {
    for (const char* ok : {"config.json", "kernels/initial.cu", "a.b/c-d_e.cu"})
        CHECK(upload_name_problem(ok).empty());
    for (const char* bad :
         {"", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", "a/", "a\\b", "c:x", "a\nb"})
        CHECK_FALSE(upload_name_problem(bad).empty());
    CHECK_FALSE(upload_name_problem(std::string(201, 'a')).empty());
}

TEST_CASE("states, cancellation and progress go through the spool's files", "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const fs::path stage = s.new_staging();
    dir.write("spool/staging/" + stage.filename().string() + "/files/config.json", "{}");
    job_spec spec;
    spec.config = "config.json";
    spec.priority = 3;
    const std::string id = s.commit(stage, spec);
    CHECK(s.read_spec(id).priority == 3);
    CHECK(s.request_cancel(id));
    CHECK(s.cancel_requested(id));
    job_status st = s.read_status(id);
    st.state = job_state::done;
    s.write_status(st);
    CHECK_FALSE(s.request_cancel(id));  // already final
    CHECK_FALSE(s.request_cancel("job-999999"));
    CHECK_THROWS_WITH(s.job_dir("../etc"), Catch::Contains("not a job id"));

    dir.write("run/history.json", R"({"attempts": [
        {"iteration": 0, "became_best": true, "speedup_vs_initial": 1.0},
        {"iteration": 1, "became_best": true, "speedup_vs_initial": 1.8},
        {"iteration": 2, "became_best": false, "speedup_vs_initial": 2.5}]})");
    job_status p;
    p.run_dir = "run";
    read_progress(dir.path(), p);
    CHECK(p.attempts == 3);
    CHECK(p.iteration == 2);
    CHECK(p.best_speedup == Approx(1.8));
    const std::string all = jobs_json(s);
    CHECK(all.find("\"id\":\"" + id + "\"") != std::string::npos);
    CHECK(all.find("\"state\":\"done\"") != std::string::npos);
    CHECK_THROWS(spool(dir / "elsewhere", false));
}

TEST_CASE(
    "a finished job's line takes summary.json's verdict: go with the winner's speedup, no_go "
    "with its reasons even when optimize exited 0, no_winner",
    "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const job_status go =
        finalised(s, std::string(R"({"verdict": "go", "verdict_reasons": [], )") + k_best + "}", 0);
    CHECK(go.state == job_state::done);
    CHECK(go.verdict == "go");
    CHECK(go.reason == "go: winner 1.48x (tile-32x8)");
    const job_status no_go = finalised(
        s,
        std::string(R"({"verdict": "no_go", "verdict_reasons": ["compute-sanitizer not run",
            "the holdout cases were not run"], )") +
            k_best + "}",
        0);
    CHECK(no_go.state == job_state::done);
    CHECK(no_go.verdict == "no_go");
    CHECK(no_go.reason == "no_go: compute-sanitizer not run; the holdout cases were not run");
    CHECK(
        finalised(s, R"({"verdict": "no_go", "verdict_reasons": ["x"]})", to_int(exit_code::no_go))
            .reason == "no_go: x");
    const job_status none =
        finalised(s, R"({"verdict": "no_winner", "verdict_reasons": [], "best": null})",
                  to_int(exit_code::no_winner));
    CHECK(none.verdict == "no_winner");
    CHECK(none.reason == "no_winner");
    CHECK(jobs_json(s).find("\"verdict\":\"no_winner\"") != std::string::npos);
}

TEST_CASE(
    "a summary.json without a verdict (an older run) keeps the exit code's line, and one reached "
    "through a link is not read",
    "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const job_status old = finalised(s, std::string("{") + k_best + "}", 0);
    CHECK(old.reason ==
          "a winner passed the evidence gates: tile-32x8, 1.48x over the initial "
          "kernel");
    CHECK(old.verdict.empty());
    CHECK(finalised(s, "", to_int(exit_code::no_winner)).reason ==
          "no candidate passed the evidence gates");
    CHECK(finalised(s, "", to_int(exit_code::no_go)).verdict == "no_go");
    // A summary planted as a link to another file: the job's own process could make one.
    const std::string id = commit_job(s, "{}");
    const fs::path run = s.job_dir(id) / "results" / "run-001";
    fs::create_directories(run);
    dir.write("elsewhere.json", R"({"verdict": "go", "best": {"speedup_vs_initial": 99.0}})");
    fs::create_symlink(dir / "elsewhere.json", run / "summary.json");
    CHECK_FALSE(verdict_of(s.job_dir(id), "results/run-001"));
}

TEST_CASE(
    "progress is read from the job's own files without following links: history.json for the "
    "iteration, run.json for the iterations of the run",
    "[daemon]") {
    test::scratch_folder dir;
    dir.write("job/results/run-001/history.json", R"({"attempts": [
        {"iteration": 0, "became_best": true, "speedup_vs_initial": 1.0},
        {"iteration": 3, "became_best": true, "speedup_vs_initial": 1.5}]})");
    dir.write("job/results/run-001/run.json", R"({"settings": {"max_iterations": 7}})");
    job_status st;
    st.run_dir = "results/run-001";
    read_progress(dir / "job", st);
    CHECK(st.iteration == 3);
    CHECK(st.max_iterations == 7);
    CHECK(st.attempts == 2);
    CHECK(st.best_speedup == Approx(1.5));
    // The same files behind a linked run folder, or linked themselves: not read.
    fs::create_directory_symlink(dir / "job" / "results" / "run-001",
                                 dir / "job" / "results" / "run-002");
    dir.write("job/results/run-003/.keep", "");
    fs::create_symlink(dir / "job" / "results" / "run-001" / "history.json",
                       dir / "job" / "results" / "run-003" / "history.json");
    for (const char* run : {"results/run-002", "results/run-003", "results/../results/run-001"}) {
        INFO(run);
        job_status linked;
        linked.run_dir = run;
        read_progress(dir / "job", linked);
        CHECK(linked.attempts == 0);
        CHECK(linked.max_iterations == 0);
    }
    CHECK(run_folder_of(dir / "job") == dir / "job" / "results" / "run-003");  // not the link
    dir.write("job/results/run-001/history.json", "{\"attempts\": [");         // being written
    job_status partial = st;
    read_progress(dir / "job", partial);
    CHECK(partial.attempts == 2);
}

TEST_CASE(
    "a job's problem is its config's description on one line, else its kernel's name, else the "
    "config's name",
    "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const std::string described =
        commit_job(s, R"J({"description": "  Row-major\n\tmatmul <b>fp32</b>\u001b[31m  ",
               "signature": "void k()"})J");
    CHECK(problem_of(s, s.read_spec(described)) == "Row-major matmul <b>fp32</b> [31m");
    const std::string named =
        commit_job(s, R"J({"signature": "void matmul_f32(const float* a, int n)"})J");
    CHECK(problem_of(s, s.read_spec(named)) == "matmul_f32");
    CHECK(problem_of(s, s.read_spec(commit_job(s, "not json"))) == "config.json");
    const std::string long_one =
        commit_job(s, "{\"description\": \"" + std::string(150, 'a') + "\u00e9\u00e9\u00e9\"}");
    const std::string cut = problem_of(s, s.read_spec(long_one), 154);
    CHECK(cut == std::string(150, 'a') + "...");  // never half of a UTF-8 character
    CHECK(one_line("a\xc3\xa9"
                   "bcd",
                   5) == "a...");
}

TEST_CASE(
    "status JOB prints the job itself: problem, progress, outcome, run folder and report, the "
    "queue a line a job with its problem and progress",
    "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const std::string id =
        commit_job(s, R"({"description": "Row-major fp32 matmul", "max_iterations": 7})");
    job_status st = s.read_status(id);
    st.state = job_state::done;
    st.reason = "go: winner 1.48x (tile-32x8)";
    st.iteration = 3;
    st.max_iterations = 7;
    st.attempts = 9;
    st.best_speedup = 1.48;
    st.starts = 1;
    st.run_dir = "results/run-001";
    s.write_status(st);
    write_file_atomic(s.job_dir(id) / "results" / "run-001" / "report.html", "<html></html>\n");
    const test::process_result one =
        test::run_optimizer({"status", "--spool", (dir / "spool").string(), id});
    INFO(one.output);
    CHECK(one.exit_code == 0);
    CHECK_THAT(one.output,
               Catch::StartsWith(id + ": done\n") &&
                   Catch::Contains("problem:    Row-major fp32 matmul\n") &&
                   Catch::Contains("progress:   iteration 3 of 7, 9 attempts, best 1.48x\n") &&
                   Catch::Contains("outcome:    go: winner 1.48x (tile-32x8)\n") &&
                   Catch::Contains("run folder: " + (s.job_dir(id) / "results/run-001").string()) &&
                   Catch::Contains("report:     " +
                                   (s.job_dir(id) / "results/run-001/report.html").string()));
    CHECK_THAT(one.output, !Catch::Contains("PROGRESS"));  // not the queue's line
    const test::process_result all =
        test::run_optimizer({"status", "--spool", (dir / "spool").string()});
    CHECK_THAT(all.output, Catch::Contains("PROBLEM") && Catch::Contains("it 3/7, 9 att") &&
                               Catch::Contains("Row-major fp32 matmul") &&
                               Catch::Contains(" done "));
}

TEST_CASE("a job cancelled while queued names no run folder and no report, in status and the JSON",
          "[daemon]") {
    test::scratch_folder dir;
    const spool s(dir / "spool");
    const std::string id = commit_job(s, R"({"description": "never ran"})");
    job_status st = s.read_status(id);
    st.state = job_state::cancelled;
    st.reason = cancelled_unstarted_reason(st);
    s.write_status(st);
    CHECK(st.reason == "cancelled while queued; it never started");
    const std::string text = job_text(job_json(s, id), s.root());
    INFO(text);
    CHECK_THAT(text, Catch::Contains("reason:     cancelled while queued; it never started") &&
                         Catch::Contains("run folder: none (it never started)") &&
                         Catch::Contains("report:     none (it never ran)") &&
                         !Catch::Contains("report.html"));
    CHECK(job_json(s, id).find("\"has_report\":false") != std::string::npos);
    CHECK(jobs_json(s).find("\"has_report\":false") != std::string::npos);
    st.starts = 1;  // it had run, and waited to resume when cancelled
    CHECK(cancelled_unstarted_reason(st).rfind("cancelled while waiting to resume", 0) == 0);
}
