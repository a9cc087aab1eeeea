// The real daemon: `cuda-optimizer serve` over a spool with the fake harness, driven through
// `submit`, `status` and `cancel`, killed with SIGKILL and started again.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/pid_lock.hpp"
#include "orchestrator/service/job_finaliser.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/spool.hpp"
#include "serve_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using test::job_files;
using test::serve_process;
using test::wait_until;

// submit_job, which must answer a job id.
std::string submit(const fs::path& spool, const fs::path& config,
                   const std::vector<std::string>& extra = {}) {
    std::string id = test::submit_job(spool, config, extra);
    REQUIRE(id.rfind("job-", 0) == 0);
    return id;
}

// `n` gate jobs on one accepted run of `accepted` (made here: one iteration, no evidence).
std::vector<std::string> submit_gates(const fs::path& spool,
                                      const test::optimizer_fixture& accepted, int n) {
    const test::process_result r =
        test::run_optimizer(accepted.args({"--max-iterations", "1", "--no-evidence"}));
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
        const test::process_result sub = test::run_optimizer(
            {"submit", "--spool", spool.string(), "--gate", "--accepted", accepted.run().string()});
        INFO(sub.output);
        REQUIRE(sub.exit_code == 0);
        ids.push_back(sub.output.substr(0, sub.output.find('\n')));
    }
    return ids;
}

// Job `id` as a daemon SIGKILLed during its first start on GPU 0 leaves it: running, started
// once, by a local process that is gone, with `folder` (in the job's folder) made.
void killed_with_daemon(const cuopt::spool& s, const std::string& id, const std::string& folder) {
    job_status st = s.read_status(id);
    st.state = job_state::running;
    st.starts = 1;
    st.device = 0;
    st.executor = "local";
    st.handle = "2147483647";
    s.write_status(st);
    fs::create_directories(s.job_dir(id) / folder);
}

// What a failed check needs to say why: the job's log and, for each run folder, its
// run.json's start, command line and resumes (which start made it).
std::string job_story(const fs::path& job, const std::vector<fs::path>& runs) {
    std::string story = "job.log:\n" + test::read_text(job / "job.log");
    for (const fs::path& run : runs) {
        story += "\n" + run.filename().string() + ":";
        for (const auto& e : fs::directory_iterator(run))
            story += " " + e.path().filename().string();
        std::error_code ec;
        if (fs::is_regular_file(run / "run.json", ec)) {
            const rapidjson::Document r = parse_json(read_text_file(run / "run.json"), "run.json");
            for (const char* key : {"started", "finished", "command_line", "resumes"})
                if (r.HasMember(key))
                    story += "\n  " + std::string(key) + ": " + to_compact_json(r[key]);
        }
    }
    return story;
}

// A run folder that a finished run leaves: its records, report and one run only.
void check_complete_run(const fs::path& job) {
    INFO(job.string());
    std::vector<fs::path> runs;
    for (const auto& e : fs::directory_iterator(job / "results")) runs.push_back(e.path());
    std::sort(runs.begin(), runs.end());
    INFO(job_story(job, runs));
    REQUIRE(runs.size() == 1);
    const fs::path run = runs.front();
    CHECK(run.filename() == "run-001");
    for (const char* f : {"run.json", "history.json", "summary.json", "report.html"})
        CHECK(fs::is_regular_file(run / f));
    const rapidjson::Document r = parse_json(read_text_file(run / "run.json"), "run.json");
    REQUIRE(r["finished"].IsString());
    CHECK(std::string(r["stop_reason"].GetString()) != "error");
    // Every attempt recorded once.
    const rapidjson::Document h = parse_json(read_text_file(run / "history.json"), "history.json");
    std::set<std::pair<int, int>> seen;
    for (const auto& a : h["attempts"].GetArray())
        CHECK(seen.insert({a["iteration"].GetInt(), a["attempt"].GetInt()}).second);
}

// The lines of `text` that hold `what` (a job's lines in serve's output).
std::string lines_with(const std::string& text, const std::string& what) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.find(what) != std::string::npos) out += line + "\n";
    return out;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// "run device=N start_us=T end_us=T ... folder=DIR" lines of CUOPT_FAKE_TRACE, by device: for each
// device, no two jobs' requests overlap in time.
void check_one_job_per_device(const fs::path& trace) {
    struct span {
        long long start, end;
        std::string job;
    };
    std::map<int, std::vector<span>> by_device;
    std::istringstream lines(test::read_text(trace));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("run ", 0) != 0) continue;
        int device = -1;
        long long start = 0, end = 0;
        std::sscanf(line.c_str(), "run device=%d start_us=%lld end_us=%lld", &device, &start, &end);
        const std::size_t j = line.find("/jobs/job-");
        REQUIRE(j != std::string::npos);
        by_device[device].push_back({start, end, line.substr(j + 6, 10)});
    }
    REQUIRE_FALSE(by_device.empty());
    for (auto& [device, spans] : by_device) {
        std::sort(spans.begin(), spans.end(), [](auto& a, auto& b) { return a.start < b.start; });
        for (std::size_t i = 1; i < spans.size(); ++i)
            if (spans[i].job != spans[i - 1].job) {
                INFO("device " << device << ": " << spans[i - 1].job << " and " << spans[i].job);
                CHECK(spans[i].start >= spans[i - 1].end);
            }
    }
}

}  // namespace

TEST_CASE("serve runs the queue one job per GPU, highest priority first, each to a complete run",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool = dir / "spool";
    const test::scoped_env trace("CUOPT_FAKE_TRACE", (dir / "trace.txt").c_str());
    std::vector<std::string> ids;
    for (int i = 0; i < 5; ++i)
        ids.push_back(submit(
            spool, files.config,
            i == 3 ? std::vector<std::string>{"--priority", "5"} : std::vector<std::string>{}));
    serve_process serve(spool, dir / "serve.out", {"--devices", "0,1", "--stop-when-idle", "0.5"});
    CHECK(serve.wait(120s) == 0);
    const std::string out = test::read_text(dir / "serve.out");
    INFO(out);
    // job-000004 (priority 5) starts with the first, before the queue's second and third.
    const std::size_t first4 = out.find("job-000004 started");
    REQUIRE(first4 != std::string::npos);
    CHECK(first4 < out.find("job-000002 started"));
    CHECK(out.find("job-000001 started") < out.find("job-000002 started"));
    const cuopt::spool s(spool, false);
    for (const std::string& id : ids) {
        const job_status st = s.read_status(id);
        INFO(id << ": " << st.reason);
        CHECK(st.state == job_state::done);
        CHECK(st.starts == 1);
        CHECK(st.attempts > 1);
        CHECK(st.run_dir == "results/run-001");
        CHECK(count_of(out, id + " done:") == 1);
        check_complete_run(s.job_dir(id));
    }
    check_one_job_per_device(dir / "trace.txt");
    const test::process_result status = test::run_optimizer({"status", "--spool", spool.string()});
    CHECK(count_of(status.output, " done ") == 5);
}

TEST_CASE(
    "a job meets a harness without Landlock with the daemon's refusal, and runs once serve is "
    "given --allow-unconfined",
    "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool = dir / "spool";
    const std::string refused = submit(spool, files.config);
    const cuopt::spool s(spool, false);
    const auto serve_all = [&](std::vector<std::string> extra) {
        const test::scoped_env bare("CUOPT_FAKE_UNCONFINED", "no Landlock in the test's kernel");
        extra.insert(extra.end(), {"--stop-when-idle", "0.5"});
        serve_process serve(spool, dir / "serve.out", extra);
        CHECK(serve.wait(120s) == 0);
    };
    serve_all({});
    const job_status st = s.read_status(refused);
    INFO(st.reason);
    CHECK(st.state == job_state::failed);
    CHECK(st.exit_code == 29);
    CHECK_THAT(st.reason, Catch::Contains("the harness runs unconfined (no Landlock in the test's "
                                          "kernel): this daemon job's kernels") &&
                              Catch::Contains("only when serve is given --allow-unconfined"));
    CHECK_FALSE(fs::exists(s.job_dir(refused) / "results" / "run-001"));
    const std::string allowed = submit(spool, files.config);
    serve_all({"--allow-unconfined"});
    CHECK(s.read_status(allowed).state == job_state::done);
    const fs::path run = s.job_dir(allowed) / "results" / "run-001";
    const auto r = test::read_checked_json(run / "run.json", "run");
    CHECK(r["confinement"]["allow_unconfined"].GetBool());
    CHECK(r["confinement"]["attempts"]["none"].GetInt() > 0);
    std::string command;
    for (const auto& w : r["command_line"].GetArray()) command += std::string(" ") + w.GetString();
    CHECK_THAT(command, Catch::Contains(" --daemon-job") && Catch::Contains(" --allow-unconfined"));
}

TEST_CASE("cancel ends a queued job before it starts and a running one mid-run, the queue goes on",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files slow(R"("max_iterations": 40, "batch": 2)");
    job_files quick;
    const fs::path spool = dir / "spool";
    const std::string long_job = submit(spool, slow.config);
    const std::string next = submit(spool, quick.config);
    const std::string never = submit(spool, quick.config);
    CHECK(test::run_optimizer({"cancel", "--spool", spool.string(), never}).exit_code == 0);
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
    serve_process serve(spool, dir / "serve.out", {"--devices", "0", "--stop-when-idle", "0.5"});
    const cuopt::spool s(spool, false);
    wait_until([&] { return s.read_status(long_job).attempts >= 3; }, 60s,
               "the long job's attempts");
    const test::process_result c =
        test::run_optimizer({"cancel", "--spool", spool.string(), long_job});
    CHECK(c.output == long_job + ": cancel requested\n");
    CHECK(serve.wait(120s) == 0);
    INFO(test::read_text(dir / "serve.out"));
    CHECK(s.read_status(long_job).state == job_state::cancelled);
    CHECK(s.read_status(long_job).reason == "cancelled while running");
    CHECK(s.read_status(never).state == job_state::cancelled);
    CHECK_FALSE(fs::exists(s.job_dir(never) / "results"));
    CHECK(s.read_status(next).state == job_state::done);
    const test::process_result again =
        test::run_optimizer({"cancel", "--spool", spool.string(), next});
    CHECK(again.exit_code == 11);
    CHECK(again.output.find("already ended") != std::string::npos);
}

TEST_CASE("a SIGKILLed daemon's running job resumes where it stopped when serve starts again",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files(R"("max_iterations": 6, "batch": 2)");
    const fs::path spool = dir / "spool";
    const std::string id = submit(spool, files.config);
    const cuopt::spool s(spool, false);
    {
        const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
        serve_process serve(spool, dir / "serve1.out", {"--devices", "0"});
        wait_until([&] { return s.read_status(id).attempts >= 4; }, 60s, "four attempts");
        serve.kill9();
    }
    CHECK(s.read_status(id).state == job_state::running);
    // A second daemon while the first holds the spool is refused: here the first is gone.
    serve_process serve(spool, dir / "serve2.out", {"--devices", "0", "--stop-when-idle", "0.5"});
    CHECK(serve.wait(120s) == 0);
    INFO(test::read_text(dir / "serve2.out"));
    const job_status st = s.read_status(id);
    CHECK(st.state == job_state::done);
    CHECK(st.starts == 2);
    check_complete_run(s.job_dir(id));
    const rapidjson::Document run =
        parse_json(read_text_file(s.job_dir(id) / "results/run-001/run.json"), "run.json");
    CHECK(run["resumes"].Size() == 1);
}

TEST_CASE("a malformed job is refused at intake with check's table, a second serve is refused",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool = dir / "spool";
    files.pilot.dir.write("input_cases.json", "{\"schema_version\": 1, \"args\": [");
    const test::process_result bad =
        test::run_optimizer({"submit", "--spool", spool.string(), "--config", files.config.string(),
                             "--harness", test::k_fake_harness});
    CHECK(bad.exit_code == 11);
    CHECK(bad.output.find("input_cases.json") != std::string::npos);
    const cuopt::spool s(spool);
    CHECK(s.job_ids().empty());
    CHECK(fs::is_empty(s.staging_dir()));

    // The initial kernel does not compile: check's table says so, and nothing is queued.
    job_files broken;
    broken.pilot.dir.write("initial.cu", "this is not CUDA // FAKE_COMPILE_ERROR\n");
    const test::process_result rejected =
        test::run_optimizer({"submit", "--spool", spool.string(), "--config",
                             broken.config.string(), "--harness", test::k_fake_harness});
    INFO(rejected.output);
    CHECK(rejected.exit_code == 11);
    CHECK(rejected.output.find("not ready") != std::string::npos);
    CHECK(rejected.output.find("check rejected the job") != std::string::npos);
    CHECK(s.job_ids().empty());

    job_files good;
    submit(spool, good.config);
    serve_process first(spool, dir / "a.out", {"--devices", "0"});
    wait_until([&] { return s.read_status("job-000001").state != job_state::queued; }, 60s,
               "the first daemon to start the job");
    serve_process second(spool, dir / "b.out", {"--devices", "1"});
    CHECK(second.wait(30s) == 64);
    CHECK(test::read_text(dir / "b.out.err").find("another daemon serves") != std::string::npos);
}

TEST_CASE("a gate job reruns an accepted run from the same queue", "[integration][daemon]") {
    test::scratch_folder dir;
    test::optimizer_fixture accepted;
    const fs::path spool = dir / "spool";
    submit_gates(spool, accepted, 1);
    serve_process serve(spool, dir / "serve.out", {"--devices", "0", "--stop-when-idle", "0.5"});
    CHECK(serve.wait(120s) == 0);
    const cuopt::spool s(spool, false);
    const job_status st = s.read_status("job-000001");
    INFO(st.reason << "\n" << test::read_text(s.job_dir("job-000001") / "job.log"));
    CHECK(st.state == job_state::done);
    CHECK(st.reason == "the gate passed");
    CHECK(fs::is_regular_file(s.job_dir("job-000001") / "results/gate/gate.json"));
}

TEST_CASE(
    "a killed gate job's folder is cleared for its rerun only once no process of its last start "
    "holds its lock",
    "[integration][daemon]") {
    test::scratch_folder dir;
    test::optimizer_fixture accepted;
    const fs::path spool_dir = dir / "spool";
    const std::vector<std::string> ids = submit_gates(spool_dir, accepted, 2);
    const std::string& waited = ids[0];
    const std::string& held = ids[1];
    const cuopt::spool s(spool_dir, false);
    // As a daemon SIGKILLed mid-gate leaves them: results/gate half written.
    for (const std::string& id : ids) killed_with_daemon(s, id, "results/gate/kernel-1");
    // A harness of the first job's killed gate lives on a moment; the second's lock is held by
    // a live pid.
    const auto straggler = test::straggler_holding(s.job_dir(waited) / "results/gate/.lock", "600");
    std::string holder;
    std::optional<pid_lock> lock =
        pid_lock::try_take(s.job_dir(held) / "results/gate/.lock", 0644, holder);
    REQUIRE(lock);
    serve_process serve(spool_dir, dir / "serve.out",
                        {"--devices", "0", "--stop-when-idle", "0.3"});
    wait_until(
        [&] {
            return test::read_text(dir / "serve.out")
                       .find(waited + " waits for the processes of its last start to end") !=
                   std::string::npos;
        },
        60s, "the gate job to wait for the straggler");
    std::this_thread::sleep_for(300ms);  // several ticks: it goes on waiting, folder untouched
    CHECK(fs::is_directory(s.job_dir(waited) / "results/gate/kernel-1"));
    ::kill(straggler->pid(), SIGKILL);
    straggler->wait();
    REQUIRE(serve.wait(120s) == 0);
    const std::string out = test::read_text(dir / "serve.out");
    INFO(out << test::read_text(dir / "serve.out.err"));
    CHECK(count_of(out, waited + " waits for the processes") == 1);  // said once
    const job_status a = s.read_status(waited);
    CHECK(a.state == job_state::done);
    CHECK(a.reason == "the gate passed");
    CHECK(a.starts == 2);
    CHECK(fs::is_regular_file(s.job_dir(waited) / "results/gate/gate.json"));
    CHECK_FALSE(fs::exists(s.job_dir(waited) / "results/gate/kernel-1"));  // measured afresh
    const job_status b = s.read_status(held);
    CHECK(b.state == job_state::failed);
    CHECK(b.reason ==
          "not rerun: pid " + std::to_string(::getpid()) + " still holds results/gate/.lock");
    CHECK(fs::is_directory(s.job_dir(held) / "results/gate/kernel-1"));  // nothing removed
}

TEST_CASE("200 jobs through one daemon SIGKILLed twice: each ends once with a complete run folder",
          "[integration][daemon][load]") {
    const char* n_env = std::getenv("CUOPT_LOAD_JOBS");  // tools/sanitize.sh asks for fewer
    const int n = n_env ? std::atoi(n_env) : 200;
    test::scratch_folder dir;
    job_files files(R"("max_iterations": 1, "batch": 1, "no_evidence": true)");
    const fs::path spool_dir = dir / "spool";
    const cuopt::spool s(spool_dir);
    submission sub;
    sub.optimizer = CUOPT_OPTIMIZER_BINARY;
    sub.config = files.config;
    for (int i = 0; i < n; ++i) {
        job_spec spec;
        const fs::path stage = stage_submission(s, sub, spec);
        s.commit(stage, spec);
        if (i == n / 2) {  // a malformed job in the middle is refused; the queue goes on
            job_files bad;
            bad.pilot.dir.write("input_cases.json", "[");
            CHECK(test::run_optimizer({"submit", "--spool", spool_dir.string(), "--config",
                                       bad.config.string(), "--harness", test::k_fake_harness})
                      .exit_code == 11);
        }
    }
    const auto finals = [&] {
        int done = 0;
        for (const std::string& id : s.job_ids()) done += is_final(s.read_status(id).state);
        return done;
    };
    const std::vector<std::string> devices = {"--devices", "0,1,2,3"};
    std::string outs;
    for (int round = 0; round < 2; ++round) {
        serve_process serve(spool_dir, dir / ("serve" + std::to_string(round) + ".out"), devices);
        wait_until([&] { return finals() >= n * (round + 1) / 3; }, 240s, "a third of the jobs");
        serve.kill9();
        outs += test::read_text(serve.out);
    }
    std::vector<std::string> last = devices;
    last.insert(last.end(), {"--stop-when-idle", "0.5"});
    serve_process serve(spool_dir, dir / "serve2.out", last);
    CHECK(serve.wait(280s) == 0);
    outs += test::read_text(serve.out);
    const std::vector<std::string> ids = s.job_ids();
    REQUIRE(ids.size() == static_cast<std::size_t>(n));
    int resumed = 0;
    for (const std::string& id : ids) {
        const job_status st = s.read_status(id);
        INFO(id << ": " << st.reason << "\nserve's lines:\n" << lines_with(outs, id));
        CHECK(st.state == job_state::done);
        // One final line per job (a daemon SIGKILLed between its state write and its log line
        // could print none; never two).
        CHECK(count_of(outs, id + " done:") <= 1);
        resumed += st.starts > 1;
        check_complete_run(s.job_dir(id));
    }
    WARN(n << " jobs, " << resumed << " started again after a SIGKILL");
}

TEST_CASE("serve reads its options from --config, flags winning, an unknown key is refused",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool_dir = dir / "spool";
    submit(spool_dir, files.config);
    dir.write("serve.json", R"({"spool": "spool", "devices": "3", "stop_when_idle": 0.3,
        "harness": ")" + test::k_fake_harness +
                                R"(", "sanitizer": ")" + test::k_fake_sanitizer + R"("})");
    const test::process_result r =
        test::run_optimizer({"serve", "--config", (dir / "serve.json").string(), "--devices", "2"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("job-000001 started (local ") != std::string::npos);
    CHECK(r.output.find(", GPU 2)") != std::string::npos);  // the flag, not the file's 3
    const cuopt::spool s(spool_dir, false);
    CHECK(s.read_status("job-000001").state == job_state::done);
    dir.write("bad.json", R"({"spool": "spool", "slurm_partitoin": "gpu"})");
    const test::process_result bad =
        test::run_optimizer({"serve", "--config", (dir / "bad.json").string()});
    CHECK(bad.exit_code == 64);
    CHECK(bad.output.find("bad.json: field slurm_partitoin: unknown option") != std::string::npos);
    const test::process_result none = test::run_optimizer({"serve"});
    CHECK(none.exit_code == 64);
    CHECK(none.output.find("--spool is required") != std::string::npos);
}

TEST_CASE("a job that cannot be started keeps its place, says why, and runs once it can",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool_dir = dir / "spool";
    const std::string id = submit(spool_dir, files.config);
    const cuopt::spool s(spool_dir, false);
    fs::create_directory(s.job_dir(id) / "job.log");  // the job's log cannot be opened
    {
        serve_process serve(spool_dir, dir / "a.out", {"--devices", "0"});
        wait_until([&] { return !s.read_status(id).reason.empty(); }, 30s, "the reason");
        ::kill(serve.pid(), SIGTERM);
        CHECK(serve.wait(30s) == 0);
    }
    const job_status st = s.read_status(id);
    CHECK(st.state == job_state::queued);
    CHECK(st.starts == 0);
    CHECK(st.reason.find("could not start: ") == 0);
    CHECK(st.reason.find("job.log: cannot open the job's log (tried again in 30 s)") !=
          std::string::npos);
    fs::remove(s.job_dir(id) / "job.log");
    serve_process serve(spool_dir, dir / "b.out", {"--devices", "0", "--stop-when-idle", "0.3"});
    CHECK(serve.wait(60s) == 0);
    CHECK(s.read_status(id).state == job_state::done);
    CHECK(s.read_status(id).starts == 1);
    // summary.json's verdict where the run has one; an older summary's line otherwise.
    CHECK_THAT(
        s.read_status(id).reason,
        Catch::Matches("go: winner [0-9.]+x .+|no_go: .+|no_winner.*|"
                       "a winner passed the evidence gates: .+, [0-9.]+x over the initial kernel"));
}

TEST_CASE(
    "a job killed before its run was set up starts over once its run's lock is free, and never "
    "while a running process holds it",
    "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool_dir = dir / "spool";
    const std::string fresh = submit(spool_dir, files.config);
    const std::string held = submit(spool_dir, files.config);
    const std::string waited = submit(spool_dir, files.config);
    const cuopt::spool s(spool_dir, false);
    // As a daemon SIGKILLed while each job's optimizer had made its run folder and nothing in
    // it (run.json comes next) leaves them.
    for (const std::string& id : {fresh, held, waited})
        killed_with_daemon(s, id, "results/run-001");
    // Someone still writes the second job's run (a live pid holds its lock).
    std::string holder;
    std::optional<pid_lock> lock =
        pid_lock::try_take(s.job_dir(held) / "results/run-001/.lock", 0644, holder);
    REQUIRE(lock);
    // A harness of the third job's killed optimizer lives on a moment: its resume waits for it.
    const auto straggler =
        test::straggler_holding(s.job_dir(waited) / "results/run-001/.lock", "600");
    serve_process serve(spool_dir, dir / "serve.out",
                        {"--devices", "0", "--stop-when-idle", "0.3"});
    // The straggler ends once the job's resume says it waits for it (the resume waits 30 s).
    wait_until(
        [&] {
            const fs::path log = s.job_dir(waited) / "job.log";
            return fs::exists(log) &&
                   test::read_text(log).find(
                       "has ended; waiting for the processes it started to end") !=
                       std::string::npos;
        },
        120s, "the resume to wait for the straggler");
    ::kill(straggler->pid(), SIGKILL);
    straggler->wait();
    REQUIRE(serve.wait(120s) == 0);
    const std::string out = test::read_text(dir / "serve.out");
    INFO(out << test::read_text(dir / "serve.out.err"));
    const job_status a = s.read_status(fresh);
    CHECK(a.state == job_state::done);
    CHECK(a.starts == 3);  // the resume that was refused, then the fresh start
    CHECK(out.find(fresh + " starts over (stopped before its first attempt was recorded)") !=
          std::string::npos);
    check_complete_run(s.job_dir(fresh));
    const job_status b = s.read_status(held);
    CHECK(b.state == job_state::failed);
    CHECK_THAT(b.reason, Catch::StartsWith("not started over: pid " + std::to_string(::getpid()) +
                                           " still holds results/run-001/.lock"));
    CHECK(fs::is_directory(s.job_dir(held) / "results/run-001"));  // nothing removed under it
    CHECK(out.find(held + " starts over") == std::string::npos);
    const job_status c = s.read_status(waited);
    CHECK(c.state == job_state::done);
    check_complete_run(s.job_dir(waited));
}

TEST_CASE("a job that ended while no daemon recorded it is finalised from its folder, never rerun",
          "[integration][daemon]") {
    test::scratch_folder dir;
    job_files files;
    const fs::path spool_dir = dir / "spool";
    const std::string run_job = submit(spool_dir, files.config);
    const std::string cancelled = submit(spool_dir, files.config);
    const test::process_result first =
        test::run_optimizer(files.pilot.args({"--max-iterations", "1", "--no-evidence"}));
    REQUIRE(first.exit_code == 0);
    const test::process_result gate_sub =
        test::run_optimizer({"submit", "--spool", spool_dir.string(), "--gate", "--accepted",
                             files.pilot.run().string()});
    REQUIRE(gate_sub.exit_code == 0);
    const std::string gate_job = gate_sub.output.substr(0, gate_sub.output.find('\n'));
    {
        serve_process serve(spool_dir, dir / "a.out",
                            {"--devices", "0", "--stop-when-idle", "0.3"});
        REQUIRE(serve.wait(120s) == 0);
    }
    const cuopt::spool s(spool_dir, false);
    // As a daemon SIGKILLed after the processes ended but before their states were written
    // leaves them (the report too, for the run: optimize writes it after run.json).
    const fs::path report = s.job_dir(run_job) / "results/run-001/report.html";
    fs::remove(report);
    const auto gate_time = fs::last_write_time(s.job_dir(gate_job) / "results/gate/gate.json");
    for (const std::string& id : {run_job, cancelled, gate_job}) {
        job_status st = s.read_status(id);
        REQUIRE(st.state == job_state::done);
        st.state = job_state::running;
        st.reason.clear();
        s.write_status(st);
    }
    fs::remove_all(s.job_dir(cancelled) / "results");  // it had not begun
    REQUIRE(s.request_cancel(cancelled));
    serve_process serve(spool_dir, dir / "b.out", {"--devices", "0", "--stop-when-idle", "0.3"});
    REQUIRE(serve.wait(60s) == 0);
    INFO(test::read_text(dir / "b.out"));
    CHECK(s.read_status(run_job).state == job_state::done);
    CHECK(s.read_status(run_job).starts == 1);
    // summary.json's verdict line where the summary has one (an older one: the stop reason).
    const auto verdict = verdict_of(s.job_dir(run_job), "results/run-001");
    CHECK(s.read_status(run_job).reason ==
          (verdict ? verdict->line : "the run had finished (max_iterations)"));
    CHECK(fs::is_regular_file(report));  // made again from the run folder
    CHECK(s.read_status(gate_job).state == job_state::done);
    CHECK(s.read_status(gate_job).reason == "the gate passed");
    CHECK(fs::last_write_time(s.job_dir(gate_job) / "results/gate/gate.json") == gate_time);
    CHECK(s.read_status(cancelled).state == job_state::cancelled);
    CHECK_FALSE(fs::exists(s.job_dir(cancelled) / "results"));
    CHECK(test::read_text(dir / "b.out").find(" started") == std::string::npos);
}

TEST_CASE("serve and status refuse a bad address, token, GPU list or job id in one line",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const std::string spool_dir = (dir / "spool").string();
    const auto refused = [&](const std::vector<std::string>& args, int code,
                             const std::string& message) {
        const test::process_result r = test::run_optimizer(args);
        INFO(r.output);
        CHECK(r.exit_code == code);
        CHECK(r.output.find(message) != std::string::npos);
    };
    refused({"serve", "--spool", spool_dir, "--http", "localhost"}, 64,
            "--http localhost: expected ADDR:PORT, e.g. 127.0.0.1:8470");
    refused({"serve", "--spool", spool_dir, "--http", "127.0.0.1:99999"}, 64, "expected ADDR:PORT");
    dir.write("token", "short\n");
    refused({"serve", "--spool", spool_dir, "--http", "127.0.0.1:0", "--token-file",
             (dir / "token").string()},
            64,
            "--token-file: " + (dir / "token").string() + ": ");  // dashboard_token_file_test
    refused({"serve", "--spool", spool_dir, "--devices", "0,x"}, 64, "serve: --devices: ");
    job_files files;
    submit(dir / "spool", files.config);
    refused({"status", "--spool", spool_dir, "job-1"}, 11, "'job-1' is not a job id (job-NNNNNN)");
    refused({"status", "--spool", (dir / "nowhere").string()}, 11, "not a spool (no spool.json)");
}
