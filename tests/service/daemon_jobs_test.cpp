// What the daemon trusts of a job at every start: job.json's flags again, only the run folder
// it started itself, no model settings from the job folder, one job's broken folder failing
// that job alone, and serve's --job-time-limit. The real `serve` with the fake harness.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "loopback_http_server.hpp"
#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/job_limits.hpp"
#include "orchestrator/service/launch_record.hpp"
#include "orchestrator/service/spool.hpp"
#include "serve_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The pilot with a config naming its files, queued straight into the spool (as the daemon's
// own intake stores it).
struct queued_jobs : test::job_files {
    test::scratch_folder dir;
    spool jobs{dir / "spool"};
    explicit queued_jobs(const std::string& settings = test::k_quick_job, int timeout_s = 60)
        : job_files(settings, timeout_s) {}
    std::string queue(std::vector<std::string> args = {}, const fs::path& other_config = {}) {
        submission sub;
        sub.config = other_config.empty() ? config : other_config;
        sub.optimizer = CUOPT_OPTIMIZER_BINARY;
        sub.args = std::move(args);
        job_spec spec;
        const fs::path stage = stage_submission(jobs, sub, spec);
        return jobs.commit(stage, spec);
    }
    // A program that leaves a marker file when it runs, then acts as the fake harness.
    fs::path evil_program() const {
        const fs::path evil =
            dir.write("evil.sh", "#!/bin/sh\ntouch '" + (dir / "evil-ran").string() + "'\nexec '" +
                                     test::k_fake_harness + "' \"$@\"\n");
        fs::permissions(evil, fs::perms::owner_all);
        return evil;
    }
    bool evil_ran() const { return fs::exists(dir / "evil-ran"); }
    // `serve ... --devices 0 --stop-when-idle 0.5`, its exit code; stdout and stderr in
    // serve.out(.err).
    int serve(const std::vector<std::string>& extra = {}) const {
        test::serve_process serve(
            dir / "spool", dir / "serve.out",
            test::joined({"--devices", "0", "--stop-when-idle", "0.5"}, extra));
        return serve.wait(120s);
    }
    std::string serve_err() const { return test::read_text(dir / "serve.out.err"); }
};

// job.json rewritten with `args` appended: what a submitter with write access could do.
void append_args(const fs::path& job, const std::vector<std::string>& args) {
    rapidjson::Document d = parse_json(read_text_file(job / "job.json"), "job.json");
    for (const std::string& a : args)
        d["args"].PushBack(json_text(a, d.GetAllocator()), d.GetAllocator());
    fs::permissions(job / "job.json", fs::perms::owner_read | fs::perms::owner_write);
    std::ofstream(job / "job.json", std::ios::trunc) << to_pretty_json(d);
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE(
    "a job whose job.json gains --harness after submit fails at start with the deny-list "
    "reason, and that program never runs",
    "[integration][daemon]") {
    queued_jobs q;
    const std::string id = q.queue();
    append_args(q.jobs.job_dir(id), {"--harness", q.evil_program().string()});
    CHECK(q.serve() == 0);
    const job_status st = q.jobs.read_status(id);
    INFO(st.reason);
    CHECK(st.state == job_state::failed);
    CHECK(st.reason == daemon_flag_problem({"--harness"}));
    CHECK(st.starts == 0);
    CHECK_FALSE(q.evil_ran());
    CHECK_FALSE(fs::exists(q.jobs.job_dir(id) / "results"));
}

TEST_CASE(
    "a run.json planted in a queued job is never resumed: the job fails with one line and "
    "the harness it names never runs",
    "[integration][daemon]") {
    queued_jobs q;
    const std::string planted = q.queue();
    const std::string honest = q.queue();
    const fs::path job = q.jobs.job_dir(planted);
    // The command line the daemon would give, but another harness: resume would run it.
    rapidjson::Document run(rapidjson::kObjectType);
    auto& a = run.GetAllocator();
    rapidjson::Value cmd(rapidjson::kArrayType);
    for (const std::string& w :
         {std::string(CUOPT_OPTIMIZER_BINARY), std::string("optimize"), std::string("--config"),
          std::string("files/config.json"), std::string("--results-dir"), std::string("results"),
          std::string("--harness"), q.evil_program().string(), std::string("--devices"),
          std::string("0"), std::string("--daemon-job")})
        cmd.PushBack(json_text(w, a), a);
    run.AddMember("command_line", cmd, a);
    run.AddMember("working_directory", json_text(fs::canonical(job).string(), a), a);
    q.dir.write("planted.json", to_pretty_json(run));
    fs::create_directories(job / "results" / "run-001");
    fs::copy_file(q.dir / "planted.json", job / "results" / "run-001" / "run.json");
    CHECK(q.serve() == 0);
    const job_status st = q.jobs.read_status(planted);
    CHECK(st.state == job_state::failed);
    CHECK(st.reason == "results/run-001/run.json is not the run this daemon started");
    CHECK_FALSE(q.evil_ran());
    // The queue went on: the next job ran, and its run.json is the command line recorded.
    CHECK(q.jobs.read_status(honest).state == job_state::done);
    const fs::path honest_run = q.jobs.job_dir(honest) / "results" / "run-001";
    CHECK(run_trust_problem(q.jobs.job_dir(honest), honest_run, "results/run-001").empty());
    CHECK_FALSE(run_trust_problem(q.jobs.job_dir(honest), honest_run, "results/run-002").empty());
}

TEST_CASE("a gate.json planted in a queued gate job is not trusted: the gate runs afresh",
          "[integration][daemon]") {
    queued_jobs q;
    const test::process_result accepted =
        test::run_optimizer(q.pilot.args({"--max-iterations", "1", "--no-evidence"}));
    REQUIRE(accepted.exit_code == 0);
    submission sub;
    sub.kind = "gate";
    sub.accepted = q.pilot.run();
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    job_spec spec;
    const fs::path stage = stage_submission(q.jobs, sub, spec);
    const std::string id = q.jobs.commit(stage, spec);
    const fs::path gate = q.jobs.job_dir(id) / "results" / "gate";
    q.dir.write("planted-gate.json", R"({"verdict": "fail"})");
    fs::create_directories(gate);
    fs::copy_file(q.dir / "planted-gate.json", gate / "gate.json");
    CHECK(q.serve() == 0);
    const job_status st = q.jobs.read_status(id);
    INFO(st.reason);
    CHECK(st.state == job_state::done);
    CHECK(st.reason == "the gate passed");
    CHECK(st.starts == 1);
    CHECK(gate_started_by_daemon(q.jobs.job_dir(id)));
}

TEST_CASE(
    "a run folder is trusted only when run.json holds the command line and folder the "
    "daemon recorded before starting",
    "[daemon]") {
    test::scratch_folder dir;
    const fs::path job = dir / "job";
    const fs::path run = job / "results" / "run-001";
    fs::create_directories(run);
    const std::vector<std::string> argv = {"/bin/cuda-optimizer", "optimize", "--config",
                                           "files/config.json", "--daemon-job"};
    const std::string refusal = "results/run-001/run.json is not the run this daemon started";
    CHECK(run_trust_problem(job, run, "").empty());  // no run.json: nothing to resume from
    const auto write_run = [&](const std::vector<std::string>& words, const fs::path& cwd) {
        std::string json = "{\"command_line\": [";
        for (std::size_t i = 0; i < words.size(); ++i)
            json += (i ? ", \"" : "\"") + words[i] + "\"";
        json += "], \"working_directory\": \"" + cwd.string() + "\"}";
        fs::remove(run / "run.json");
        write_file_durable(run / "run.json", json);
    };
    write_run(argv, fs::canonical(job));
    CHECK(run_trust_problem(job, run, "") == refusal);  // never recorded
    write_launch_record(job, "optimize", argv);
    CHECK(run_trust_problem(job, run, "").empty());
    CHECK(run_trust_problem(job, run, "results/run-001").empty());
    CHECK(run_trust_problem(job, run, "results/run-002") == refusal);
    std::vector<std::string> more = argv;
    more.insert(more.end(), {"--harness", "evil.sh"});
    write_run(more, fs::canonical(job));
    CHECK(run_trust_problem(job, run, "") == refusal);
    write_run(argv, dir.path());  // resume would read files/ from another folder
    CHECK(run_trust_problem(job, run, "") == refusal);
    write_run(argv, fs::canonical(job));
    fs::rename(run / "run.json", dir / "elsewhere.json");
    fs::create_symlink(dir / "elsewhere.json", run / "run.json");
    CHECK(run_trust_problem(job, run, "") == refusal);
    CHECK_FALSE(gate_started_by_daemon(job));
    write_launch_record(job, "gate", argv);
    CHECK(gate_started_by_daemon(job));
}

TEST_CASE("a daemon job never reads a .env in its folder: the model settings are serve's own",
          "[integration][daemon]") {
    test::loopback_http_server server({{200, {}, "{}"}});
    const test::scoped_env no_key("OPENAI_API_KEY", nullptr);
    const test::scoped_env no_url("OPENAI_BASE_URL", nullptr);
    const test::scoped_env no_anthropic("ANTHROPIC_API_KEY", nullptr);
    const test::scoped_env no_anthropic_url("ANTHROPIC_BASE_URL", nullptr);
    queued_jobs q;
    const std::string id = q.queue();
    q.dir.write("dot-env", "OPENAI_BASE_URL=" + server.url("/v1") +
                               "\nOPENAI_API_KEY=sk-planted\nCUDA_OPTIMIZER_MODEL=planted\n");
    fs::copy_file(q.dir / "dot-env", q.jobs.job_dir(id) / ".env");
    CHECK(q.serve() == 0);
    const job_status st = q.jobs.read_status(id);
    INFO(st.reason);
    CHECK(st.state == job_state::done);
    CHECK(server.requests().empty());
    const std::string run_json =
        test::read_text(q.jobs.job_dir(id) / "results" / "run-001" / "run.json");
    CHECK(run_json.find("planted") == std::string::npos);
    CHECK(run_json.find("127.0.0.1") == std::string::npos);
}

TEST_CASE("a submission may not choose the model's provider, API or model", "[daemon]") {
    for (const char* flag : {"--provider", "--api", "--model", "--base-url", "--model=x"})
        CHECK_THAT(daemon_flag_problem({flag, "x"}), Catch::Contains("is set by the daemon"));
}

TEST_CASE("a flag or value holding a NUL is refused: the command line would cut it short",
          "[daemon]") {
    const std::string model_x("--model\0x", 9), timeout("--timeout\0", 10);
    CHECK_THAT(daemon_flag_problem({model_x, "gpt"}), Catch::Contains("holds a NUL character"));
    CHECK_THAT(daemon_flag_problem({"--max-iterations", std::string("3\0", 2)}),
               Catch::Contains("holds a NUL character"));
    CHECK_THAT(job_args_problem({timeout, "1e9"}, 86400), Catch::Contains("holds a NUL character"));
    CHECK(daemon_flag_problem({"--max-iterations", "3"}).empty());
}

TEST_CASE("without --job-time-limit a job may ask for a --timeout of a day and no more",
          "[integration][daemon]") {
    CHECK(k_default_job_time_limit_s == 86400);
    CHECK(daemon_settings{}.job_time_limit_s == k_default_job_time_limit_s);
    CHECK(dashboard_settings{}.job_time_limit_s == k_default_job_time_limit_s);
    CHECK(submit_settings{}.job_time_limit_s == k_default_job_time_limit_s);
    queued_jobs q;  // the operator's own submit: no serve running, so no limit given
    CHECK_NOTHROW(q.queue({"--timeout", "86400"}));
    CHECK_THROWS_WITH(q.queue({"--timeout", "86401"}),
                      "submit: --timeout 86401: expected seconds above 0 and at most serve's "
                      "--job-time-limit (86400 s)");
}

TEST_CASE(
    "a queued job whose folder vanishes or whose state cannot be read fails alone, the "
    "jobs around it complete and serve says so once",
    "[daemon]") {
    queued_jobs q(R"("max_iterations": 3, "batch": 2)");
    const std::string first = q.queue();
    const std::string vanishes = q.queue();
    const std::string unreadable = q.queue();
    const std::string last = q.queue();
    fs::permissions(q.jobs.job_dir(unreadable) / "state.json", fs::perms::owner_all);
    std::ofstream(q.jobs.job_dir(unreadable) / "state.json", std::ios::trunc) << "{\"state\": ";
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
    std::thread mover([&] {
        // Once the first job runs (the second is queued behind it on the one GPU).
        const auto end = std::chrono::steady_clock::now() + 60s;
        while (std::chrono::steady_clock::now() < end) {
            try {
                if (q.jobs.read_status(first).state == job_state::running) break;
            } catch (const std::exception&) {
            }
            std::this_thread::sleep_for(20ms);
        }
        fs::rename(q.jobs.job_dir(vanishes), q.dir / "spool" / "jobs" / "moved-away");
    });
    const int code = q.serve();
    mover.join();
    CHECK(code == 0);
    const std::string err = q.serve_err();
    INFO(err);
    CHECK(q.jobs.read_status(first).state == job_state::done);
    CHECK(q.jobs.read_status(last).state == job_state::done);
    CHECK(count_of(err, "serve: " + vanishes + ":") == 1);
    CHECK(count_of(err, "serve: " + unreadable + ":") == 1);
    const job_status broken = q.jobs.read_status(unreadable);
    CHECK(broken.state == job_state::failed);
    CHECK_THAT(broken.reason,
               Catch::Contains("cannot read the job's state") && Catch::Contains("state.json"));
    CHECK_FALSE(fs::exists(q.jobs.job_dir(vanishes)));  // nothing written where it was
}

TEST_CASE(
    "serve --job-time-limit fails a job that runs past it, and refuses a job whose --timeout "
    "(flag or config) exceeds it",
    "[integration][daemon]") {
    queued_jobs q(R"("max_iterations": 40, "batch": 2)", 2);
    const std::string runs_long = q.queue();
    const std::string too_long = q.queue({"--timeout", "5"});
    const std::string config_too_long =
        q.queue({}, q.write_config("long.json", R"("max_iterations": 1)", 60));
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "500");  // 80 attempts: a minute or more
    const auto started = std::chrono::steady_clock::now();
    CHECK(q.serve({"--job-time-limit", "3"}) == 0);
    CHECK(std::chrono::steady_clock::now() - started < 40s);
    const job_status st = q.jobs.read_status(runs_long);
    CHECK(st.state == job_state::failed);
    CHECK(st.reason == "ran past serve's --job-time-limit (3 s)");
    const job_status refused = q.jobs.read_status(too_long);
    CHECK(refused.state == job_state::failed);
    CHECK(refused.starts == 0);
    CHECK(refused.reason ==
          "--timeout 5: expected seconds above 0 and at most serve's --job-time-limit (3 s)");
    const job_status config_refused = q.jobs.read_status(config_too_long);
    CHECK(config_refused.state == job_state::failed);
    CHECK(config_refused.starts == 0);
    CHECK(config_refused.reason ==
          "long.json: field timeout: expected seconds above 0 and at "
          "most serve's --job-time-limit (3 s), got 60");
}

TEST_CASE(
    "a job's --timeout must be a finite positive number within the job time limit, the "
    "limit itself at most 30 days",
    "[daemon]") {
    CHECK(job_args_problem({"--timeout", "60"}, 86400).empty());
    CHECK(job_args_problem({"--timeout=86400"}, 86400).empty());
    CHECK(job_args_problem({"--max-iterations", "3"}, 86400).empty());
    for (const std::vector<std::string>& bad :
         std::vector<std::vector<std::string>>{{"--timeout", "1e9"},
                                               {"--timeout=1e9"},
                                               {"--timeout", "nan"},
                                               {"--timeout", "inf"},
                                               {"--timeout", "-1"},
                                               {"--timeout", "0"},
                                               {"--timeout", "60s"},
                                               {"--timeout"}})
        CHECK_THAT(job_args_problem(bad, 86400),
                   Catch::Contains("at most serve's --job-time-limit (86400 s)"));
    CHECK_THAT(job_args_problem({"--harness", "x"}, 86400), Catch::Contains("set by the daemon"));
    CHECK(job_time_limit_problem(86400).empty());
    CHECK(job_time_limit_problem(30 * 86400).empty());
    for (const double bad : {0.0, -5.0, 30 * 86400 + 1.0, std::nan(""), HUGE_VAL})
        CHECK_FALSE(job_time_limit_problem(bad).empty());
    CHECK(config_timeout_problem("c.json", R"({"timeout": 60})", 86400).empty());
    CHECK(config_timeout_problem("c.json", "not json", 86400).empty());
    CHECK(config_timeout_problem("c.json", R"({"timeout": 1e9})", 86400) ==
          "c.json: field timeout: expected seconds above 0 and at most serve's --job-time-limit "
          "(86400 s), got 1000000000");
    CHECK(slurm_time_of(86400) == "1-00:00:00");
    CHECK(slurm_time_of(3661.5) == "0-01:01:02");
    test::scratch_folder dir;
    for (const char* bad : {"0", "1e9", "soon"}) {
        const test::process_result r = test::run_optimizer(
            {"serve", "--spool", (dir / "spool").string(), "--job-time-limit", bad});
        INFO(r.output);
        CHECK(r.exit_code == 64);
        CHECK(r.output.find("--job-time-limit: expected seconds above 0 and at most") !=
              std::string::npos);
    }
}

TEST_CASE(
    "a job cancelled while queued says it never started, and status names no run folder or "
    "report for it",
    "[integration][daemon]") {
    queued_jobs q;
    const std::string id = q.queue();
    REQUIRE(q.jobs.request_cancel(id));
    CHECK(q.serve() == 0);
    const job_status st = q.jobs.read_status(id);
    CHECK(st.state == job_state::cancelled);
    CHECK(st.reason == "cancelled while queued; it never started");
    CHECK(st.starts == 0);
    CHECK(st.run_dir.empty());
    CHECK_FALSE(fs::exists(q.jobs.job_dir(id) / "results"));
    const test::process_result status =
        test::run_optimizer({"status", "--spool", (q.dir / "spool").string(), id});
    INFO(status.output);
    CHECK_THAT(status.output, Catch::Contains("report:     none (it never ran)") &&
                                  !Catch::Contains("report.html"));
}

TEST_CASE(
    "a cancelled job gives its bytes back, ended jobs go after --keep-jobs, and a user's jobs "
    "may hold only --max-spool-mb-per-user of the spool",
    "[integration][daemon]") {
    queued_jobs q;
    // Cancelled while queued: the daemon ends it and removes its files (read-only, 0500 folders).
    const std::string cancelled = q.queue();
    REQUIRE(fs::exists(q.jobs.job_dir(cancelled) / "files"));
    CHECK(folder_bytes(q.jobs.job_dir(cancelled) / "files") > 0);
    REQUIRE(q.jobs.request_cancel(cancelled));
    // A job that ran to done, its state last written two days ago.
    const std::string done = q.queue();
    CHECK(q.serve({"--keep-jobs", "0"}) == 0);
    CHECK(q.jobs.read_status(cancelled).state == job_state::cancelled);
    CHECK_FALSE(fs::exists(q.jobs.job_dir(cancelled) / "files"));
    CHECK(fs::exists(q.jobs.job_dir(cancelled) / "job.json"));
    REQUIRE(q.jobs.read_status(done).state == job_state::done);
    CHECK(fs::exists(q.jobs.job_dir(done) / "results"));  // --keep-jobs 0: kept
    fs::last_write_time(q.jobs.job_dir(done) / "state.json",
                        fs::file_time_type::clock::now() - std::chrono::hours(48));
    const std::string recent = q.queue();
    CHECK(q.serve({"--keep-jobs", "1"}) == 0);
    CHECK_FALSE(fs::exists(q.jobs.job_dir(done)));          // ended two days ago: removed whole
    CHECK(fs::exists(q.jobs.job_dir(recent) / "results"));  // ended just now: kept
    CHECK(fs::is_empty(q.jobs.staging_dir()));
    const std::vector<std::string> ids = q.jobs.job_ids();
    CHECK(std::find(ids.begin(), ids.end(), done) == ids.end());
    // The quota counts every job of the submitter, kept ones too.
    const std::uintmax_t held = spool_bytes_of(q.jobs, -1);
    CHECK(held > 0);
    submission sub;
    sub.config = q.config;
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    sub.max_spool_bytes = held;  // full already
    job_spec spec;
    CHECK_THROWS_WITH(stage_submission(q.jobs, sub, spec),
                      Catch::Contains("MiB more; the limit is") &&
                          Catch::Contains("serve --max-spool-mb-per-user"));
    CHECK(fs::is_empty(q.jobs.staging_dir()));  // the refused stage is gone
    sub.max_spool_bytes = held + (64u << 20);
    CHECK_NOTHROW(q.jobs.commit(stage_submission(q.jobs, sub, spec), spec));
}
