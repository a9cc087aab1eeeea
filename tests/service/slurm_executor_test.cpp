// The Slurm executor: first against a scripted stand-in for sbatch/scontrol/squeue (the commands
// it sends, the batch script it writes, how it reads Slurm's answers), then against a real
// one-node Slurm that tools/slurm-cluster.sh starts once for this test binary (Debian's
// slurm-wlm and munge; the tests skip with the reason where those are not installed or this is
// not root), and last `cuda-optimizer serve --executor slurm` end to end on it. Tag [slurm].
#include "orchestrator/service/slurm_executor.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/service/spool.hpp"
#include "serve_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// Answers each command as `answer` says and keeps every command line it was given.
class scripted_runner final : public process_runner {
  public:
    using answer_fn = std::function<process_result(const std::vector<std::string>&)>;
    explicit scripted_runner(answer_fn answer) : m_answer(std::move(answer)) {}
    process_result run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
        calls.push_back(argv);
        return m_answer(argv);
    }
    std::vector<std::vector<std::string>> calls;

  private:
    answer_fn m_answer;
};

process_result answered(int exit_code, const std::string& out, const std::string& err = "") {
    process_result r;
    r.exit_code = exit_code;
    r.stdout_text = out;
    r.stderr_text = err;
    return r;
}

/// An executor over a scripted runner; `runner` points at the runner for inspection.
std::unique_ptr<job_executor> scripted_executor(const slurm_settings& settings,
                                                scripted_runner::answer_fn answer,
                                                scripted_runner*& runner) {
    auto owned = std::make_unique<scripted_runner>(std::move(answer));
    runner = owned.get();
    return make_slurm_executor(settings, std::move(owned));
}

job_launch launch_in(const fs::path& root, const std::string& id, std::vector<std::string> argv) {
    job_launch l;
    l.job_id = id;
    l.job_dir = root / id;
    l.log = l.job_dir / "job.log";
    l.argv = std::move(argv);
    fs::create_directories(l.job_dir);
    return l;
}

std::string show_job_line(const std::string& state, const std::string& exit_code,
                          const std::string& work_dir = "/nowhere") {
    return "JobId=7 JobName=cuopt-job-000001 UserId=root(0) JobState=" + state +
           " Reason=None Dependency=(null) ExitCode=" + exit_code +
           " RunTime=00:01:02 TimeLimit=00:01:00 WorkDir=" + work_dir + " StdOut=/x\n";
}

}  // namespace

TEST_CASE(
    "the Slurm executor submits the job's script with its name, folder, gres, partition, "
    "time, account and extra flags, and records the id sbatch printed before its cluster name",
    "[slurm]") {
    test::scratch_folder dir;
    slurm_settings settings;
    settings.partition = "gpu";
    settings.time_limit = "2:00:00";
    settings.account = "lab";
    settings.extra = {"--qos", "high"};
    scripted_runner* runner = nullptr;
    auto ex = scripted_executor(
        settings, [](const auto&) { return answered(0, "4242;cluster\n"); }, runner);
    const job_launch launch = launch_in(dir.path(), "job-000001", {"/bin/true"});
    CHECK(ex->start(launch) == "4242");
    CHECK(ex->name() == "slurm");
    CHECK(ex->slots() == 8);
    const fs::path job = launch.job_dir;
    const std::vector<std::string> expected = {"sbatch",
                                               "--parsable",
                                               "--job-name",
                                               "cuopt-job-000001",
                                               "--chdir",
                                               job.string(),
                                               "--output",
                                               (job / "slurm-%j.out").string(),
                                               "--gres",
                                               "gpu:1",
                                               "--partition",
                                               "gpu",
                                               "--time",
                                               "2:00:00",
                                               "--account",
                                               "lab",
                                               "--qos",
                                               "high",
                                               (job / "slurm-job.sh").string()};
    REQUIRE(runner->calls.size() == 1);
    CHECK(runner->calls[0] == expected);
    CHECK((fs::status(job / "slurm-job.sh").permissions() & fs::perms::owner_exec) !=
          fs::perms::none);
}

TEST_CASE(
    "the batch script runs the command in the job's folder with every argument literal, "
    "appends its output to the job's log and records its exit code under the Slurm job id",
    "[integration][slurm]") {
    test::scratch_folder dir;
    scripted_runner* runner = nullptr;
    auto ex = scripted_executor(
        {}, [](const auto&) { return answered(0, "77\n"); }, runner);
    const std::string tricky = "it's $HOME \"quoted\" `date` ; exit 9";
    const job_launch launch =
        launch_in(dir.path(), "job-000002",
                  {"/bin/sh", "-c", "printf '%s|%s\\n' \"$1\" \"$(pwd)\"; echo err >&2; exit 5",
                   "sh", tricky});
    write_file_atomic(launch.log, "before\n");
    REQUIRE(ex->start(launch) == "77");
    const std::string script = (launch.job_dir / "slurm-job.sh").string();
    const test::process_result r = test::run_program("/usr/bin/env", {"SLURM_JOB_ID=77", script});
    CHECK(r.exit_code == 5);
    CHECK(test::read_text(launch.log) ==
          "before\n" + tricky + "|" + launch.job_dir.string() + "\nerr\n");
    CHECK(test::read_text(launch.job_dir / "slurm-exit-77") == "5\n");
    CHECK_FALSE(fs::exists(launch.job_dir / "slurm-exit-77.tmp"));
}

TEST_CASE("sbatch's refusal becomes one line holding sbatch's own message", "[slurm]") {
    test::scratch_folder dir;
    scripted_runner* runner = nullptr;
    auto ex = scripted_executor(
        {},
        [](const auto&) {
            return answered(1, "",
                            "sbatch: error: Batch job submission failed: Invalid partition name "
                            "specified\n");
        },
        runner);
    try {
        ex->start(launch_in(dir.path(), "job-000003", {"/bin/true"}));
        FAIL("start() accepted a refused submission");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CHECK(what.find("sbatch failed (exit 1): sbatch: error: Batch job submission failed: "
                        "Invalid partition name specified") != std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
    }
}

TEST_CASE(
    "Slurm's job states read as still running, or as an end with the recorded exit code, "
    "else Slurm's ExitCode, and a reason for anything but a plain exit",
    "[slurm]") {
    test::scratch_folder dir;
    std::string line;
    scripted_runner* runner = nullptr;
    auto ex = scripted_executor(
        {}, [&line](const auto&) { return answered(0, line); }, runner);
    const job_launch launch = launch_in(dir.path(), "job-000004", {"/bin/true"});
    for (const char* state : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED"}) {
        line = show_job_line(state, "0:0");
        CHECK_FALSE(ex->poll("7"));
    }
    line = show_job_line("TIMEOUT", "0:15");
    auto end = ex->poll("7");  // no exit file: the WorkDir Slurm names holds none
    REQUIRE(end);
    CHECK(end->slurm_state == "TIMEOUT");
    CHECK(end->exit_code == -1);
    CHECK(end->signal == 15);
    CHECK(end->reason == "Slurm job 7 hit its time limit 00:01:00");
    line = show_job_line("CANCELLED", "0:15");
    CHECK(ex->poll("7")->reason == "Slurm cancelled it (scancel): Slurm job 7");
    line = show_job_line("FAILED", "3:0");
    end = ex->poll("7");
    CHECK(end->exit_code == 3);
    CHECK(end->reason.find("before its command recorded an exit code") != std::string::npos);
    line = show_job_line("FAILED", "3:0", launch.job_dir.string());  // found through WorkDir
    write_file_atomic(launch.job_dir / "slurm-exit-7", "3\n");
    end = ex->poll("7");
    CHECK(end->exit_code == 3);
    CHECK(end->reason.empty());
    line = show_job_line("COMPLETED", "0:0", launch.job_dir.string());
    write_file_atomic(launch.job_dir / "slurm-exit-7", "0\n");
    end = ex->poll("7");
    CHECK(end->slurm_state == "COMPLETED");
    CHECK(end->exit_code == 0);
    CHECK(end->reason.empty());
    CHECK(runner->calls.back() == std::vector<std::string>{"scontrol", "show", "job", "-o", "7"});
}

TEST_CASE(
    "a job Slurm no longer knows ends with the exit code its script recorded, or says so "
    "when it recorded none, and a controller that does not answer ends nothing",
    "[slurm]") {
    test::scratch_folder dir;
    std::string err = "slurm_load_jobs error: Invalid job id specified\n";
    scripted_runner* runner = nullptr;
    auto ex = scripted_executor(
        {}, [&err](const auto&) { return answered(1, "", err); }, runner);
    const job_launch launch = launch_in(dir.path(), "job-000005", {"/bin/true"});
    auto end = ex->poll("12");
    REQUIRE(end);
    CHECK(end->exit_code == -1);
    CHECK(end->reason == "Slurm no longer knows job 12 and it left no exit code");
    CHECK_FALSE(ex->attach("12", launch));
    write_file_atomic(launch.job_dir / "slurm-exit-12", "4\n");
    CHECK(ex->attach("12", launch));  // the daemon polls it once more and records exit 4
    end = ex->poll("12");
    CHECK(end->exit_code == 4);
    CHECK(end->reason.empty());
    err = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    CHECK_THROWS_WITH(ex->poll("12"), Catch::Contains("Unable to contact slurm controller"));
    // After a restart with slurmctld away, a recorded job stays attached (polled until it
    // answers), not given up and submitted again.
    CHECK(ex->attach("13", launch));
}

TEST_CASE("find_by_name asks squeue for the job's name and takes the newest id", "[slurm]") {
    test::scratch_folder dir;
    scripted_runner* runner = nullptr;
    slurm_settings settings;
    settings.job_name_prefix = "lab";
    auto ex = scripted_executor(
        settings, [](const auto&) { return answered(0, "31\n130\n99\n"); }, runner);
    CHECK(ex->find_by_name(launch_in(dir.path(), "job-000006", {"/bin/true"})) == "130");
    CHECK(runner->calls.back() ==
          std::vector<std::string>{"squeue", "-h", "-n", "lab-job-000006", "-o", "%i"});
}

namespace {

bool installed(const std::string& program) {
    const char* env = std::getenv("PATH");
    std::string path = std::string(env ? env : "") + ":/usr/sbin:/sbin";
    std::size_t from = 0;
    while (from <= path.size()) {
        const std::size_t to = std::min(path.find(':', from), path.size());
        const std::string dir = path.substr(from, to - from);
        if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
        from = to + 1;
    }
    return false;
}

/// The one-node cluster of this test binary: started by the first test that needs it (about
/// 3 s), stopped when the binary exits. SLURM_CONF is set for the executors' commands.
class test_cluster {
  public:
    static test_cluster& get() {
        static test_cluster cluster;
        return cluster;
    }
    std::string skip_reason;  // why these tests cannot run here
    std::string start_error;  // it should run here but did not start
    fs::path dir;

    ~test_cluster() {
        if (dir.empty()) return;
        const std::string stop = "'" + m_script + "' stop '" + dir.string() + "' >/dev/null 2>&1";
        if (std::system(stop.c_str()) == 0) {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    }

  private:
    test_cluster() {
        std::vector<std::string> missing;
        for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue"})
            if (!installed(p)) missing.push_back(p);
        if (!missing.empty()) {
            skip_reason =
                "no Slurm here (missing " + missing.front() + "; apt-get install slurm-wlm munge)";
            return;
        }
        if (::geteuid() != 0) {
            skip_reason = "the test cluster runs as root (SlurmUser root), and this is not root";
            return;
        }
        char name[] = "/tmp/cuopt-slurm-XXXXXX";
        if (!::mkdtemp(name)) {
            start_error = "mkdtemp failed";
            return;
        }
        dir = name;
        const test::process_result r = test::run_program(m_script, {"start", dir.string()});
        if (r.exit_code != 0) {
            start_error = "tools/slurm-cluster.sh start failed:\n" + r.output;
            return;
        }
        ::setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
    }

    std::string m_script = std::string(CUOPT_SOURCE_DIR) + "/tools/slurm-cluster.sh";
};

/// The value of one field of `scontrol show job -o ID` ("" if absent).
std::string job_field(const std::string& id, const std::string& key) {
    const test::process_result r = test::run_program("scontrol", {"show", "job", "-o", id});
    const std::size_t at = r.output.find(" " + key + "=");
    if (at == std::string::npos) return "";
    const std::size_t from = at + key.size() + 2;
    return r.output.substr(from, r.output.find_first_of(" \n", from) - from);
}

void wait_for_state(const std::string& id, const std::string& state) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    std::string now;
    while ((now = job_field(id, "JobState")) != state) {
        if (std::chrono::steady_clock::now() > deadline)
            FAIL("Slurm job " << id << " is " << now << ", not " << state << ", after 30 s");
        std::this_thread::sleep_for(100ms);
    }
}

job_exit wait_for_end(job_executor& ex, const std::string& id, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (const auto end = ex.poll(id)) return *end;
        std::this_thread::sleep_for(200ms);
    }
    FAIL("Slurm job " << id << " did not end within " << limit.count() << " s");
    return {};
}

}  // namespace

/// Skips the rest of a test with the reason printed where no Slurm can run here; fails with the
/// cluster's logs where it should but did not start.
#define REQUIRE_SLURM_OR_SKIP()                                      \
    do {                                                             \
        const test_cluster& cluster = test_cluster::get();           \
        if (!cluster.skip_reason.empty()) {                          \
            WARN("skipped: " << cluster.skip_reason);                \
            return;                                                  \
        }                                                            \
        if (!cluster.start_error.empty()) FAIL(cluster.start_error); \
    } while (0)

TEST_CASE(
    "on a real Slurm, a job that exits 0 ends COMPLETED with exit 0 and one that exits 3 "
    "ends FAILED with exit 3, each with its output appended to the job's log",
    "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    auto ex = make_slurm_executor({});
    const job_launch ok = launch_in(dir.path(), "job-000101", {"/bin/sh", "-c", "echo fine"});
    const job_launch three =
        launch_in(dir.path(), "job-000102", {"/bin/sh", "-c", "echo failing >&2; exit 3"});
    const std::string ok_id = ex->start(ok), three_id = ex->start(three);
    const job_exit ok_end = wait_for_end(*ex, ok_id, 30s);
    CHECK(ok_end.slurm_state == "COMPLETED");
    CHECK(ok_end.exit_code == 0);
    CHECK(ok_end.reason.empty());
    CHECK(test::read_text(ok.log) == "fine\n");
    CHECK(job_field(ok_id, "JobName") == "cuopt-job-000101");
    const job_exit three_end = wait_for_end(*ex, three_id, 30s);
    CHECK(three_end.slurm_state == "FAILED");
    CHECK(three_end.exit_code == 3);
    CHECK(three_end.reason.empty());
    CHECK(test::read_text(three.log) == "failing\n");
    CHECK(test::read_text(three.job_dir / ("slurm-exit-" + three_id)) == "3\n");
}

TEST_CASE("on a real Slurm, a job is given one of the node's two GPUs through --gres gpu:1",
          "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    auto ex = make_slurm_executor({});  // gres gpu:1 by default
    const job_launch l =
        launch_in(dir.path(), "job-000103",
                  {"/bin/sh", "-c", "echo \"gpus=$SLURM_JOB_GPUS visible=$CUDA_VISIBLE_DEVICES\""});
    const std::string id = ex->start(l);
    CHECK(job_field(id, "TresPerNode") == "gres:gpu:1");
    const job_exit end = wait_for_end(*ex, id, 30s);
    CHECK(end.exit_code == 0);
    const std::string out = test::read_text(l.log);
    CHECK((out == "gpus=0 visible=0\n" || out == "gpus=1 visible=1\n"));
}

TEST_CASE(
    "on a real Slurm, cancel() scancels a running job, which ends CANCELLED with the "
    "reason on record",
    "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    auto ex = make_slurm_executor({});
    const job_launch l = launch_in(dir.path(), "job-000104", {"/bin/sleep", "600"});
    const std::string id = ex->start(l);
    wait_for_state(id, "RUNNING");
    CHECK_FALSE(ex->poll(id));
    ex->cancel(id);
    const job_exit end = wait_for_end(*ex, id, 30s);
    CHECK(end.slurm_state == "CANCELLED");
    CHECK(end.reason == "Slurm cancelled it (scancel): Slurm job " + id);
    // sleep's SIGTERM, recorded by the script's trap; where the machine was too loaded for the
    // script to write it within KillWait, Slurm's own ExitCode names the signal instead.
    INFO("exit code " << end.exit_code << ", signal " << end.signal);
    CHECK((end.exit_code == 128 + 15 || (end.exit_code == -1 && end.signal != 0)));
}

TEST_CASE("on a real Slurm, a job past its time limit ends TIMEOUT with the limit in the reason",
          "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    slurm_settings settings;
    settings.time_limit = "5";
    auto ex = make_slurm_executor(settings);
    const job_launch l = launch_in(dir.path(), "job-000105", {"/bin/sleep", "600"});
    const std::string id = ex->start(l);
    wait_for_state(id, "RUNNING");
    CHECK(job_field(id, "TimeLimit") == "00:05:00");  // --time 5 reached sbatch
    // The limit's end moved to 2 s from now (Slurm counts limits in minutes; slurmctld looks at
    // them every 30 s): the job times out within about half a minute, not five.
    const test::process_result r =
        test::run_program("scontrol", {"update", "JobId=" + id, "EndTime=now+2"});
    REQUIRE(r.exit_code == 0);
    const job_exit end = wait_for_end(*ex, id, 60s);
    CHECK(end.slurm_state == "TIMEOUT");
    CHECK(end.reason == "Slurm job " + id + " hit its time limit " + job_field(id, "TimeLimit"));
}

TEST_CASE(
    "on a real Slurm, a new executor finds a running job by its name, re-attaches to it "
    "by id and sees it finish, while an id Slurm never had is not attached",
    "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    const job_launch l = launch_in(dir.path(), "job-000106", {"/bin/sh", "-c", "sleep 3; exit 7"});
    std::string id;
    {
        auto before_restart = make_slurm_executor({});
        id = before_restart->start(l);
    }
    wait_for_state(id, "RUNNING");
    job_launch after = l;  // what a restarted daemon knows: no command line
    after.argv.clear();
    auto ex = make_slurm_executor({});
    CHECK(ex->find_by_name(after) == id);
    REQUIRE(ex->attach(id, after));
    CHECK_FALSE(ex->attach("999999", launch_in(dir.path(), "job-000107", {})));
    const job_exit end = wait_for_end(*ex, id, 30s);
    CHECK(end.slurm_state == "FAILED");
    CHECK(end.exit_code == 7);
    CHECK(ex->find_by_name(after).empty());  // a finished job is not found by name
    // A daemon restarted after the job ended still learns how it ended.
    auto later = make_slurm_executor({});
    REQUIRE(later->attach(id, after));
    const auto again = later->poll(id);
    REQUIRE(again);
    CHECK(again->exit_code == 7);
}

TEST_CASE(
    "on a real Slurm, a submission to a partition that does not exist is refused in one "
    "line with sbatch's message",
    "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    slurm_settings settings;
    settings.partition = "no-such-partition";
    auto ex = make_slurm_executor(settings);
    CHECK_THROWS_WITH(ex->start(launch_in(dir.path(), "job-000108", {"/bin/true"})),
                      Catch::Contains("sbatch failed (exit 1): sbatch: error: ") &&
                          Catch::Contains("Invalid partition name specified") &&
                          !Catch::Contains("\n"));
}

namespace {

/// `serve --executor slurm` in the background, its output in files; SIGKILLed or waited for.
struct slurm_serve : test::serve_process {
    slurm_serve(const fs::path& spool, const fs::path& out_file,
                const std::vector<std::string>& extra)
        : test::serve_process(spool, out_file, extra,
                              {{"--executor", "slurm", "--slurm-gres", "gpu:1"}, "0.2"}) {}
};

/// The one run folder a finished optimize leaves, with its records and report.
void check_complete_run(const fs::path& job) {
    INFO(job.string());
    const fs::path run = job / "results" / "run-001";
    if (!fs::is_directory(job / "results")) FAIL_CHECK("no results folder");
    if (!fs::is_directory(job / "results")) return;
    CHECK(std::distance(fs::directory_iterator(job / "results"), fs::directory_iterator()) == 1);
    for (const char* f : {"run.json", "history.json", "summary.json", "report.html"})
        CHECK(fs::is_regular_file(run / f));
    const rapidjson::Document r = parse_json(read_text_file(run / "run.json"), "run.json");
    CHECK(r["finished"].IsString());
}

bool scancel(const std::string& slurm_id) {
    return test::run_program("scancel", {slurm_id}).exit_code == 0;
}

}  // namespace

TEST_CASE(
    "on a real Slurm, serve --executor slurm ends every job once through a SIGKILL and "
    "restart of the daemon, and records the jobs scancelled from outside as cancelled",
    "[integration][slurm]") {
    REQUIRE_SLURM_OR_SKIP();
    test::scratch_folder dir;
    const test::job_files pilot;
    const auto config = [&](const std::string& name, int iterations) {
        return pilot.write_config(
            name, R"("batch": 2, "max_iterations": )" + std::to_string(iterations), 60);
    };
    // (A harness run's limit of 60 s: a loaded 2-core machine must not fail a job by timing.)
    const fs::path quick = config("quick.json", 2), slow = config("slow.json", 200);
    const fs::path longer = config("longer.json", 4);  // still running when the daemon dies
    const fs::path spool_dir = dir / "spool";
    // Slurm runs two at once (two CPUs, two GPUs): 1 and 2 first, then 3, 4 (scancelled while
    // no daemon runs) and 5.
    const std::string cancelled_live = test::submit_job(spool_dir, slow);
    const std::string resumed = test::submit_job(spool_dir, longer);
    const std::string third = test::submit_job(spool_dir, quick);
    const std::string cancelled_away = test::submit_job(spool_dir, slow);
    const std::string fifth = test::submit_job(spool_dir, quick);
    const cuopt::spool s(spool_dir, false);
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "100");  // sbatch passes it on to the jobs
    std::string resumed_slurm_id;
    {
        slurm_serve serve(spool_dir, dir / "serve1.out", {});
        const auto handle = [&](const std::string& id) { return s.read_status(id).handle; };
        test::wait_until([&] { return job_field(handle(cancelled_live), "JobState") == "RUNNING"; },
                         60s, "the first job to run in Slurm", 100ms);
        REQUIRE(scancel(handle(cancelled_live)));
        test::wait_until(
            [&] { return s.read_status(cancelled_live).state == job_state::cancelled; }, 60s,
            "the daemon to record the scancel", 100ms);
        test::wait_until([&] { return s.read_status(resumed).attempts >= 2; }, 60s, "job 2 mid-run",
                         100ms);
        resumed_slurm_id = handle(resumed);
        serve.kill9();
    }
    CHECK(s.read_status(resumed).state == job_state::running);
    CHECK(job_field(resumed_slurm_id, "TresPerNode") == "gres:gpu:1");
    // serve's --job-time-limit (a day, not given) reached sbatch as --time.
    CHECK(job_field(resumed_slurm_id, "TimeLimit") == "1-00:00:00");
    // While no daemon watches: Slurm goes on, and someone scancels job 4.
    const std::string away_slurm_id = s.read_status(cancelled_away).handle;
    REQUIRE_FALSE(away_slurm_id.empty());
    REQUIRE(scancel(away_slurm_id));
    slurm_serve serve(spool_dir, dir / "serve2.out", {"--stop-when-idle", "1"});
    CHECK(serve.wait(240s) == 0);
    const std::string out = test::read_text(dir / "serve2.out");
    INFO(test::read_text(dir / "serve1.out") << test::read_text(dir / "serve1.out.err") << "\n---\n"
                                             << out << test::read_text(dir / "serve2.out.err"));
    CHECK(out.find(resumed + " re-attached to Slurm job " + resumed_slurm_id) != std::string::npos);
    for (const std::string& id : {resumed, third, fifth}) {
        const job_status st = s.read_status(id);
        INFO(id << ": " << st.reason << "\n" << test::read_text(s.job_dir(id) / "job.log"));
        CHECK(st.state == job_state::done);
        CHECK(st.starts == 1);  // never submitted twice: the restart re-attached
        CHECK(st.slurm_state == "COMPLETED");
        check_complete_run(s.job_dir(id));
    }
    for (const std::string& id : {cancelled_live, cancelled_away}) {
        const job_status st = s.read_status(id);
        INFO(id << ": " << st.reason);
        CHECK(st.state == job_state::cancelled);
        CHECK(st.slurm_state == "CANCELLED");
        CHECK(st.reason.rfind("Slurm cancelled it (scancel): Slurm job ", 0) == 0);
        CHECK(st.starts == 1);
    }
}
