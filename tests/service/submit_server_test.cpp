// The daemon's submission socket and the spool's permissions, attacked as a local user would:
// the real `cuda-optimizer serve` (as root, the spool's owner) with the fake harness, and the
// attacker's side run as uid 65534 through setpriv.
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "common/json_document.hpp"
#include "orchestrator/service/spool.hpp"
#include "serve_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;
namespace bp = boost::process;
using namespace std::chrono_literals;

namespace {

// Runs a command as uid/gid 65534 with no supplementary groups.
test::process_result as_nobody(const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--reuid=65534", "--regid=65534", "--clear-groups", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return test::run_program("/usr/bin/setpriv", args);
}

test::process_result nobody_shell(const std::string& script) {
    return as_nobody({"/bin/sh", "-c", script});
}

// cuda-optimizer where uid 65534 can run it: a copy in a 0755 folder of its own (the build
// folder may lie under a home folder that others cannot enter, as CI's clone may).
const std::string& optimizer_for_others() {
    struct copied {
        fs::path folder;
        std::string binary;
        copied() {
            char name[] = "/tmp/cuopt-bin-XXXXXX";
            REQUIRE(::mkdtemp(name) != nullptr);
            folder = name;
            fs::permissions(folder, fs::perms(0755));
            binary = (folder / "cuda-optimizer").string();
            fs::copy_file(CUOPT_OPTIMIZER_BINARY, binary);
            fs::permissions(binary, fs::perms(0755));
        }
        ~copied() {
            std::error_code ec;
            fs::remove_all(folder, ec);
        }
    };
    static const copied c;
    return c.binary;
}

test::process_result nobody_optimizer(const std::vector<std::string>& args) {
    std::vector<std::string> command = {optimizer_for_others()};
    command.insert(command.end(), args.begin(), args.end());
    return as_nobody(command);
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

// `serve` (as root) in the background until the test ends; ready once its socket is there.
struct serve_process : test::serve_process {
    serve_process(const fs::path& spool, const fs::path& out_file,
                  const std::vector<std::string>& extra)
        : test::serve_process(spool, out_file, extra, socket_ready()) {}
    static test::serve_launch socket_ready() {
        test::serve_launch launch;
        launch.wait_for_socket = true;
        return launch;
    }
};

// Queued by root, the spool's owner, straight into the spool (no daemon needed).
std::string submit_as_owner(const fs::path& spool, const fs::path& config) {
    return test::submit_job(spool, config);
}

std::string submit_as_nobody(const fs::path& spool, const fs::path& config) {
    const test::process_result r =
        nobody_optimizer({"submit", "--spool", spool.string(), "--config", config.string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string id = first_line(r.output);
    REQUIRE(id.rfind("job-", 0) == 0);
    return id;
}

unsigned mode_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// A shell command run as 65534 fails because it may not: "Permission denied".
void denied(const std::string& script) {
    const test::process_result r = nobody_shell(script);
    INFO(script << "\n" << r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("Permission denied") != std::string::npos);
}

// A group holding uid 65534 (in /etc/group), removed at the end; empty when none can be made.
struct operator_group {
    std::string name = "cuoptops" + std::to_string(::getpid() % 100000);
    bool made = false;
    operator_group() {
        made = std::system(("groupadd " + name + " >/dev/null 2>&1 && gpasswd -a nobody " + name +
                            " >/dev/null 2>&1")
                               .c_str()) == 0;
    }
    ~operator_group() {
        if (made) (void)std::system(("groupdel " + name + " >/dev/null 2>&1").c_str());
    }
};

}  // namespace

TEST_CASE("a user who does not own the spool submits through the socket and cannot touch a job",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files slow(R"("max_iterations": 40, "batch": 2)");
    const std::string root_job = submit_as_owner(spool, slow.config);
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
    serve_process serve(spool, dir / "serve.out", {"--devices", "0"});
    test::job_files mine(test::file_owner::nobody);
    const std::string id = submit_as_nobody(spool, mine.config);

    const cuopt::spool s(spool, false);
    const job_spec spec = s.read_spec(id);
    CHECK(spec.submitter_uid == 65534);
    CHECK(spec.submitter == "nobody");
    CHECK(s.read_spec(root_job).submitter_uid == 0);
    CHECK(mode_of(spool) == 0711);
    CHECK(mode_of(spool / "submit.sock") == 0666);
    for (const char* f : {".daemon.lock", ".seq", "spool.json"}) CHECK(mode_of(spool / f) == 0600);
    for (const char* d : {"jobs", "staging"}) CHECK(mode_of(spool / d) == 0700);
    CHECK(mode_of(s.job_dir(id)) == 0700);

    const std::string job = s.job_dir(id).string();
    denied("echo '{}' >> " + job + "/job.json");
    denied("mkdir -p " + job + "/results/run-001 && echo '{}' > " + job +
           "/results/run-001/run.json");
    denied("echo OPENAI_BASE_URL=http://127.0.0.1:9 > " + job + "/.env");
    denied("ln -s /etc/shadow " + job + "/state.json.tmp-" + std::to_string(serve.pid()));
    denied("ls " + spool.string() + "/jobs");
    const auto log = s.job_dir(root_job) / "job.log";
    const auto end = std::chrono::steady_clock::now() + 60s;
    while (!fs::exists(log) && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(50ms);
    denied("cat " + log.string());
    CHECK(s.read_spec(id).args.empty());  // nothing the attempts changed
}

TEST_CASE("nobody else can open the spool's lock files, serve and commits go on", "[daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files quick;
    submit_as_owner(spool, quick.config);
    {
        serve_process first(spool, dir / "first.out", {"--devices", "0"});
        first.kill9();
    }
    for (const char* f : {".daemon.lock", ".seq"}) {
        denied("flock -n " + (spool / f).string() + " true");
        denied("exec 3<" + (spool / f).string());
    }
    serve_process second(spool, dir / "second.out", {"--devices", "0"});
    CHECK(second.running());
    test::job_files mine(test::file_owner::nobody);
    const std::string id = submit_as_nobody(spool, mine.config);  // takes .seq under flock
    CHECK(id == "job-000002");
}

TEST_CASE(
    "status shows a user only its own jobs, and cancel of another's is refused unless an "
    "operator group allows it",
    "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files slow(R"("max_iterations": 40, "batch": 2)");
    const std::string root_job = submit_as_owner(spool, slow.config);
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
    operator_group ops;
    std::vector<std::string> flags = {"--devices", "0"};
    {
        serve_process serve(spool, dir / "serve.out", flags);
        test::job_files mine(test::file_owner::nobody);
        const std::string id = submit_as_nobody(spool, mine.config);
        const test::process_result list = nobody_optimizer({"status", "--spool", spool.string()});
        INFO(list.output);
        CHECK(list.exit_code == 0);
        CHECK(list.output.find(id) != std::string::npos);
        CHECK(list.output.find(root_job) == std::string::npos);
        const test::process_result one =
            nobody_optimizer({"status", "--spool", spool.string(), root_job});
        CHECK(one.exit_code == 11);
        CHECK(one.output.find("not your job, or no such job") != std::string::npos);
        CHECK(one.output.find("submitted by") == std::string::npos);  // nothing of whose it is
        const test::process_result missing =
            nobody_optimizer({"status", "--spool", spool.string(), "job-999999"});
        CHECK(missing.output.find("not your job, or no such job") != std::string::npos);
        const test::process_result c =
            nobody_optimizer({"cancel", "--spool", spool.string(), root_job});
        INFO(c.output);
        CHECK(c.exit_code == 11);
        CHECK(std::count(c.output.begin(), c.output.end(), '\n') == 1);
        CHECK(c.output.find("not your job, or no such job") != std::string::npos);
        CHECK_FALSE(cuopt::spool(spool, false).cancel_requested(root_job));
        CHECK(nobody_optimizer({"cancel", "--spool", spool.string(), id}).exit_code == 0);
    }
    if (!ops.made) {
        WARN("groupadd/gpasswd unavailable: the --operators half is not tried");
        return;
    }
    flags.insert(flags.end(), {"--operators", ops.name});
    serve_process serve(spool, dir / "serve2.out", flags);
    const test::process_result list = nobody_optimizer({"status", "--spool", spool.string()});
    CHECK(list.output.find(root_job) != std::string::npos);
    const test::process_result c =
        nobody_optimizer({"cancel", "--spool", spool.string(), root_job});
    INFO(c.output);
    CHECK(c.exit_code == 0);
    CHECK(cuopt::spool(spool, false).cancel_requested(root_job));
}

TEST_CASE(
    "serve empties staging, fixes the spool's modes and holds each user to its job and "
    "byte limits",
    "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files slow(R"("max_iterations": 40, "batch": 2)");
    submit_as_owner(spool, slow.config);
    const fs::path left = spool / "staging" / "stage-deadbeef";
    fs::create_directories(left / "files");
    std::ofstream(left / "files" / "config.json") << "{}";
    fs::permissions(spool / "jobs", fs::perms::all);
    ::chmod((spool / ".seq").c_str(), 0644);
    const test::scoped_env sleep("CUOPT_FAKE_SLEEP_MS", "40");
    {
        serve_process serve(spool, dir / "serve.out",
                            {"--devices", "0", "--max-jobs-per-user", "1"});
        CHECK_FALSE(fs::exists(left));
        CHECK(mode_of(spool / "jobs") == 0700);
        CHECK(mode_of(spool / ".seq") == 0600);
        test::job_files mine(test::file_owner::nobody);
        submit_as_nobody(spool, mine.config);  // queued behind root's long job
        const test::process_result r = nobody_optimizer(
            {"submit", "--spool", spool.string(), "--config", mine.config.string()});
        INFO(r.output);
        CHECK(r.exit_code == 11);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        CHECK(r.output.find("the limit is 1 per user (serve --max-jobs-per-user)") !=
              std::string::npos);
    }
    serve_process serve(spool, dir / "serve2.out", {"--devices", "0", "--max-upload-mb", "0.001"});
    test::job_files big(test::file_owner::nobody);
    const test::process_result r =
        nobody_optimizer({"submit", "--spool", spool.string(), "--config", big.config.string()});
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK(r.output.find("exceed the limit of 1048 bytes per submission") != std::string::npos);
}

TEST_CASE(
    "serve refuses another user's spool, without a daemon a non-owner is sent to the "
    "operator",
    "[daemon]") {
    test::scratch_folder dir;
    const fs::path theirs = dir / "theirs";
    fs::create_directories(theirs);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    const test::process_result r =
        test::run_optimizer({"serve", "--spool", theirs.string(), "--harness", test::k_fake_harness,
                             "--stop-when-idle", "0.1"});
    CHECK(r.exit_code == 26);
    CHECK(r.output.find("belongs to uid 65534") != std::string::npos);

    const fs::path spool = dir / "spool";
    test::job_files quick;
    submit_as_owner(spool, quick.config);
    const test::process_result s = nobody_optimizer({"status", "--spool", spool.string()});
    CHECK(s.exit_code == 26);
    CHECK(s.output == "cuda-optimizer status: no daemon serves " + spool.string() + " (" +
                          (spool / "submit.sock").string() + "): ask its operator\n");
}

TEST_CASE("a gate job submitted through the socket streams its run folder and runs",
          "[integration][daemon]") {
    test::scratch_folder dir;
    test::optimizer_fixture accepted;
    const test::process_result r =
        test::run_optimizer(accepted.args({"--max-iterations", "1", "--no-evidence"}));
    REQUIRE(r.exit_code == 0);
    for (const auto& e : fs::recursive_directory_iterator(accepted.dir.path()))
        REQUIRE(::lchown(e.path().c_str(), 65534, 65534) == 0);
    REQUIRE(::lchown(accepted.dir.path().c_str(), 65534, 65534) == 0);
    const fs::path spool = dir / "spool";
    serve_process serve(spool, dir / "serve.out", {"--devices", "0"});
    const test::process_result sub =
        nobody_optimizer({"submit", "--spool", spool.string(), "--gate", "--accepted",
                          accepted.run().string() + "/"});
    INFO(sub.output);
    REQUIRE(sub.exit_code == 0);
    const std::string id = first_line(sub.output);
    const cuopt::spool s(spool, false);
    CHECK(s.read_spec(id).submitter_uid == 65534);
    const auto end = std::chrono::steady_clock::now() + 120s;
    while (!is_final(s.read_status(id).state) && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(50ms);
    const job_status st = s.read_status(id);
    INFO(st.reason);
    CHECK(st.state == job_state::done);
    CHECK(st.reason == "the gate passed");
}

TEST_CASE("a user holding idle connections is held to a few and times out, others still get in",
          "[daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files quick;
    submit_as_owner(spool, quick.config);
    serve_process serve(spool, dir / "serve.out", {"--devices", "0"});
    // 65534 opens 8 connections and sends nothing; its 9th is refused at once.
    const std::string holder =
        "import socket,sys,time\n"
        "s=[socket.socket(socket.AF_UNIX) for i in range(9)]\n"
        "[x.connect(sys.argv[1]) for x in s[:8]]\n"
        "time.sleep(0.5)\n"
        "s[8].connect(sys.argv[1]); s[8].settimeout(5)\n"
        "print(s[8].recv(4096).decode(), flush=True)\n"
        "time.sleep(20)\n";
    const std::vector<std::string> args = {"--reuid=65534",
                                           "--regid=65534",
                                           "--clear-groups",
                                           "--",
                                           "/usr/bin/python3",
                                           "-c",
                                           holder,
                                           (spool / "submit.sock").string()};
    bp::ipstream out;
    bp::child c("/usr/bin/setpriv", bp::args(args), bp::std_out > out, bp::std_err > bp::null);
    std::string line;
    REQUIRE(std::getline(out, line));
    CHECK(line.find("too many connections") != std::string::npos);
    // Another user is not held up by them.
    const test::process_result other = test::run_program(
        "/usr/bin/setpriv", {"--reuid=65533", "--regid=65533", "--clear-groups", "--",
                             optimizer_for_others(), "status", "--spool", spool.string()});
    INFO(other.output);
    CHECK(other.exit_code == 0);
    ::kill(c.id(), SIGKILL);
    c.wait();
}

TEST_CASE(
    "one user's half-sent large requests hold one request's worth of memory, and colluding "
    "accounts that fill every connection slot do not lock out another user",
    "[integration][daemon][security]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files quick;
    submit_as_owner(spool, quick.config);
    // A request may be 1 MiB * 4/3 + 1 MiB: two of 2 MiB each are more than one user's share.
    serve_process serve(spool, dir / "serve.out", {"--devices", "0", "--max-upload-mb", "1"});
    const std::string hoarder =
        "import socket,sys,time\n"
        "a=socket.socket(socket.AF_UNIX); a.connect(sys.argv[1])\n"
        "a.sendall(b'{\"op\": \"status\", \"pad\": \"' + b'x'*(2<<20))\n"
        "time.sleep(0.5)\n"
        "b=socket.socket(socket.AF_UNIX); b.connect(sys.argv[1]); b.settimeout(10)\n"
        "try:\n"
        "  b.sendall(b'{\"op\": \"status\", \"pad\": \"' + b'x'*(2<<20))\n"
        "except OSError:\n"
        "  pass\n"
        "print(b.recv(4096).decode(), flush=True)\n";
    const test::process_result held =
        as_nobody({"/usr/bin/python3", "-c", hoarder, (spool / "submit.sock").string()});
    INFO(held.output);
    CHECK_THAT(held.output, Catch::Contains("fill what the daemon reads at once"));
    // Eight accounts hold eight idle connections each: all 64 slots. A ninth user gets in.
    const std::string idler =
        "import socket,sys,time\n"
        "s=[socket.socket(socket.AF_UNIX) for i in range(8)]\n"
        "[x.connect(sys.argv[1]) for x in s]\n"
        "print('held', flush=True); time.sleep(20)\n";
    std::vector<std::unique_ptr<bp::child>> idlers;
    std::vector<std::unique_ptr<bp::ipstream>> outs;
    for (int uid = 65520; uid < 65528; ++uid) {
        outs.push_back(std::make_unique<bp::ipstream>());
        idlers.push_back(std::make_unique<bp::child>(
            "/usr/bin/setpriv",
            bp::args({"--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
                      "--clear-groups", "--", "/usr/bin/python3", "-c", idler,
                      (spool / "submit.sock").string()}),
            bp::std_out > *outs.back(), bp::std_err > bp::null));
    }
    for (auto& o : outs) {
        std::string line;
        REQUIRE(std::getline(*o, line));
        CHECK(line == "held");
    }
    const test::process_result other = test::run_program(
        "/usr/bin/setpriv", {"--reuid=65533", "--regid=65533", "--clear-groups", "--",
                             optimizer_for_others(), "status", "--spool", spool.string()});
    INFO(other.output);
    CHECK(other.exit_code == 0);
    for (auto& c : idlers) {
        ::kill(c->id(), SIGKILL);
        c->wait();
    }
}

TEST_CASE("a submitter may not jump the queue, and a huge request is answered in one short line",
          "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    test::job_files quick;
    submit_as_owner(spool, quick.config);
    serve_process serve(spool, dir / "serve.out", {"--devices", "0"});
    test::job_files mine(test::file_owner::nobody);
    const test::process_result jump = nobody_optimizer(
        {"submit", "--spool", spool.string(), "--config", mine.config.string(), "--priority", "9"});
    INFO(jump.output);
    CHECK(jump.exit_code != 0);
    CHECK_THAT(jump.output, Catch::Contains("above 0 only for operators"));
    // The refusal does not echo a 4 MB op back (a client that never reads would pin it).
    const std::string big_op =
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "s.sendall(b'{\"op\":\"' + b'A'*(4<<20) + b'\"}\\n')\n"
        "r=b''\n"
        "while True:\n"
        "  c=s.recv(65536)\n"
        "  if not c: break\n"
        "  r+=c\n"
        "print(len(r)); print(r.decode()[:300])\n";
    const test::process_result r =
        as_nobody({"/usr/bin/python3", "-c", big_op, (spool / "submit.sock").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(std::stoul(first_line(r.output)) < 1000);
    CHECK_THAT(r.output, Catch::Contains("op '" + std::string(40, 'A') +
                                         "'… (4194304 bytes): expected submit, status or cancel"));
}

TEST_CASE(
    "a socket submission's flags must be strings without a NUL, its files at most 1000, and "
    "its --timeout at most serve's default day",
    "[integration][daemon]") {
    test::scratch_folder dir;
    const fs::path spool = dir / "spool";
    serve_process serve(spool, dir / "serve.out", {"--devices", "0"});
    // One raw request as 65534, its reply printed.
    const std::string ask =
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "s.sendall(sys.argv[2].encode()+b'\\n')\n"
        "r=b''\n"
        "while True:\n"
        "  c=s.recv(65536)\n"
        "  if not c: break\n"
        "  r+=c\n"
        "print(r.decode())\n";
    const auto reply_to = [&](const std::string& request) {
        const test::process_result r =
            as_nobody({"/usr/bin/python3", "-c", ask, (spool / "submit.sock").string(), request});
        INFO(request.substr(0, 200) << "\n" << r.output);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.output, Catch::StartsWith("{\"ok\":false"));
        return r.output;
    };
    CHECK_THAT(reply_to(R"({"op":"submit","args":"--max-iterations 3","files":[]})"),
               Catch::Contains("field args: expected an array, found a string"));
    CHECK_THAT(reply_to(R"({"op":"submit","args":["--max-iterations",3],"files":[]})"),
               Catch::Contains("field args[1]: expected a string, found an integer"));
    // The command line would end the word at the NUL and run --model.
    CHECK_THAT(reply_to(R"({"op":"submit","args":["--model\u0000x","gpt"],"files":[]})"),
               Catch::Contains("holds U+0000 (NUL)"));
    std::string many = R"({"op":"submit","files":[)";
    for (int i = 0; i < 1001; ++i)
        many +=
            (i ? "," : "") + std::string(R"({"path":"f)") + std::to_string(i) + R"(","base64":""})";
    CHECK_THAT(reply_to(many + "]}"),
               Catch::Contains("field files: 1001 files; at most 1000 per submission"));
    CHECK(fs::is_empty(spool / "staging"));

    test::job_files mine(test::file_owner::nobody);
    const test::process_result over =
        nobody_optimizer({"submit", "--spool", spool.string(), "--config", mine.config.string(),
                          "--timeout", "86401"});
    INFO(over.output);
    CHECK(over.exit_code == 11);
    // optimize's own ceiling (a day per harness run) speaks first, naming the flag.
    CHECK(over.output ==
          "cuda-optimizer submit: the job's flags: --timeout: expected a number above 0 and at "
          "most 86400 s (24 h), got 86401\n");
    const test::process_result day =
        nobody_optimizer({"submit", "--spool", spool.string(), "--config", mine.config.string(),
                          "--timeout", "86400"});
    INFO(day.output);
    CHECK(day.exit_code == 0);
    // A refusal names the submitter's own file, never where the daemon stages uploads.
    test::job_files planted(test::file_owner::nobody, R"("harness": "/bin/sh")");
    const test::process_result refused = nobody_optimizer(
        {"submit", "--spool", spool.string(), "--config", planted.config.string()});
    INFO(refused.output);
    CHECK(refused.exit_code == 11);
    CHECK_THAT(refused.output, Catch::Contains("config.json: field harness") &&
                                   !Catch::Contains("staging") && !Catch::Contains("stage-"));
}
