// Where the harness cannot confine itself (no Landlock), the optimizer runs the user's own
// kernels with a warning and refuses kernels nobody reviewed unless --allow-unconfined; run.json,
// history.json, the report and the closing lines say how every attempt was confined. Through the
// real cuda-optimizer and fake-harness (CUOPT_FAKE_UNCONFINED=<reason> plays a Linux kernel
// without Landlock; without it the fake confines itself as the real harness does).
#include "orchestrator/commands/confinement_policy.hpp"

#include <catch2/catch.hpp>
#include <sstream>

#include "common/json_document.hpp"
#include "common/landlock.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::optimizer_fixture;

const char* k_reason = "landlock_create_ruleset: Function not implemented (the test's kernel)";

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The lines of CUOPT_FAKE_TRACE ("compile|run device=N ... folder=DIR"); none when it was
// never written.
std::vector<std::string> trace_lines(const fs::path& trace) {
    std::vector<std::string> out;
    if (!fs::exists(trace)) return out;
    std::istringstream in(test::read_text(trace));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::vector<std::string> files_run(const optimizer_fixture& f,
                                   std::vector<std::string> extra = {}) {
    f.dir.write("cands/a_faster.cu", f.kernel("FAKE_MS=1"));
    f.dir.write("cands/b_fastest.cu", f.kernel("FAKE_MS=0.5"));
    std::vector<std::string> a = {
        "--proposer",       "files", "--candidates", (f.dir / "cands").string(),
        "--max-iterations", "3",     "--no-evidence"};
    a.insert(a.end(), extra.begin(), extra.end());
    return f.args(a);
}

// history.json's attempts' confinement fields, in order ("" for null).
std::vector<std::string> attempt_modes(const fs::path& run) {
    const auto history = test::read_checked_json(run / "history.json", "history");
    std::vector<std::string> out;
    for (const auto& a : history["attempts"].GetArray())
        out.push_back(a.HasMember("confinement") && a["confinement"].IsString()
                          ? a["confinement"].GetString()
                          : "");
    return out;
}

}  // namespace

TEST_CASE(
    "kernels nobody reviewed are refused an unconfined harness, the user's own are not, and "
    "--allow-unconfined lifts the refusal",
    "[confinement]") {
    confinement none;
    none.reason = "no Landlock";
    confinement landlock;
    landlock.mode = "landlock";
    landlock.abi = 7;
    optimizer_options o;
    o.proposer = "autotune";
    CHECK(unconfined_refusal(none, o).empty());
    CHECK_THAT(unconfined_warning(none, o),
               Catch::Contains("(no Landlock)") && Catch::Contains("your own kernels only"));
    o.proposer = "files";
    CHECK(unconfined_refusal(none, o) ==
          "the harness runs unconfined (no Landlock): the --candidates folder's kernels, which "
          "nobody reviewed, could read any file you can; pass --allow-unconfined to run them "
          "anyway");
    o.proposer = "llm";
    CHECK_THAT(unconfined_refusal(none, o), Catch::Contains("the model's kernels"));
    {
        const test::scoped_env key("OPENAI_API_KEY", "sk-test");
        o.proposer = "auto";  // a key is configured: the model proposes
        CHECK_THAT(unconfined_refusal(none, o), Catch::Contains("the model's kernels"));
    }
    o.proposer = "autotune";
    o.daemon_job = true;  // the job's initial kernel is untrusted too
    CHECK_THAT(unconfined_refusal(none, o),
               Catch::Contains("this daemon job's kernels") &&
                   Catch::Contains("only when serve is given --allow-unconfined"));
    o.allow_unconfined = true;
    CHECK(unconfined_refusal(none, o).empty());
    CHECK_THAT(unconfined_warning(none, o), Catch::Contains("--allow-unconfined lets"));
    o.allow_unconfined = false;
    CHECK(unconfined_refusal(landlock, o).empty());
    CHECK(unconfined_warning(landlock, o).empty());
}

TEST_CASE(
    "a --candidates run in a harness without Landlock is refused with exit 29 and one line, "
    "before any candidate compiles or runs",
    "[integration][confinement]") {
    optimizer_fixture f;
    const fs::path trace = f.dir / "trace.txt";
    const test::scoped_env bare("CUOPT_FAKE_UNCONFINED", k_reason);
    const test::scoped_env traced("CUOPT_FAKE_TRACE", trace.c_str());
    const auto r = test::run_optimizer(files_run(f));
    INFO(r.output);
    CHECK(r.exit_code == 29);
    CHECK_THAT(
        r.output,
        Catch::Contains(std::string("cuda-optimizer: the harness runs unconfined (") + k_reason +
                        "): the --candidates folder's kernels, which nobody "
                        "reviewed, could read any file you can; pass "
                        "--allow-unconfined to run them anyway\n"));
    CHECK(count_of(r.output, "the harness runs unconfined") == 1);
    CHECK_FALSE(fs::exists(f.run()));  // stopped before the run folder
    // The probe, the initial kernel and the reference compiled (the user's own); nothing ran.
    const std::vector<std::string> lines = trace_lines(trace);
    CHECK(lines.size() == 3);
    for (const std::string& line : lines) {
        CHECK(line.rfind("compile ", 0) == 0);
        CHECK(line.find("/candidates/") == std::string::npos);
    }
}

TEST_CASE(
    "with --allow-unconfined the candidates run in a harness without Landlock, recorded in "
    "run.json "
    "and history.json and warned of on the report and the console",
    "[integration][confinement]") {
    optimizer_fixture f;
    const test::scoped_env bare("CUOPT_FAKE_UNCONFINED", k_reason);
    const auto r = test::run_optimizer(files_run(f, {"--allow-unconfined"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    const auto& c = run["confinement"];
    CHECK(std::string(c["mode"].GetString()) == "none");
    CHECK(std::string(c["reason"].GetString()) == k_reason);
    CHECK(c["allow_unconfined"].GetBool());
    CHECK(c["attempts"]["landlock"].GetInt() == 0);
    CHECK(c["attempts"]["none"].GetInt() == 3);
    CHECK(attempt_modes(f.run()) == std::vector<std::string>{"none", "none", "none"});
    CHECK_THAT(test::read_text(f.run() / "report.html"),
               Catch::Contains("id=\"confinement-warning\"") &&
                   Catch::Contains("3 attempts ran unconfined (landlock_create_ruleset") &&
                   Catch::Contains("--allow-unconfined let them run"));
    CHECK_THAT(r.output, Catch::Contains("confinement: all 3 attempts ran unconfined (") &&
                             Catch::Contains("cuda-optimizer: warning: 3 attempts ran unconfined"));
}

TEST_CASE("autotune on the user's own kernel runs in a harness without Landlock, with the warning",
          "[integration][confinement]") {
    optimizer_fixture f;
    const test::scoped_env bare("CUOPT_FAKE_UNCONFINED", k_reason);
    const auto r = test::run_optimizer(f.args(
        {"--proposer", "autotune", "--max-iterations", "1", "--batch", "2", "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains(std::string("cuda-optimizer: warning: the harness runs "
                                                     "unconfined (") +
                                         k_reason + "): your own kernels only"));
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK_FALSE(run["confinement"]["allow_unconfined"].GetBool());
    const std::vector<std::string> modes = attempt_modes(f.run());
    CHECK(run["confinement"]["attempts"]["none"].GetInt() == static_cast<int>(modes.size()));
    CHECK(std::count(modes.begin(), modes.end(), "none") == static_cast<long>(modes.size()));
    CHECK_THAT(test::read_text(f.run() / "report.html"),
               Catch::Contains("id=\"confinement-warning\""));
}

TEST_CASE(
    "a confined run records every attempt as run under Landlock, its workers confined to the run "
    "folder, and warns of nothing",
    "[integration][confinement]") {
    std::string why;
    const int abi = landlock_abi(&why);
    if (abi == 0) {
        WARN("skipped: this Linux kernel offers no Landlock (" << why << ")");
        return;
    }
    optimizer_fixture f;
    const fs::path log = f.dir / "served.log";
    const test::scoped_env served("CUOPT_FAKE_WORKER_LOG", log.c_str());
    const auto r = test::run_optimizer(files_run(f));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    const auto& c = run["confinement"];
    CHECK(std::string(c["mode"].GetString()) == "landlock");
    CHECK(c["abi"].GetInt() == abi);
    CHECK(c["attempts"]["landlock"].GetInt() == 3);
    CHECK(c["attempts"]["none"].GetInt() == 0);
    CHECK(attempt_modes(f.run()) == std::vector<std::string>{"landlock", "landlock", "landlock"});
    // Workers (started with --root RUN) served the attempts, and every one was valid: a worker
    // confined anywhere else would have refused them.
    CHECK(count_of(test::read_text(log), " worker ") >= 3);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    for (const auto& a : history["attempts"].GetArray())
        CHECK(std::string(a["verdict"].GetString()) == "valid");
    const std::string report = test::read_text(f.run() / "report.html");
    CHECK_THAT(report, Catch::Contains("all 3 attempts ran confined by Landlock (ABI " +
                                       std::to_string(abi) + ")"));
    CHECK_THAT(report, !Catch::Contains("confinement-warning"));
    CHECK_THAT(r.output, !Catch::Contains("warning"));
}

TEST_CASE(
    "a daemon job's kernels, the initial one too, never reach a harness without Landlock: "
    "refused before the initial kernel compiles",
    "[integration][confinement]") {
    optimizer_fixture f;
    const fs::path trace = f.dir / "trace.txt";
    const test::scoped_env bare("CUOPT_FAKE_UNCONFINED", k_reason);
    const test::scoped_env traced("CUOPT_FAKE_TRACE", trace.c_str());
    const auto r = test::run_optimizer(
        f.args({"--proposer", "autotune", "--max-iterations", "1", "--daemon-job"}));
    INFO(r.output);
    CHECK(r.exit_code == 29);
    CHECK_THAT(r.output, Catch::Contains("this daemon job's kernels, which whoever submitted it "
                                         "wrote, could read any file the daemon's user can"));
    const std::vector<std::string> lines = trace_lines(trace);
    CHECK(lines.size() == 1);  // the preflight's probe alone (its own empty kernel)
}

TEST_CASE("fake-harness --worker --root refuses a request outside its root and serves one inside",
          "[integration][confinement]") {
    std::string why;
    if (landlock_abi(&why) == 0) {
        WARN("skipped: this Linux kernel offers no Landlock (" << why << ")");
        return;
    }
    test::scratch_folder dir;
    const fs::path example = fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul";
    fs::create_directories(dir / "root");
    fs::copy(example, dir / "root/matmul", fs::copy_options::recursive);
    const auto r = test::run_program(
        "/bin/sh",
        {"-c", "printf '%s\\n%s\\n' " + (example / "request.json").string() + " " +
                   (dir / "root/matmul/request.json").string() + " | " + CUOPT_FAKE_HARNESS_BINARY +
                   " --worker --root " + (dir / "root").string()});
    INFO(r.output);
    std::istringstream out(r.output);
    std::string first, second;
    std::getline(out, first);
    std::getline(out, second);
    const auto outside = parse_json(first, "first reply");
    CHECK(outside["exit_code"].GetInt() == 64);
    CHECK_THAT(outside["messages"].GetString(),
               Catch::Contains("is outside " + fs::canonical(dir / "root").string()));
    const auto inside = parse_json(second, "second reply");
    CHECK(inside["exit_code"].GetInt() != 64);
    CHECK(fs::exists(dir / "root/matmul/response.json"));
}
