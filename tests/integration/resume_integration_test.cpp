// optimize --resume through the real binaries and fake-harness: a run SIGKILLed at 20 random
// moments and resumed each time until done, against the same run made in one go; and every
// refusal (no run folder, a finished run, changed inputs, harness or config, flags that would
// change the run), each leaving the run folder as it was.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/pid_lock.hpp"
#include "loopback_http_server.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

// `binary` with `args` in the background, stdout and stderr to `log`.
pid_t start_program(const std::string& binary, std::vector<std::string> args, const fs::path& log) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        if (!freopen(log.c_str(), "a", stderr) || !freopen(log.c_str(), "a", stdout)) _exit(126);
        execv(binary.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

// The processes with a descriptor open on `file` (from /proc/PID/fd).
std::vector<pid_t> processes_holding(const fs::path& file) {
    const fs::path target = fs::canonical(file);
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& proc : fs::directory_iterator("/proc", ec)) {
        const std::string name = proc.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code fd_ec;
        for (const auto& fd : fs::directory_iterator(proc.path() / "fd", fd_ec)) {
            std::error_code link_ec;
            if (fs::read_symlink(fd.path(), link_ec) == target) {
                out.push_back(static_cast<pid_t>(std::stol(name)));
                break;
            }
        }
    }
    return out;
}

pid_t start_optimizer(std::vector<std::string> args, const fs::path& log) {
    return start_program(CUOPT_OPTIMIZER_BINARY, std::move(args), log);
}

// Waits up to `limit` for `pid`; its exit code when it ended by itself, else nothing (it runs).
std::optional<int> exit_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    do {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    } while (std::chrono::steady_clock::now() < end);
    return std::nullopt;
}

// The pilot with small cases, so each fake-harness run takes milliseconds.
struct small_pilot : test::optimizer_fixture {
    small_pilot() {
        std::string manifest = test::read_text(dir / "input_cases.json");
        manifest =
            manifest.substr(0, manifest.find("\"cases\"")) +
            R"("cases": [ { "name": "c-9", "kind": "correctness", "params": { "m": 9, "n": 7, "k": 5 } },
                   { "name": "p-16", "kind": "performance", "params": { "m": 16, "n": 16, "k": 16 } },
                   { "name": "p-24", "kind": "performance", "params": { "m": 24, "n": 16, "k": 32 } } ] })";
        dir.write("input_cases.json", manifest);
    }
    std::vector<std::string> autotune(const std::string& results) const {
        return args({"--proposer", "autotune", "--seed", "5", "--max-iterations", "4", "--batch",
                     "3", "--significance-runs", "2", "--results-dir", (dir / results).string()});
    }
};

// The run folder under `results` that has a run.json (the newest), or "".
fs::path resumable_run(const fs::path& results) {
    fs::path out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(results, ec))
        if (fs::exists(e.path() / "run.json") && e.path() > out) out = e.path();
    return out;
}

// Each attempt of history.json as compact JSON, in order (none where there is no history yet).
std::vector<std::string> attempt_entries(const fs::path& run) {
    std::vector<std::string> out;
    if (run.empty() || !fs::exists(run / "history.json")) return out;
    const rapidjson::Document h = parse_json(read_text_file(run / "history.json"), "history");
    for (const auto& a : h["attempts"].GetArray()) out.push_back(to_compact_json(a));
    return out;
}

// What two runs of the same settings must agree on, attempt by attempt (not the wall times).
std::vector<std::string> outcomes(const fs::path& run) {
    std::vector<std::string> out;
    const rapidjson::Document h = test::read_checked_json(run / "history.json", "history");
    for (const auto& a : h["attempts"].GetArray())
        out.push_back(std::to_string(a["iteration"].GetInt()) + "." +
                      std::to_string(a["attempt"].GetInt()) + " " + a["label"].GetString() + " " +
                      a["verdict"].GetString() + " " + to_compact_json(a["geomean_ms"]) + " " +
                      (a["became_best"].GetBool() ? "best" : "-") + " " +
                      a["candidate"]["source_sha256"].GetString());
    return out;
}

std::string winner_label(const fs::path& run) {
    const rapidjson::Document s = test::read_checked_json(run / "summary.json", "summary");
    return s["best"].IsObject() ? s["best"]["label"].GetString() : "none";
}

// run.json says the run ended (a kill that came after it wrote its last file).
bool ended(const fs::path& run) {
    if (run.empty()) return false;
    const rapidjson::Document d = parse_json(read_text_file(run / "run.json"), "run.json");
    return d["finished"].IsString() && std::string(d["stop_reason"].GetString()) != "interrupted";
}

// When to kill a run: `delay` after it starts, or after the next attempt it records (waiting
// at most `patience` for one).
struct moment {
    bool after_next_attempt = false;
    std::chrono::milliseconds delay{0}, patience{0};
};

// Waits for history.json's next write (an attempt recorded), at most `limit` (there is none in
// the evidence stage), or for `pid` to end by itself.
std::optional<int> next_attempt_or_exit(pid_t pid, const fs::path& results,
                                        std::chrono::milliseconds limit) {
    std::error_code ec;
    const fs::path run = resumable_run(results);
    const auto before = fs::last_write_time(run / "history.json", ec);
    for (const auto end = std::chrono::steady_clock::now() + limit;
         std::chrono::steady_clock::now() < end;) {
        if (const std::optional<int> code = exit_within(pid, std::chrono::milliseconds(1)))
            return code;
        const fs::path now = resumable_run(results);
        std::error_code ec2;
        const auto written = fs::last_write_time(now / "history.json", ec2);
        if (!ec2 && (now != run || ec || written != before)) return std::nullopt;
    }
    return std::nullopt;
}

// Kills the run at `m` (a resume from the second start on); false when it finished first.
// Every attempt history.json held before is still there, as it was.
bool kill_at(const small_pilot& p, const moment& m, std::vector<std::string>& kept) {
    const fs::path results = p.dir / "killed";
    const fs::path run = resumable_run(results);
    if (ended(run)) return false;
    const std::vector<std::string> args =
        run.empty() ? p.autotune("killed")
                    : std::vector<std::string>{"optimize", "--resume", run.string()};
    const pid_t pid = start_optimizer(args, p.dir / "killed.log");
    std::optional<int> code;
    if (m.after_next_attempt) code = next_attempt_or_exit(pid, results, m.patience);
    if (!code) code = exit_within(pid, m.delay);
    if (code) {
        INFO(test::read_text(p.dir / "killed.log"));
        REQUIRE(*code == 0);
        return false;
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    const std::vector<std::string> now = attempt_entries(resumable_run(results));
    REQUIRE(now.size() >= kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) CHECK(now[i] == kept[i]);
    kept = now;
    return true;
}

}  // namespace

TEST_CASE(
    "a run SIGKILLed at 20 random moments and resumed each time loses no attempt, repeats none "
    "and ends as the run made in one go did",
    "[integration][resume]") {
    small_pilot p;
    const auto started = std::chrono::steady_clock::now();
    const auto whole = test::run_optimizer(p.autotune("whole"));
    const auto whole_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    INFO(whole.output);
    REQUIRE(whole.exit_code == 0);
    // The moments, from a fixed seed: a third at a random time after the start (in the
    // preflight, the oracle, the search or the evidence stage), the rest at a random time after
    // the next attempt is recorded (inside an attempt, between two, inside an iteration's start).
    std::mt19937 moments(20261130);
    const long span = std::max<long>(whole_ms.count() / 6, 20);
    std::uniform_int_distribution<long> after_start(0, span);
    std::uniform_int_distribution<long> after_attempt(0, 10);
    std::vector<std::string> kept;
    int kills = 0;
    bool finished = false;
    while (kills < 20 && !finished) {
        moment m;
        m.after_next_attempt = moments() % 3 != 0;
        m.delay = std::chrono::milliseconds(m.after_next_attempt ? after_attempt(moments)
                                                                 : after_start(moments));
        m.patience = std::chrono::milliseconds(span);
        finished = !kill_at(p, m, kept);
        kills += !finished;
    }
    const fs::path run = resumable_run(p.dir / "killed");
    REQUIRE(!run.empty());
    if (!finished && !ended(run)) {
        const auto last = test::run_optimizer({"optimize", "--resume", run.string()});
        INFO(last.output);
        REQUIRE(last.exit_code == 0);
    }
    const fs::path first = p.dir / "whole/run-001";
    CHECK(outcomes(run) == outcomes(first));  // nothing lost, nothing twice, the same results
    CHECK(winner_label(run) == winner_label(first));
    for (const char* f : {"best.cu", "best.json", "report.html", "heatmap.svg", "best-case-0.json"})
        CHECK(fs::exists(run / f));
    const rapidjson::Document summary = test::read_checked_json(run / "summary.json", "summary");
    CHECK(summary["evidence"]["ran"].GetBool());
    CHECK(to_compact_json(summary["evidence"]["winner"]) ==
          to_compact_json(
              test::read_checked_json(first / "summary.json", "summary")["evidence"]["winner"]));
    const rapidjson::Document record = test::read_checked_json(run / "run.json", "run");
    CHECK(std::string(record["stop_reason"].GetString()) == "max_iterations");
    CHECK(record["resumes"].Size() >= 1);
    CHECK(record["resumes"].Size() <= static_cast<unsigned>(kills) + 1);
    CHECK(std::string(record["command_line"][1].GetString()) == "optimize");
    CHECK(std::string(record["command_line"][2].GetString()) != "--resume");  // the first one
    int in_flight = 0;
    for (const auto& r : record["resumes"].GetArray())
        for (const auto& folder : r["in_flight"].GetArray()) {  // evaluated again, once
            CHECK(fs::exists(run / folder.GetString() / "response.json"));
            ++in_flight;
        }
    WARN(kills << " kills over a run of " << whole_ms.count() << " ms; " << record["resumes"].Size()
               << " resumes, " << in_flight << " attempts in flight evaluated again, "
               << attempt_entries(run).size() << " attempts");
}

namespace {

// A files run stopped while its second candidate hangs (FAKE_HANG, killed by the 1 s --timeout
// when it is evaluated again): SIGKILL, or `signal`. Its harness is a copy, its max_iterations
// comes from a config file, so a test can change either.
struct stopped_run : small_pilot {
    fs::path harness = dir / "harness-copy";
    fs::path run = dir / "results/run-001";
    int exit_code = -1;
    explicit stopped_run(int signal = SIGKILL) {
        fs::copy_file(CUOPT_FAKE_HARNESS_BINARY, harness);
        fs::permissions(harness, fs::perms::owner_all);
        dir.write("cands/a_faster.cu", kernel("FAKE_MS=1"));
        dir.write("cands/b_hang.cu", kernel("FAKE_HANG"));
        dir.write("cands/c_slower.cu", kernel("FAKE_MS=3"));
        dir.write("config.json", R"({"max_iterations": 3})");
        std::vector<std::string> a =
            args({"--proposer", "files", "--candidates", (dir / "cands").string(), "--config",
                  (dir / "config.json").string(), "--harness", harness.string(), "--timeout", "1",
                  "--no-evidence"});
        const pid_t pid = start_optimizer(a, dir / "stopped.log");
        for (int i = 0; i < 2000 && !fs::exists(run / "candidates/iter-02/attempt-0"); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        kill(pid, signal);
        int status = 0;
        waitpid(pid, &status, 0);
        exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        REQUIRE(fs::exists(run / "run.json"));
    }
    test::process_result resume(std::vector<std::string> extra = {}) const {
        std::vector<std::string> a = {"optimize", "--resume", run.string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return test::run_optimizer(a);
    }
    // What a refused resume must leave as it was.
    std::string snapshot() const {
        std::string s = test::read_text(run / "run.json") + test::read_text(run / "history.json");
        for (const auto& e : fs::recursive_directory_iterator(run)) s += e.path().string() + "\n";
        return s;
    }
};

}  // namespace

TEST_CASE(
    "a resume is refused with exit 28 when the manifest, the initial kernel, the harness or the "
    "config changed, naming which, and the run folder is left as it was",
    "[integration][resume]") {
    stopped_run s;
    REQUIRE(fs::exists(s.run / "candidates/iter-02/attempt-0"));  // in flight when killed
    const std::string before = s.snapshot();
    struct change {
        fs::path file;
        std::string text, expected;
    };
    const std::vector<change> changes = {
        {s.dir / "initial.cu", "// edited\n",
         "the initial kernel " + (s.dir / "initial.cu").string() +
             " changed since the run began (run.json sha256.initial "},
        {s.dir / "input_cases.json", " ",
         "the manifest " + (s.dir / "input_cases.json").string() + " changed"},
        {s.harness, "x", "the harness " + s.harness.string() + " changed"},
        {s.dir / "config.json", "", "settings.max_iterations was 3 when the run began and is 4"}};
    for (const change& c : changes) {
        const std::string original = test::read_text(c.file);
        if (c.file.filename() == "config.json")
            s.dir.write("config.json", R"({"max_iterations": 4})");
        else
            std::ofstream(c.file, std::ios::app) << c.text;
        const auto r = s.resume();
        INFO(r.output);
        CHECK(r.exit_code == 28);
        CHECK_THAT(r.output, Catch::Contains("cannot resume " + s.run.string()));
        CHECK_THAT(r.output, Catch::Contains(c.expected));
        CHECK(s.snapshot() == before);
        std::ofstream(c.file, std::ios::trunc | std::ios::binary) << original;
    }
    const auto r = s.resume({"--compile-threads", "1"});  // may differ: how, not what
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("1 in flight evaluated again"));
    const auto history = test::read_checked_json(s.run / "history.json", "history");
    CHECK(test::verdict_of(history, "b_hang.cu") == "timeout");
    CHECK(test::verdict_of(history, "c_slower.cu") == "valid");
    const auto record = test::read_checked_json(s.run / "run.json", "run");
    REQUIRE(record["resumes"].Size() == 1);
    CHECK(std::string(record["resumes"][0]["in_flight"][0].GetString()) ==
          "candidates/iter-02/attempt-0");
    CHECK(record["resumes"][0]["attempts_kept"].GetInt() == 2);
    CHECK_THAT(test::read_text(s.run / "report.html"),
               Catch::Contains("1 time (the last ") &&
                   Catch::Contains("; 1 attempt(s) in flight evaluated again)"));
    CHECK(record["settings"]["compile_threads"].GetInt() == 1);
}

TEST_CASE(
    "a resume is refused with exit 28, writing nothing, for a run folder holding a link, an "
    "attempt recorded twice or a wall time no run takes",
    "[integration][resume]") {
    stopped_run s;
    REQUIRE(fs::exists(s.run / "history.json"));
    // The killed run's harness may still write for a moment (its PR_SET_PDEATHSIG comes after
    // the optimizer's exit): every refusal below is held against a folder nobody writes.
    for (int i = 0; i < 3000 && !processes_holding(s.run / ".lock").empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(processes_holding(s.run / ".lock").empty());
    struct tamper {
        std::function<void()> apply, undo;
        std::string expected;
    };
    const std::string history = test::read_text(s.run / "history.json");
    const std::string record = test::read_text(s.run / "run.json");
    test::scratch_folder elsewhere;
    const std::vector<tamper> tampers = {
        {[&] {
             fs::rename(s.run / "candidates", elsewhere / "candidates");
             fs::create_directory_symlink(elsewhere / "candidates", s.run / "candidates");
         },
         [&] {
             fs::remove(s.run / "candidates");
             fs::rename(elsewhere / "candidates", s.run / "candidates");
         },
         "candidates is a link (to '" + (elsewhere / "candidates").string() +
             "'); a run folder holds no links"},
        {[&] {
             auto doc = parse_json(history, "history");
             rapidjson::Value last(doc["attempts"][doc["attempts"].Size() - 1], doc.GetAllocator());
             doc["attempts"].PushBack(last, doc.GetAllocator());
             s.dir.write("results/run-001/history.json", to_pretty_json(doc));
         },
         [&] { s.dir.write("results/run-001/history.json", history); },
         "history.json holds attempt "},
        {[&] {
             auto doc = parse_json(record, "run");
             doc["wall_s"].SetDouble(1e10);
             s.dir.write("results/run-001/run.json", to_pretty_json(doc));
         },
         [&] { s.dir.write("results/run-001/run.json", record); },
         "its run.json's wall_s is 1e+10; expected a run's wall time"}};
    // The run named through a link of its own: the folder is looked through all the same.
    fs::create_directory_symlink(s.run, s.dir / "run-link");
    for (const tamper& t : tampers) {
        t.apply();
        const std::string before = s.snapshot();
        const auto linked =
            test::run_optimizer({"optimize", "--resume", (s.dir / "run-link").string()});
        INFO(linked.output);
        CHECK(linked.exit_code == 28);
        CHECK_THAT(linked.output, Catch::Contains(t.expected));
        const auto r = s.resume();
        INFO(r.output);
        CHECK(r.exit_code == 28);
        CHECK_THAT(r.output, Catch::Contains("cannot resume " + s.run.string() + ": " +
                                             t.expected.substr(0, 20)) &&
                                 Catch::Contains(t.expected));
        CHECK(s.snapshot() == before);
        t.undo();
    }
    CHECK(fs::is_empty(elsewhere.path()));
    // What a SIGKILL between a temporary's write and its rename leaves: removed by the resume.
    s.dir.write("results/run-001/history.json.tmp-0123456789abcdef", "{\"partial");
    s.dir.write("results/run-001/candidates/iter-01/candidates.json.tmp-fedcba9876543210", "[");
    const auto r = s.resume();
    INFO(r.output);
    CHECK(r.exit_code == 0);  // untampered, it goes on
    // Two, or more where the SIGKILL itself caught a write between its temporary and rename.
    CHECK_THAT(r.output, Catch::Contains("partial file(s) the stopped run was writing"));
    for (const auto& e : fs::recursive_directory_iterator(s.run))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE(
    "a run that ends leaves no RUN/.lock, stopped by SIGTERM or at its end, and a refused resume "
    "of it makes none",
    "[integration][resume]") {
    stopped_run s(SIGTERM);  // the hanging attempt finishes (timeout), then the run stops
    REQUIRE(s.exit_code == 23);
    CHECK_FALSE(fs::exists(fs::symlink_status(s.run / ".lock")));
    s.dir.write("config.json", R"({"max_iterations": 4})");
    const std::string before = s.snapshot();
    auto r = s.resume();
    INFO(r.output);
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("settings.max_iterations was 3"));
    CHECK(s.snapshot() == before);  // the lock it made went with it
    s.dir.write("config.json", R"({"max_iterations": 3})");
    r = s.resume();
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(fs::exists(fs::symlink_status(s.run / ".lock")));
}

TEST_CASE(
    "a hard link planted at RUN/.lock is refused (exit 28) in one line, and the file it names is "
    "left as it was",
    "[integration][resume]") {
    stopped_run s;
    for (int i = 0; i < 3000 && !processes_holding(s.run / ".lock").empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(processes_holding(s.run / ".lock").empty());
    test::scratch_folder elsewhere;
    const fs::path victim = elsewhere.write("victim.txt", "keep me\n");
    fs::remove(s.run / ".lock");
    fs::create_hard_link(victim, s.run / ".lock");
    const std::string before = s.snapshot();
    const auto r = s.resume();
    INFO(r.output);
    CHECK(r.exit_code == 28);
    CHECK(r.output == "cuda-optimizer: " + (s.run / ".lock").string() +
                          ": a hard link (2 names); expected a lock file of its own, not "
                          "written\n");
    CHECK(test::read_text(victim) == "keep me\n");
    CHECK(s.snapshot() == before);
}

TEST_CASE(
    "a resume is refused for a folder that holds no run, a run that finished, and flags that "
    "would change the run",
    "[integration][resume]") {
    small_pilot p;
    auto r = test::run_optimizer({"optimize", "--resume", (p.dir / "nowhere").string()});
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("nowhere: no such folder"));
    fs::create_directories(p.dir / "empty");
    r = test::run_optimizer({"optimize", "--resume", (p.dir / "empty").string()});
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("not a run folder (no run.json)"));
    REQUIRE(test::run_optimizer(p.args({"--max-iterations", "1", "--no-evidence"})).exit_code == 0);
    r = test::run_optimizer({"optimize", "--resume", p.run().string()});
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("the run finished ("));
    CHECK_THAT(r.output,
               Catch::Contains("stop reason max_iterations): there is nothing to resume"));
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--max-iterations", "9"},
                                                  {"--seed=3"},
                                                  {"--config", "c.json"}}) {
        std::vector<std::string> a = {"optimize", "--resume", p.run().string()};
        a.insert(a.end(), extra.begin(), extra.end());
        r = test::run_optimizer(a);
        CHECK(r.exit_code == 64);
        CHECK_THAT(r.output,
                   Catch::Contains(extra[0].substr(0, extra[0].find('=')) +
                                   " cannot be given with --resume: a run goes on with the "
                                   "settings it began with"));
    }
    p.dir.write("resume.json", R"({"resume": "results/run-001"})");
    r = test::run_optimizer({"optimize", "--config", (p.dir / "resume.json").string()});
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("field resume: --resume is a command-line flag only"));
}

TEST_CASE("a run stopped by SIGTERM (exit 23) goes on with --resume from where it stopped",
          "[integration][resume]") {
    stopped_run s(SIGTERM);  // the hanging attempt finishes (timeout), then the run stops
    CHECK(s.exit_code == 23);
    const auto before = test::read_checked_json(s.run / "history.json", "history");
    CHECK(before["attempts"].Size() == 3);
    const auto r = s.resume();
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("3 attempt(s) kept from history.json, 0 in flight"));
    const auto history = test::read_checked_json(s.run / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 4);
    for (unsigned i = 0; i < 3; ++i)
        CHECK(to_compact_json(history["attempts"][i]) == to_compact_json(before["attempts"][i]));
    CHECK(std::string(history["attempts"][3]["label"].GetString()) == "c_slower.cu");
    const auto summary = test::read_checked_json(s.run / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "max_iterations");
    CHECK(std::string(summary["best"]["label"].GetString()) == "a_faster.cu");
}

namespace {

const char* k_key = "sk-itest-resume-4b2d";

// A scripted model's submit_candidate reply: the pilot's initial kernel with a fake marker.
std::string submission(const test::optimizer_fixture& f, const std::string& marker) {
    rapidjson::Document args(rapidjson::kObjectType);
    auto& a = args.GetAllocator();
    args.AddMember("source", json_text(f.kernel(marker), a), a);
    args.AddMember("rationale", "fewer cycles", a);
    rapidjson::Document reply;
    reply.Parse(R"({"choices": [{"finish_reason": "tool_calls", "message": {"content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name":
        "submit_candidate", "arguments": ""}}]}}], "usage": {"prompt_tokens": 1000,
        "completion_tokens": 100}})");
    auto& fn = reply["choices"][0]["message"]["tool_calls"][0]["function"];
    fn["arguments"] = json_text(to_compact_json(args), reply.GetAllocator());
    return to_compact_json(reply);
}

std::vector<std::string> with_key(std::vector<std::string> args) {
    std::vector<std::string> a = {"-u",
                                  "ANTHROPIC_API_KEY",
                                  "-u",
                                  "OPENAI_BASE_URL",
                                  std::string("OPENAI_API_KEY=") + k_key,
                                  CUOPT_OPTIMIZER_BINARY};
    a.insert(a.end(), args.begin(), args.end());
    return a;
}

}  // namespace

TEST_CASE(
    "a model run resumed mid-iteration asks the model nothing twice, counts its calls from the "
    "start and numbers its records on",
    "[integration][resume]") {
    small_pilot p;
    test::loopback_http_server server({{200, {}, submission(p, "FAKE_MS=1.5")},
                                       {200, {}, submission(p, "FAKE_HANG")},
                                       {200, {}, submission(p, "FAKE_MS=1")}});
    const fs::path run = p.dir / "results/run-001";
    const pid_t pid = start_program(
        "/usr/bin/env",
        with_key(p.args({"--base-url", server.url("/v1"), "--max-model-calls", "3",
                         "--max-iterations", "5", "--timeout", "1", "--no-evidence"})),
        p.dir / "first.log");
    for (int i = 0; i < 2000 && !fs::exists(run / "candidates/iter-02/attempt-0"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    kill(pid, SIGKILL);  // the model's second candidate hangs: in flight
    waitpid(pid, nullptr, 0);
    REQUIRE(server.requests().size() == 2);
    const auto r =
        test::run_program("/usr/bin/env", with_key({"optimize", "--resume", run.string()}));
    INFO(test::read_text(p.dir / "first.log") << r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(server.requests().size() == 3);  // iteration 3 only: 1 and 2 were recorded
    CHECK_THAT(server.requests().at(2).body, Catch::Contains("iteration 2.0 iteration 2: timeout"));
    const auto summary = test::read_checked_json(run / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "budget_exhausted");
    CHECK(summary["model"]["calls"].GetInt() == 3);
    CHECK(summary["model"]["prompt_tokens"].GetInt() == 3000);
    CHECK(fs::exists(run / "model-003.json"));
    CHECK(!fs::exists(run / "model-004.json"));
    CHECK(test::read_text(run / "model-003.json").find("\"iteration\": 3") != std::string::npos);
    const auto history = test::read_checked_json(run / "history.json", "history");
    REQUIRE(history["attempts"].Size() == 4);
    CHECK(test::verdict_of(history, "iteration 2") == "timeout");
    CHECK(std::string(summary["best"]["label"].GetString()) == "iteration 3");
}

TEST_CASE("a resume with the harness on another GPU is refused naming both (exit 28)",
          "[integration][resume]") {
    small_pilot p;
    REQUIRE(test::run_optimizer(p.args({"--max-iterations", "1", "--no-evidence"})).exit_code == 0);
    // As a run stopped by a signal leaves it.
    std::string run_json = read_text_file(p.run() / "run.json");
    const std::string stop = "\"stop_reason\": \"max_iterations\"";
    REQUIRE(run_json.find(stop) != std::string::npos);
    run_json.replace(run_json.find(stop), stop.size(), "\"stop_reason\": \"interrupted\"");
    write_file_atomic(p.run() / "run.json", run_json);
    const std::string before = read_text_file(p.run() / "run.json");
    ::setenv("CUOPT_FAKE_DEVICE_NAME", "another fake GPU", 1);
    const auto r = test::run_optimizer({"optimize", "--resume", p.run().string()});
    ::unsetenv("CUOPT_FAKE_DEVICE_NAME");
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("fake CPU device"));
    CHECK_THAT(r.output, Catch::Contains("another fake GPU"));
    CHECK(read_text_file(p.run() / "run.json") == before);
}

TEST_CASE(
    "a resume of a run that is still going is refused (exit 28) naming the pid that holds "
    "RUN/.lock, the run's harness holds it too, and lets go when it ends",
    "[integration][resume]") {
    small_pilot p;
    p.dir.write("cands/a_faster.cu", p.kernel("FAKE_MS=1"));
    p.dir.write("cands/b_hang.cu", p.kernel("FAKE_HANG"));
    const fs::path run = p.dir / "results/run-001";
    const pid_t pid =
        start_optimizer(p.args({"--proposer", "files", "--candidates", (p.dir / "cands").string(),
                                "--max-iterations", "3", "--timeout", "5", "--no-evidence"}),
                        p.dir / "running.log");
    for (int i = 0; i < 2000 && !fs::exists(run / "candidates/iter-02/attempt-0"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(fs::exists(run / "candidates/iter-02/attempt-0"));  // the hang is being evaluated
    const std::string before = test::read_text(run / "run.json");
    const auto r = test::run_optimizer({"optimize", "--resume", run.string()});
    CHECK(r.exit_code == 28);
    CHECK_THAT(r.output, Catch::Contains("the run is still going (pid " + std::to_string(pid) +
                                         " holds " + (run / ".lock").string() + ")"));
    // The harness evaluating the hang holds the run's lock too: a harness that outlives a
    // killed optimizer keeps the run "going" until it has ended.
    const std::vector<pid_t> holders = processes_holding(run / ".lock");
    CHECK(std::find(holders.begin(), holders.end(), pid) != holders.end());
    std::vector<pid_t> harnesses;
    for (const pid_t h : holders)
        if (h != pid) harnesses.push_back(h);
    REQUIRE(!harnesses.empty());
    CHECK_THAT(test::read_text("/proc/" + std::to_string(harnesses.front()) + "/cmdline"),
               Catch::Contains("fake-harness"));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const int fd = ::open((run / ".lock").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    bool free = false;  // once the harness has died with it (PR_SET_PDEATHSIG)
    for (int i = 0; i < 500 && !(free = ::flock(fd, LOCK_EX | LOCK_NB) == 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(free);
    ::close(fd);
    for (const pid_t h : harnesses)  // ended (a zombie at most), not merely let go
        CHECK_FALSE(process_running(std::to_string(h)));
    CHECK(test::read_text(run / "run.json") == before);  // the refusal changed nothing
}
