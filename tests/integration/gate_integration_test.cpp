// `cuda-optimizer gate` through the real binary against fake-harness: an accepted run is made
// once per test, then gated with the kernel itself, a slower or wrong version of it, on another
// GPU model, without replay requests, after --accept, and with bad arguments.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/pid_lock.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_fake = CUOPT_FAKE_HARNESS_BINARY;

// A run whose winner (faster.cu, 1 ms per 256^3 on the fake) passed the evidence gates.
struct accepted_run : test::optimizer_fixture {
    accepted_run() {
        dir.write("cands/faster.cu", kernel("FAKE_MS=1"));
        const auto r = test::run_optimizer(
            args({"--proposer", "files", "--candidates", (dir / "cands").string()}));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
    }
    // A version of the accepted kernel with a fake-harness marker.
    std::string version(const std::string& name, const std::string& marker) const {
        return dir.write(name, kernel(marker)).string();
    }
    test::process_result gate(std::vector<std::string> extra = {}) const {
        return test::run_optimizer(test::joined(
            {"gate", "--accepted", run().string(), "--harness", k_fake, "--runs", "3"}, extra));
    }
    rapidjson::Document gate_json(int n = 1) const {
        char name[32];
        std::snprintf(name, sizeof name, "gate-%03d/gate.json", n);
        return test::read_checked_json(run() / name, "gate");
    }
};

std::string text(const rapidjson::Value& v) {
    return v.IsString() ? v.GetString() : "(not a string)";
}

}  // namespace

TEST_CASE(
    "the accepted kernel gated against its own run passes with exit 0 and writes gate.json and a "
    "self-contained gate.html into RUN/gate-001",
    "[integration]") {
    accepted_run f;
    const auto r = f.gate();
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "verdict (FAKE RUN: simulated numbers): PASS: every output matches the oracle"));
    const auto g = f.gate_json();
    CHECK(text(g["verdict"]) == "pass");
    CHECK(g["exit_code"].GetInt() == 0);
    CHECK(text(g["figures_source"]) == "evidence/1.0/significance");
    CHECK(g["kernel"]["is_accepted"].GetBool());
    CHECK(g["runs"].Size() == 3);
    CHECK(text(g["environment"]["recorded"]["device"]["name"]) == "fake CPU device");
    CHECK(g["environment"]["same_model"].GetBool());
    REQUIRE(g["latency"]["cases"].Size() == 2);
    CHECK(g["latency"]["cases"][0]["vs_accepted"]["ratio"].GetDouble() == Approx(1.0));
    CHECK(g["latency"]["cases"][0]["vs_accepted_now"].IsNull());
    const std::string html = test::read_text(f.run() / "gate-001/gate.html");
    CHECK_THAT(html, Catch::Contains("class=\"verdict pass\"") && Catch::Contains("perf-256"));
    // The fake harness measured nothing: the page says so before its verdict.
    CHECK(html.find("id=\"fake-run\"") < html.find("class=\"verdict pass\""));
    CHECK_THAT(html,
               !Catch::Contains("<script") && !Catch::Contains("http") && !Catch::Contains("src="));
    CHECK(f.gate().exit_code == 0);
    CHECK(fs::exists(f.run() / "gate-002/gate.json"));  // the next gate, never overwritten
}

TEST_CASE(
    "a kernel 30% slower fails with exit 1, naming each slower case and the accepted kernel timed "
    "beside it",
    "[integration]") {
    accepted_run f;
    const auto r = f.gate({"--kernel", f.version("slow.cu", "FAKE_MS=1.3")});
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.output,
               Catch::Contains("verdict (FAKE RUN: simulated numbers): FAIL: case 'perf-256' is "
                               "1.300x [1.300, 1.300] slower "
                               "than the accepted figures and 1.300x [1.300, 1.300] slower than "
                               "the accepted kernel timed beside it (limit 1.050x)"));
    CHECK_THAT(r.output, Catch::Contains("case 'perf-384x256x320' is 1.300x"));
    const auto g = f.gate_json();
    CHECK(text(g["verdict"]) == "fail");
    CHECK(g["exit_code"].GetInt() == 1);
    CHECK(g["runs"].Size() == 6);  // the accepted kernel and the new one, 3 rounds each
    CHECK(text(g["runs"][0]["role"]) == "accepted");
    CHECK(text(g["runs"][2]["role"]) == "kernel");  // round 2 reversed
    const auto& c = g["latency"]["cases"][0];
    CHECK(c["vs_accepted"]["regression"].GetBool());
    CHECK(c["vs_accepted_now"]["regression"].GetBool());
    CHECK(c["drift"]["ratio"].GetDouble() == Approx(1.0));
}

TEST_CASE("a kernel slower by less than --threshold passes, and fails under a tighter one",
          "[integration]") {
    accepted_run f;
    const std::string kernel = f.version("a_bit_slower.cu", "FAKE_MS=1.03");
    CHECK(f.gate({"--kernel", kernel}).exit_code == 0);
    const auto r = f.gate({"--kernel", kernel, "--threshold", "0.01"});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("1.030x [1.030, 1.030] slower than the accepted figures"));
}

TEST_CASE("a kernel whose outputs differ from the run's oracle fails with exit 1 naming them",
          "[integration]") {
    accepted_run f;
    const auto r = f.gate({"--kernel", f.version("wrong.cu", "FAKE_WRONG")});
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.output,
               Catch::Contains("rounds 1, 2, 3: case 'correctness-31x37x29': c: 1 of 1147 "
                               "elements differ; worst [0]"));
    const auto g = f.gate_json();
    CHECK(text(g["runs"][1]["verdict"]) == "wrong_output");
    CHECK(g["runs"][1]["wrong_outputs"].Size() == 3);
}

TEST_CASE(
    "a kernel that writes into a declared input fails with exit 1 naming the case and the "
    "argument, though its outputs match",
    "[integration]") {
    accepted_run f;
    const auto r = f.gate({"--kernel", f.version("scribbles.cu", "FAKE_MS=1 FAKE_WRITES_INPUT=b")});
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("mutates_inputs: case 'correctness-31x37x29': the kernel "
                                         "wrote into input 'b' (declared input, not inout)"));
    const auto g = f.gate_json();
    CHECK(text(g["runs"][1]["verdict"]) == "mutates_inputs");
    CHECK(text(g["runs"][0]["verdict"]) == "valid");  // the accepted kernel beside it
}

TEST_CASE("a kernel that does not compile fails with exit 1 and the compiler's line",
          "[integration]") {
    accepted_run f;
    const auto r = f.gate({"--kernel", f.version("broken.cu", "FAKE_COMPILE_ERROR")});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("compile_error") && Catch::Contains("FAKE_COMPILE_ERROR"));
}

TEST_CASE("another GPU model cannot be judged: exit 2, both models named", "[integration]") {
    accepted_run f;
    test::scoped_env model("CUOPT_FAKE_DEVICE_NAME", "NVIDIA A100-SXM4-80GB");
    const auto r = f.gate();
    INFO(r.output);
    REQUIRE(r.exit_code == 2);
    CHECK_THAT(
        r.output,
        Catch::Contains(
            "verdict (FAKE RUN: simulated numbers): CANNOT JUDGE: another GPU model: the accepted "
            "figures come from fake CPU device, this is NVIDIA "
            "A100-SXM4-80GB"));
    const auto g = f.gate_json();
    CHECK(text(g["verdict"]) == "cannot_judge");
    CHECK_FALSE(g["environment"]["same_model"].GetBool());
    CHECK(g["latency"].IsNull());
}

TEST_CASE("a changed driver is named in the verdict, and a drifted machine is told from the kernel",
          "[integration]") {
    std::optional<accepted_run> f;
    {
        test::scoped_env driver("CUOPT_FAKE_DRIVER_VERSION", "12080");  // the run: driver 12.8
        f.emplace();
    }
    test::scoped_env driver("CUOPT_FAKE_DRIVER_VERSION", "13010");
    test::scoped_env drift("CUOPT_FAKE_MACHINE_SLOWDOWN", "1.25");
    const auto r = f->gate({"--kernel", f->version("same.cu", "FAKE_MS=1")});
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("environment: driver changed: 12.8 -> 13.1"));
    CHECK_THAT(r.output, Catch::Contains("slower now too: the machine drifted"));
    CHECK_THAT(r.output, Catch::Contains("; environment: driver changed: 12.8 -> 13.1"));
    CHECK_THAT(r.output, !Catch::Contains("than the accepted kernel timed beside it"));
}

TEST_CASE("a run folder without replay requests cannot be judged: exit 2 naming the file",
          "[integration]") {
    accepted_run f;
    for (int i = 0; i < 3; ++i) fs::remove(f.run() / ("best-case-" + std::to_string(i) + ".json"));
    const auto r = f.gate();
    INFO(r.output);
    REQUIRE(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("CANNOT JUDGE: no replay request") &&
                             Catch::Contains("best-case-0.json"));
    CHECK(text(f.gate_json()["verdict"]) == "cannot_judge");
}

TEST_CASE(
    "gate --accept records the kernel's figures as the run's baseline, later gates hold kernels to "
    "it, and a wrong kernel is never accepted",
    "[integration]") {
    accepted_run f;
    const std::string slow = f.version("slow.cu", "FAKE_MS=1.3");
    auto r = f.gate({"--kernel", slow, "--accept"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);  // slower than before, but accepted on purpose
    CHECK_THAT(r.output, Catch::Contains("verdict (FAKE RUN: simulated numbers): FAIL") &&
                             Catch::Contains("baseline: recorded; later gates hold kernels"));
    const auto baseline = test::read_checked_json(f.run() / "gate-baseline.json", "gate-baseline");
    CHECK(baseline["cases"].Size() == 2);
    CHECK(baseline["cases"][0]["runs"].Size() == 3);
    CHECK(test::read_text(f.run() / "gate-baseline.cu") == test::read_text(slow));
    CHECK(f.gate_json()["baseline"]["written"].GetBool());

    r = f.gate();  // the accepted kernel is now slow.cu, held to its own figures
    CHECK(r.exit_code == 0);
    CHECK(text(f.gate_json(2)["figures_source"]) == "gate-baseline.json");
    CHECK_THAT(text(f.gate_json(2)["kernel"]["file"]), Catch::EndsWith("gate-baseline.cu"));
    CHECK(f.gate({"--kernel", f.version("fast.cu", "FAKE_MS=1")}).exit_code == 0);
    r = f.gate({"--kernel", f.version("slower.cu", "FAKE_MS=1.5")});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("1.154x"));  // 1.5 / 1.3 of the new baseline

    r = f.gate({"--kernel", f.version("wrong.cu", "FAKE_WRONG"), "--accept"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("baseline: not recorded"));
    CHECK(test::read_text(f.run() / "gate-baseline.cu") == test::read_text(slow));
}

TEST_CASE("the gate's bad arguments exit 64 naming the flag", "[integration]") {
    accepted_run f;
    const std::string run = f.run().string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"gate"}, "--accepted"},
        {{"gate", "--accepted", "/nonexistent/run-001"}, "--accepted"},
        {{"gate", "--accepted", run, "--kernel", "/nonexistent/k.cu"}, "--kernel"},
        {{"gate", "--accepted", run, "--runs", "0"}, "--runs"},
        {{"gate", "--accepted", run, "--threshold", "-0.1"}, "--threshold"},
        {{"gate", "--accepted", run, "--runz", "3"}, "did you mean --runs"},
        {{"gate", "--accepted", run, "--out", (f.dir / "cands").string()}, "--out"},
    };
    for (const auto& [args, flag] : bad) {
        const auto r = test::run_optimizer(args);
        INFO(r.output);
        CHECK(r.exit_code == 64);
        CHECK_THAT(r.output, Catch::Contains(flag));
    }
    const auto help = test::run_optimizer({"gate", "--help"});
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.output,
               Catch::Contains("--threshold") && Catch::Contains("Exit codes: 0 pass"));
}

TEST_CASE("gate --out puts the gate's files in a fresh folder of its own", "[integration]") {
    accepted_run f;
    const fs::path out = f.dir / "ci" / "gate";
    const auto r = f.gate({"--out", out.string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(out / "gate.json"));
    CHECK(fs::exists(out / "gate.html"));
    CHECK_FALSE(fs::exists(f.run() / "gate-001"));
}

TEST_CASE(
    "on a GPU the pilot's winner passes its own gate and a version slowed by a sleep in every "
    "thread fails it",
    "[integration][gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::optimizer_fixture f;  // the pilot; the fake's marker comment means nothing on a GPU
    auto r = test::run_optimizer(
        test::joined(test::optimize_args(f.dir.path(), CUOPT_HARNESS_BINARY),
                     {"--max-iterations", "1", "--no-sanitizer", "--significance-runs", "3"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::vector<std::string> gate = {"gate", "--accepted", f.run().string(), "--harness",
                                           CUOPT_HARNESS_BINARY};
    r = test::run_optimizer(gate);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("verdict: PASS"));  // a real GPU: no FAKE RUN mark
    std::string slow = test::read_text(f.run() / "best.cu");
    const auto body = slow.find("const int col = ");  // the kernel body's first statement
    REQUIRE(body != std::string::npos);
    slow.insert(body, "__nanosleep(100000u);\n    ");  // every thread 0.1 ms later
    r = test::run_optimizer(
        test::joined(gate, {"--kernel", f.dir.write("slow.cu", slow).string()}));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("slower than the accepted figures"));
}

TEST_CASE("a gate folder that cannot be created cannot be judged: exit 2 saying why",
          "[integration]") {
    accepted_run f;
    const fs::path below_a_file = f.dir / "cands" / "faster.cu" / "gate";
    const auto r = f.gate({"--out", below_a_file.string()});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("cannot create the gate's folder"));
}

TEST_CASE(
    "a replay request's input_file outside the run folder is refused before anything is "
    "replaced: the gate cannot judge, the file stays",
    "[integration]") {
    // A gate job's accepted run folder comes from another user: the gate runs as the daemon's
    // user and links each input_file beside its request, removing what is there first.
    accepted_run f;
    test::scratch_folder victim;
    const fs::path kept = victim.write("kept", "the daemon user's file\n");
    for (const std::string& name : {kept.string(), "../../../../../../../../.." + kept.string()}) {
        INFO(name);
        const fs::path request = f.run() / "best-case-0.json";
        rapidjson::Document d = parse_json(read_text_file(request), "best-case-0.json");
        auto& a = d.GetAllocator();
        rapidjson::Value& arg = d["cases"][0]["args"][0];
        arg.RemoveMember("input_file");
        arg.AddMember("input_file", json_text(name, a), a);
        write_file_atomic(request, to_pretty_json(d));
        const auto r = f.gate();
        INFO(r.output);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.output, Catch::Contains("expected a path inside the run folder"));
        CHECK(fs::is_regular_file(kept));
        CHECK(read_text_file(kept) == "the daemon user's file\n");
    }
}

TEST_CASE(
    "a summary.json naming an oracle or replay request outside the run folder cannot be "
    "judged",
    "[integration]") {
    accepted_run f;
    const fs::path summary = f.run() / "summary.json";
    rapidjson::Document d = parse_json(read_text_file(summary), "summary.json");
    auto& a = d.GetAllocator();
    d["cases"][0].RemoveMember("replay_request");
    d["cases"][0].AddMember("replay_request", json_text("/etc/passwd", a), a);
    write_file_atomic(summary, to_pretty_json(d));
    const auto r = f.gate();
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("replay_request /etc/passwd: expected a path inside the "
                                         "run folder"));
}

TEST_CASE("a gate holds its folder's .lock and hands it to every harness it starts",
          "[integration]") {
    accepted_run f;
    // A harness that notes what it was handed open, then is the fake one.
    const fs::path noted = f.dir / "harness-fds.txt";
    const fs::path harness = f.dir.write(
        "harness.sh", "#!/bin/sh\nfor fd in /proc/$$/fd/*; do readlink \"$fd\"; done >> " +
                          noted.string() + "\nexec " + k_fake + " \"$@\"\n");
    fs::permissions(harness, fs::perms::owner_all);
    const auto r = test::run_optimizer(
        {"gate", "--accepted", f.run().string(), "--harness", harness.string(), "--runs", "1"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const fs::path lock = f.run() / "gate-001/.lock";
    CHECK_THAT(test::read_text(noted), Catch::Contains(lock.string()));
    // Free once the gate and its harnesses have ended.
    std::string holder;
    CHECK(pid_lock::try_take(lock, 0644, holder));
}

TEST_CASE(
    "gating another user's run: no gate folder is made inside it, and a best.cu linked to a "
    "file only the operator may read is refused, never copied or compiled",
    "[integration][security]") {
    if (::geteuid() != 0 || test::run_program("setpriv", {"--version"}).exit_code != 0) {
        WARN("skipped: the attack needs root (the operator) and setpriv (uid 65534)");
        return;
    }
    accepted_run f;
    // The operator's secret, and the attacker's run folder (theirs: they made it, they own it).
    const fs::path secret = f.dir.write("operator/secret.txt", "TOP-SECRET-LINE\n");
    fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
    const fs::path theirs = f.dir / "theirs";
    fs::create_directories(theirs);
    fs::permissions(f.dir.path(), fs::perms::all);
    fs::copy(f.run(), theirs / "run", fs::copy_options::recursive);
    const auto chown = test::run_program("/bin/chown", {"-R", "65534:65534", theirs.string()});
    REQUIRE(chown.exit_code == 0);
    const fs::path run = theirs / "run";
    const auto planted = test::run_program(
        "setpriv", {"--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c",
                    "rm -f " + (run / "best.cu").string() + " && ln -s " + secret.string() + " " +
                        (run / "best.cu").string()});
    REQUIRE(planted.exit_code == 0);
    // The default folder, RUN/gate-NNN, would be made by path inside the attacker's folder.
    auto r = test::run_optimizer(
        {"gate", "--accepted", run.string(), "--harness", k_fake, "--runs", "3"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("another user's") && Catch::Contains("--out"));
    CHECK_FALSE(fs::exists(run / "gate-001"));
    // In a folder of the operator's: the linked best.cu is refused, its target never read.
    const fs::path out = f.dir / "operator" / "gate";
    r = test::run_optimizer({"gate", "--accepted", run.string(), "--harness", k_fake, "--runs", "3",
                             "--out", out.string()});
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("best.cu") && Catch::Contains("a link"));
    CHECK(r.output.find("TOP-SECRET") == std::string::npos);
    for (const auto& e : fs::recursive_directory_iterator(out))
        if (e.is_regular_file())
            CHECK(test::read_text(e.path()).find("TOP-SECRET") == std::string::npos);
}
