// The whole loop through the real cuda-optimizer binary and the real process runner,
// against fake-harness (a CPU stand-in honouring the file contract) on CI.
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/runner_process.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_examples = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";
const std::string k_fake = CUOPT_FAKE_HARNESS_BINARY;
using test::optimizer_fixture;
using test::verdict_of;

}  // namespace

TEST_CASE("a harness that could not write its response says why, and the run goes on",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_disk_full.cu", f.kernel("FAKE_DISK_FULL"));
    f.dir.write("cands/b_fine.cu", f.kernel("FAKE_MS=1"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--max-iterations", "5", "--isolation", "process"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(verdict_of(history, "a_disk_full.cu") == "harness_error");
    CHECK(verdict_of(history, "b_fine.cu") == "valid");
    std::string flat = r.output;
    for (std::size_t p; (p = flat.find("\n    ")) != std::string::npos;) flat.replace(p, 5, " ");
    CHECK_THAT(flat, Catch::Contains("it said: cuda-harness: internal_error: cannot write ") &&
                         Catch::Contains("response.json: No space left on device (errno 28)"));
}

TEST_CASE(
    "a files run survives every bad candidate with the right verdict and keeps the fastest valid "
    "one",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_compile_error.cu", f.kernel("FAKE_COMPILE_ERROR"));
    f.dir.write("cands/b_wrong.cu", f.kernel("FAKE_WRONG FAKE_MS=0.1"));
    f.dir.write("cands/c_unwritten.cu", f.kernel("FAKE_SKIP_LAST_ROW FAKE_MS=0.1"));
    f.dir.write("cands/d_crash.cu", f.kernel("FAKE_CRASH"));
    f.dir.write("cands/e_hang.cu", f.kernel("FAKE_HANG"));
    f.dir.write("cands/f_illegal.cu", f.kernel("FAKE_ILLEGAL_ADDRESS"));
    f.dir.write("cands/g_faster.cu", f.kernel("FAKE_MS=1"));
    f.dir.write("cands/h_noise.cu", f.kernel("FAKE_MS=0.995"));
    f.dir.write("cands/i_bad_option.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/i_bad_option.json",
                R"({ "compile_options": ["-rdc=true"], "rationale": "relocatable code" })");
    f.dir.write("cands/l_no_cases.cu", f.kernel("FAKE_NO_CASES FAKE_MS=0.1"));
    f.dir.write("cands/m_missing_output.cu", f.kernel("FAKE_MISSING_OUTPUT FAKE_MS=0.1"));
    f.dir.write("cands/n_bad_entry.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/n_bad_entry.json", R"({ "entry": 5 })");
    f.dir.write("cands/o_options_not_array.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/o_options_not_array.json", R"({ "compile_options": "x" })");
    f.dir.write("cands/p_launch_not_object.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/p_launch_not_object.json", R"({ "case_launch": { "perf-256": 5 } })");
    f.dir.write("cands/q_empty_side_file.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/q_empty_side_file.json", "");
    f.dir.write("cands/r_float_define.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/r_float_define.json", R"({ "defines": { "BLOCK_X": 1.5 } })");
    f.dir.write("cands/s_launch_not_whole.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/s_launch_not_whole.json", R"({ "launch": { "grid": ["n/7", "m/7"] } })");
    f.dir.write("cands/j_bad_side_file.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/j_bad_side_file.json", R"({ "rationale": "typo", "case_lunch": {} })");
    f.dir.write("cands/k_unknown_case.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/k_unknown_case.json",
                R"({ "case_launch": { "perf-999": { "block": [8, 8] } } })");
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--max-iterations", "20", "--timeout", "2", "--description", "caf\xe9 latin-1"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(verdict_of(history, "initial.cu") == "valid");
    CHECK(verdict_of(history, "a_compile_error.cu") == "compile_error");
    CHECK(verdict_of(history, "b_wrong.cu") == "wrong_output");
    CHECK(verdict_of(history, "c_unwritten.cu") == "unwritten_output");
    CHECK(verdict_of(history, "d_crash.cu") == "crash");
    CHECK(verdict_of(history, "e_hang.cu") == "timeout");
    CHECK(verdict_of(history, "f_illegal.cu") == "cuda_error");
    CHECK(verdict_of(history, "g_faster.cu") == "valid");
    CHECK(verdict_of(history, "h_noise.cu") == "valid");
    CHECK(verdict_of(history, "i_bad_option.cu") == "invalid_request");
    CHECK(verdict_of(history, "j_bad_side_file.cu") == "invalid_submission");
    CHECK(verdict_of(history, "k_unknown_case.cu") == "invalid_submission");
    CHECK_THAT(r.output, Catch::Contains("j_bad_side_file.json: field case_lunch"));
    CHECK(verdict_of(history, "l_no_cases.cu") ==
          "harness_error");  // ok with no cases is not valid
    CHECK_THAT(r.output, Catch::Contains("cuda-harness said ok but the response has no case"));
    CHECK(verdict_of(history, "m_missing_output.cu") == "harness_error");
    // Reasons are wrapped at words on indented lines; read them as one line.
    std::string flat = r.output;
    for (std::size_t p; (p = flat.find("\n    ")) != std::string::npos;) flat.replace(p, 5, " ");
    CHECK_THAT(flat, Catch::Contains("the output 'c' file correctness-31x37x29.c.bin is missing"));
    for (const char* bad : {"n_bad_entry.cu", "o_options_not_array.cu", "p_launch_not_object.cu",
                            "q_empty_side_file.cu", "r_float_define.cu", "s_launch_not_whole.cu"})
        CHECK(verdict_of(history, bad) == "invalid_submission");
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "proposer_exhausted");
    CHECK(std::string(summary["best"]["label"].GetString()) ==
          "g_faster.cu");  // h is within the 1% minimum gain
    CHECK(summary["best"]["speedup_vs_initial"].GetDouble() == Approx(2.0));
    CHECK(summary["counts"]["rejected"]["timeout"].GetInt() == 1);
    CHECK(summary["counts"]["valid"].GetInt() == 3);
    CHECK(test::read_text(f.run() / "best.cu").find("FAKE_MS=1") != std::string::npos);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");  // strict UTF-8 too
    CHECK(run["settings"]["timeout_s"].GetDouble() == 2.0);  // settings of record are numbers
    CHECK(std::string(run["settings"]["description"].GetString()) == "caf\xef\xbf\xbd latin-1");
    CHECK(run["settings"]["max_iterations"].GetInt() == 20);
    for (int i = 0; i < 3; ++i)
        test::read_checked_json(f.run() / ("best-case-" + std::to_string(i) + ".json"), "request");
    // Each regex on its own line: std::regex recurses per character, and [^]* over the whole
    // output overflowed the stack under ASan once the closing lines grew.
    const auto line_of = [&](const std::string& start) {
        const std::size_t at = r.output.find(start);
        if (at == std::string::npos) return std::string("(no line starting '" + start + "')");
        return r.output.substr(at, r.output.find('\n', at) - at);
    };
    CHECK_THAT(line_of("[iter 5/20 #0"), Catch::Matches("\\[iter 5/20 #0 +[0-9.]+ s\\] files    "
                                                        "e_hang.cu  timeout  \\(best 1\\.00x\\):"));
    CHECK_THAT(r.output, Catch::Contains("(best 1.00x):\n    "));
    // The closing verdict names the best, its speedup, the counts and the run.
    CHECK_THAT(r.output, Catch::Contains("\nno_go (FAKE RUN: simulated numbers): best: "));
    CHECK_THAT(line_of("no_go (FAKE RUN: simulated numbers): best: "),
               Catch::Matches("no_go \\(FAKE RUN: simulated numbers\\): best: g_faster\\.cu "
                              "\\(iteration [0-9]+, attempt 0\\), "
                              "2\\.00x geomean over the initial kernel[^\n]*; [0-9]+ "
                              "attempts, 3 valid, [0-9]+ rejected \\([^\n]*timeout 1[^\n]*"
                              "\\); run-001 in [0-9]+ s"));
    const std::string png = test::read_text(f.run() / "heatmap.png");
    CHECK(png.rfind("\x89PNG", 0) == 0);
    const std::string svg = test::read_text(f.run() / "heatmap.svg");
    CHECK(svg.find("<svg") != std::string::npos);
}

TEST_CASE("a wrong-output verdict says which case, which element and both values",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/wrong.cu", f.kernel("FAKE_WRONG"));
    REQUIRE(test::run_optimizer(
                f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string()}))
                .exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    const auto& wrong = history["attempts"][1];
    CHECK_THAT(wrong["reason"].GetString(),
               Catch::StartsWith(
                   "case 'correctness-31x37x29': c: 1 of 1147 elements differ; worst [0]: got"));
    CHECK(wrong["cases"][0]["outputs"][0]["worst_index"].GetInt() == 0);
}

TEST_CASE("replay of every best-case request matches, and a tampered oracle is a mismatch",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/faster.cu", f.kernel("FAKE_MS=1"));
    REQUIRE(test::run_optimizer(
                f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string()}))
                .exit_code == 0);
    for (int i = 0; i < 3; ++i) {
        const auto r = test::run_optimizer(
            {"replay", (f.run() / ("best-case-" + std::to_string(i) + ".json")).string(),
             "--harness", k_fake});
        INFO(r.output);
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.output, Catch::Contains("verdict: match"));
    }
    std::vector<float> oracle =
        test::read_values<float>(f.run() / "reference/outputs/perf-256.c.bin");
    oracle[7] += 1.0f;
    f.dir.write_values("results/run-001/reference/outputs/perf-256.c.bin", oracle);
    const auto r = test::run_optimizer(
        {"replay", (f.run() / "best-case-1.json").string(), "--harness", k_fake});
    CHECK(r.exit_code == 24);
    CHECK_THAT(r.output, Catch::Contains("MISMATCH") && Catch::Contains("worst [7]"));
}

TEST_CASE(
    "autotune finds the best tunable configuration, never repeats one and is deterministic under a "
    "seed",
    "[integration]") {
    optimizer_fixture f;
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    auto replace_line = [&manifest](const std::string& key, const std::string& line) {
        const auto start = manifest.find(key);
        manifest.replace(start, manifest.find('\n', start) - start, line);
    };
    replace_line("\"tunables\"",
                 R"("tunables": { "TILE": [8, 16, 24, 32, 40, 64], "UNROLL": [1, 32, 4] },)");
    replace_line(
        "\"launch\"",
        R"~("launch": { "grid": ["ceil(n/16)", "ceil(m/16)", 1], "block": [16, 16, 1] },)~");
    f.dir.write("input_cases.json", manifest);
    // The kernel reads its tunables (check refuses one it never reads).
    f.dir.write("initial.cu", "static_assert(TILE > 0 && UNROLL > 0, \"tunables\");\n" +
                                  test::read_text(f.dir / "initial.cu"));
    auto run_once = [&](const std::string& seed) {
        const auto r = test::run_optimizer(f.args(
            {"--proposer", "autotune", "--seed", seed, "--max-iterations", "7", "--batch", "4"}));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
    };
    run_once("7");
    run_once("7");
    const auto h1 = test::read_checked_json(f.run(1) / "history.json", "history");
    const auto h2 = test::read_checked_json(f.run(2) / "history.json", "history");
    std::set<std::string> labels;
    REQUIRE(h1["attempts"].Size() == h2["attempts"].Size());
    for (rapidjson::SizeType i = 0; i < h1["attempts"].Size(); ++i) {
        const std::string label = h1["attempts"][i]["label"].GetString();
        CHECK(label == h2["attempts"][i]["label"].GetString());
        CHECK(labels.insert(label).second);  // never the same configuration twice
    }
    const auto summary = test::read_checked_json(f.run(1) / "summary.json", "summary");
    CHECK_THAT(summary["best"]["label"].GetString(), Catch::StartsWith("TILE=32 UNROLL=32"));
    CHECK(summary["best"]["speedup_vs_initial"].GetDouble() > 1.5);
}

TEST_CASE("expected-output files are an oracle that needs no reference kernel", "[integration]") {
    optimizer_fixture f;
    REQUIRE(test::run_optimizer(f.args({"--max-iterations", "0"})).exit_code == 0);
    // Keep the first run's oracle as expected files, and the inputs it was made from (the
    // reference's dump: each run keys its generated inputs with its own secret, so the second
    // run gets them as files), then run again without --reference.
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    for (const char* c : {"correctness-31x37x29", "perf-256", "perf-384x256x320"}) {
        const std::string name = c;
        fs::copy_file(f.run() / "reference/outputs" / (name + ".c.bin"),
                      f.dir / ("expected-" + name + ".bin"));
        for (const char* arg : {"a", "b"})
            fs::copy_file(f.run() / "reference/inputs" / (name + "." + arg + ".bin"),
                          f.dir / (name + "." + arg + ".bin"));
        const std::string key = "\"name\": \"" + name + "\",";
        manifest.insert(manifest.find(key) + key.size(),
                        " \"expected\": { \"c\": \"expected-" + name + ".bin\" }, " +
                            "\"inputs\": { \"a\": { \"kind\": \"file\", \"file\": \"" + name +
                            ".a.bin\" }, \"b\": { \"kind\": \"file\", \"file\": \"" + name +
                            ".b.bin\" } },");
    }
    f.dir.write("input_cases.json", manifest);
    std::vector<std::string> a = f.args({"--max-iterations", "0"});
    a.erase(a.begin() + 1, a.begin() + 3);  // no --reference
    const auto r = test::run_optimizer(a);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run(2) / "history.json", "history");
    CHECK(std::string(history["attempts"][0]["verdict"].GetString()) == "valid");
    CHECK(fs::exists(f.run(2) / "reference/expected/perf-256.c.bin"));
    // And a case without any oracle is refused before the search.
    f.dir.write("input_cases.json", test::read_text(k_examples + "input_cases.json"));
    const auto none = test::run_optimizer(a);
    CHECK(none.exit_code == 11);
    CHECK_THAT(none.output,
               Catch::Contains("has no oracle: no --reference and no cases[].expected") &&
                   Catch::Contains("fix: pass --reference FILE.cu"));
}

TEST_CASE("run folders are numbered and never overwritten", "[integration]") {
    optimizer_fixture f;
    fs::create_directories(f.dir / "results/run-001");
    f.dir.write("results/run-001/keep.txt", "earlier run");
    REQUIRE(test::run_optimizer(f.args({"--max-iterations", "1"})).exit_code == 0);
    CHECK(fs::exists(f.run(2) / "summary.json"));
    CHECK(test::read_text(f.run(1) / "keep.txt") == "earlier run");
}

TEST_CASE("an initial kernel that fails a case stops the run and says which case and why",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_SKIP_LAST_ROW"));
    const auto r = test::run_optimizer(f.args());
    CHECK(r.exit_code == 21);
    CHECK_THAT(r.output, Catch::Contains("initial.cu  unwritten_output") &&
                             Catch::Contains("case 'correctness-31x37x29': c:") &&
                             Catch::Contains("the initial kernel fails (why: its line above)"));
    CHECK(fs::exists(f.run() / "history.json"));
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK_THAT(std::string(summary["error"].GetString()),
               Catch::StartsWith("the initial kernel fails: unwritten_output: case "
                                 "'correctness-31x37x29': c:"));
}

TEST_CASE("a reference that leaves outputs unwritten is refused as an oracle", "[integration]") {
    optimizer_fixture f;
    f.dir.write("reference.cu", f.kernel("FAKE_SKIP_LAST_ROW"));
    const auto r = test::run_optimizer(f.args());
    CHECK(r.exit_code == 22);
    CHECK_THAT(r.output,
               Catch::Contains("the reference left 37 of 1147 elements of 'c' unwritten"));
}

TEST_CASE("manifest and signature errors stop the run before anything runs", "[integration]") {
    optimizer_fixture f;
    auto r = test::run_optimizer(f.args(
        {"--signature",
         "void matmul_f32(const float* a, const double* b, float* c, int m, int n, int k)"}));
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "parameter 1 ('b' vs args[1] 'b'): 'double' is f64 but the manifest says f32"));
    CHECK_FALSE(fs::exists(f.dir / "results"));
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    manifest.replace(manifest.find("\"m*k\""), 5, "\"m*q\"");
    f.dir.write("input_cases.json", manifest);
    r = test::run_optimizer(f.args());
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("unknown name 'q'"));
}

TEST_CASE("unknown flags are rejected by name and every subcommand has help", "[integration]") {
    auto r = test::run_optimizer({"optimize", "--frobnicate"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("unknown option --frobnicate for optimize"));
    // The closest valid word is named, and a value after a misspelt flag is not blamed.
    r = test::run_optimizer({"optimize", "--max-iteration", "3"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("unknown option --max-iteration for optimize; did you "
                                         "mean --max-iterations?"));
    r = test::run_optimizer({"optimise", "--max-iterations", "3"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("unknown command 'optimise'; did you mean optimize?"));
    r = test::run_optimizer({"check", "--max-iterations", "3"});  // optimize's, not check's
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("unknown option --max-iterations for check"));
    r = test::run_optimizer({"optimize", "--description", "--fast kernels", "--frob"});
    CHECK_THAT(r.output,
               Catch::Contains("unknown option --frob for") && !Catch::Contains("--fast"));
    r = test::run_optimizer({"--version"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Matches("cuda-optimizer [0-9.]+ \\(commit [0-9a-z]+\\)\\s*"));
    // check's help lists only what check uses; every help ends with an example and exit codes.
    r = test::run_optimizer({"check", "--help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("--initial-kernel FILE") &&
                             Catch::Contains("--results-dir DIR") &&
                             !Catch::Contains("--max-iterations") && Catch::Contains("Example:") &&
                             Catch::Contains("Exit codes: 0 ready"));
    r = test::run_optimizer({"optimize", "--help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("--initial-kernel") &&
                             Catch::Contains("--max-iterations") && Catch::Contains("--config"));
    CHECK(test::run_optimizer({"replay", "--help"}).exit_code == 0);
}

TEST_CASE("every command's help has an example and its exit codes, and its example's flags parse",
          "[integration]") {
    for (const std::string command : {"optimize", "check", "replay", "report", "gate", "serve",
                                      "submit", "status", "cancel", "suite", "import", "export"}) {
        INFO(command);
        const auto r = test::run_optimizer({command, "--help"});
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.output, Catch::Contains("Example:") && Catch::Contains("Exit codes:") &&
                                 !Catch::Contains("README's"));
    }
    // optimize's 0 is any verdict; no_go is 0 unless --fail-on-no-go makes it 30.
    const auto optimize = test::run_optimizer({"optimize", "--help"});
    CHECK_THAT(optimize.output, Catch::Contains("go, no_go or no_winner") &&
                                    Catch::Contains("30 no_go with") &&
                                    !Catch::Contains("0 done (a winner that passed"));
    // report's own example: its flags are in range (the run folder is what is missing here).
    const auto report = test::run_optimizer({"report", "no-such-run", "--invocations-per-month",
                                             "2e9", "--gpu-hour-cost", "3.5", "--engineer-hours",
                                             "6", "--engineer-rate", "120"});
    CHECK(report.exit_code == 11);
    CHECK_THAT(report.output, !Catch::Contains("--invocations-per-month"));
}

TEST_CASE("a config file works from any working folder and flags win over it", "[integration]") {
    optimizer_fixture f;
    f.dir.write("cfg/config.json",
                R"({ "reference": "../reference.cu", "initial_kernel": "../initial.cu",
        "input_cases": "../input_cases.json", "results_dir": "../out", "max_iterations": 1, "harness": ")" +
                    k_fake + R"(", "sanitizer": ")" + std::string(CUOPT_SOURCE_DIR) +
                    R"(/tests/fake-compute-sanitizer.sh" })");
    const auto r = test::run_optimizer(
        {"optimize", "--config", (f.dir / "cfg/config.json").string(), "--max-iterations", "0"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.dir / "out/run-001/summary.json", "summary");
    CHECK(summary["iterations_run"].GetInt() == 0);
    f.dir.write("cfg/bad.json", R"({ "max_iteration": 3 })");
    // check reads the same config: optimize's own keys (max_iterations) are not its business.
    const auto check =
        test::run_optimizer({"check", "--config", (f.dir / "cfg/config.json").string()});
    INFO(check.output);
    CHECK(check.exit_code == 0);
    CHECK_THAT(check.output, Catch::EndsWith("ready\n"));
    const auto bad =
        test::run_optimizer({"optimize", "--config", (f.dir / "cfg/bad.json").string()});
    CHECK(bad.exit_code == 11);
    CHECK_THAT(bad.output, Catch::Contains("bad.json: field max_iteration: unknown option"));
}

namespace {

// Starts cuda-optimizer with `args` in the background, stderr to `stderr_file`, after
// `in_child` (which runs in the child, before exec) has set it up; returns its pid.
pid_t start_optimizer(std::vector<std::string> args, const std::string& stderr_file = "/dev/null",
                      const std::function<void()>& in_child = {}) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (in_child) in_child();
        std::vector<char*> argv = {const_cast<char*>(CUOPT_OPTIMIZER_BINARY)};
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        if (!freopen(stderr_file.c_str(), "w", stderr)) _exit(126);
        execv(CUOPT_OPTIMIZER_BINARY, argv.data());
        _exit(127);
    }
    return pid;
}

// Running or sleeping, not gone and not a zombie waiting for its reaper.
bool process_alive(const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

bool dies_within(const std::string& pid, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (process_alive(pid) && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return !process_alive(pid);
}

}  // namespace

TEST_CASE(
    "a harness's own children cannot hold the run: the timeout kills the whole group and "
    "pipes left open are closed",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_child_hang.cu", f.kernel("FAKE_CHILD_HANG"));
    f.dir.write("cands/b_orphan_pipe.cu", f.kernel("FAKE_ORPHAN_PIPE FAKE_MS=1"));
    const auto started = std::chrono::steady_clock::now();
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--timeout", "2",
                "--no-evidence"}));
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(wall_s < 30);  // before: blocked forever on the pipes
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(verdict_of(history, "a_child_hang.cu") == "timeout");
    CHECK(verdict_of(history, "b_orphan_pipe.cu") == "valid");
    const std::string orphan = test::read_text(f.run() / "candidates/iter-02/attempt-0/orphan.pid");
    CHECK(dies_within(orphan, std::chrono::seconds(5)));
}

TEST_CASE("a SIGKILLed optimizer takes its harness with it: nothing runs on to write late",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/hang.cu", f.kernel("FAKE_HANG FAKE_PIDFILE"));
    std::vector<std::string> a = f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--timeout", "60"});
    const pid_t pid = start_optimizer(a);
    const fs::path pid_file = f.run() / "candidates/iter-01/attempt-0/harness.pid";
    for (int i = 0; i < 600 && !fs::exists(pid_file); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(pid_file));
    const std::string harness = test::read_text(pid_file);
    REQUIRE(process_alive(harness));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(dies_within(harness, std::chrono::seconds(5)));
}

TEST_CASE(
    "a results folder that cannot be written stops the run at the preflight, and a full disk "
    "mid-run leaves history intact with its own exit code",
    "[integration]") {
    optimizer_fixture f;
    auto r = test::run_optimizer(f.args({"--results-dir", "/proc/no/such/place"}));
    CHECK(r.exit_code == 26);  // io_error: a folder that cannot be written, before anything runs
    CHECK_THAT(r.output, Catch::Contains("results folder: cannot write: /proc/no/such/place"));
    // Small cases, so the harness's files stay small and history.json is what outgrows the limit.
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    const auto cases = manifest.find("\"cases\"");
    manifest =
        manifest.substr(0, cases) +
        R"("cases": [ { "name": "c-8", "kind": "correctness", "params": { "m": 8, "n": 8, "k": 8 } },
                             { "name": "p-16", "kind": "performance", "params": { "m": 16, "n": 16, "k": 16 } } ] })";
    f.dir.write("input_cases.json", manifest);
    std::vector<std::string> a = f.args({"--max-iterations", "7", "--quiet"});
    const pid_t pid = start_optimizer(a, (f.dir / "stderr.txt").string(), [] {
        const rlimit limit{60000, 60000};  // no file may grow past 60 kB: a disk that fills up
        setrlimit(RLIMIT_FSIZE, &limit);
        signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
    });
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 26);
    CHECK_THAT(test::read_text(f.dir / "stderr.txt"),
               Catch::Contains(
                   "cannot write the run folder (is the disk full or the folder read-only?)") &&
                   Catch::Contains("history.json: write failed (File too large)"));
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(history["attempts"].Size() > 5);  // every attempt up to the full disk, still readable
}

TEST_CASE("Ctrl-C (SIGINT to the process group) stops the run cleanly after the current attempt",
          "[integration]") {
    optimizer_fixture f;
    for (int i = 0; i < 5; ++i)
        f.dir.write("cands/slow" + std::to_string(i) + ".cu", f.kernel("FAKE_HANG"));
    std::vector<std::string> a = f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--timeout", "1"});
    // In a process group of its own: a terminal's foreground group, as when a person presses
    // Ctrl-C.
    const pid_t pid = start_optimizer(a, "/dev/null", [] { setpgid(0, 0); });
    // Interrupt once the first hanging candidate is under way (however slow this machine is).
    const fs::path started = f.run() / "candidates/iter-01/attempt-0/request.json";
    for (int i = 0; i < 600 && !fs::exists(started); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(started));
    kill(-pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 23);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["stop_reason"].GetString()) == "interrupted");
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(history["attempts"].Size() == 2);  // the initial kernel and the attempt under way
    // The attempt under way when the signal came ran to its own end (a timeout), not a crash.
    const auto& last = history["attempts"][history["attempts"].Size() - 1];
    CHECK(std::string(last["verdict"].GetString()) == "timeout");
}

TEST_CASE(
    "the results folder's check writes a file with no name: a check killed midway leaves "
    "nothing in the folder",
    "[integration]") {
    optimizer_fixture f;
    const fs::path results = f.dir / "results";
    fs::create_directories(results);
    // Every name made in the folder (a file, a folder, a rename into it), as it is made.
    const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    REQUIRE(watch >= 0);
    REQUIRE(::inotify_add_watch(watch, results.c_str(), IN_CREATE | IN_MOVED_TO) >= 0);
    const auto r = test::run_optimizer(
        {"check", "--initial-kernel", (f.dir / "initial.cu").string(), "--input-cases",
         (f.dir / "input_cases.json").string(), "--reference", (f.dir / "reference.cu").string(),
         "--harness", CUOPT_FAKE_HARNESS_BINARY, "--results-dir", results.string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("ok    results folder"));
    alignas(inotify_event) char events[4096];
    const ssize_t n = ::read(watch, events, sizeof events);
    std::string names;
    for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(events + at);
        names += std::string(" ") + (e->len ? e->name : "?");
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
    ::close(watch);
    CHECK(fs::is_empty(results));
    // A filesystem without unnamed files gets the mkdtemp folder (removed again).
    const int unnamed = ::open(results.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (unnamed < 0) {
        WARN("skipped: " << results.string() << " takes no O_TMPFILE file (" << std::strerror(errno)
                         << "); the check named:" << names);
        return;
    }
    ::close(unnamed);
    CHECK(names == "");  // before, .cuda-optimizer-write-test-XXXXXX
}

TEST_CASE("without a GPU the real harness stops the run at the preflight with one line and exit 20",
          "[integration]") {
    if (test::gpu_unavailable_reason().empty()) {
        WARN("skipped: a GPU is present, so the preflight passes");
        return;
    }
    optimizer_fixture f;
    std::vector<std::string> a = f.args();
    a[8] = CUOPT_HARNESS_BINARY;  // the value of --harness: the real one
    const auto r = test::run_optimizer(a);
    CHECK(r.exit_code == 20);
    CHECK_THAT(r.output, Catch::Contains("cuda-optimizer: CUDA driver: no CUDA driver") &&
                             Catch::Contains("fix:"));
    const auto check =
        test::run_optimizer({"check", "--initial-kernel", (f.dir / "initial.cu").string(),
                             "--input-cases", (f.dir / "input_cases.json").string(), "--reference",
                             (f.dir / "reference.cu").string(), "--harness", CUOPT_HARNESS_BINARY});
    CHECK(check.exit_code == 20);
    CHECK_THAT(check.output, Catch::Contains("ok    manifest valid") &&
                                 Catch::Contains("ok    CUDA toolkit") &&
                                 Catch::Contains("FAIL  CUDA driver"));
}

TEST_CASE("bad proposer settings, signatures and price tables are refused by name before any run",
          "[integration]") {
    optimizer_fixture f;
    auto r = test::run_optimizer(f.args({"--proposer", "files"}));
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("--proposer files needs --candidates DIR"));
    r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "nowhere").string()}));
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("nowhere: no such folder"));
    fs::create_directories(f.dir / "empty");
    r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "empty").string()}));
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("empty: no .cu files"));
    r = test::run_optimizer(f.args({"--signature", "int matmul_f32(float* a)"}));
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("--signature: signature 'int matmul_f32(float* a)': "
                                         "expected 'void NAME(TYPE NAME, ...)'"));
    f.dir.write("cfg.json", R"({ "prices": [1, 2] })");
    r = test::run_optimizer(f.args({"--config", (f.dir / "cfg.json").string()}));
    CHECK(r.exit_code == 11);  // a config file's mistake, like a manifest's
    CHECK_THAT(r.output, Catch::Contains("cfg.json: field prices: expected"));
    for (const char* bad :
         {R"({ "prices": { "m": { "input_per_mtok": "abc", "output_per_mtok": 2 } } })",
          R"({ "prices": { "m": { "input_per_mtok": 1 } } })",
          R"({ "prices": { "m": { "input_per_mtok": -1, "output_per_mtok": 2 } } })"}) {
        f.dir.write("cfg.json", bad);
        r = test::run_optimizer(f.args({"--config", (f.dir / "cfg.json").string()}));
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains("cfg.json: field prices.m.") &&
                                 Catch::Contains("expected a number >= 0"));
    }
    CHECK_FALSE(fs::exists(f.dir / "results"));
}

namespace {

// `check` with the same flags as `optimize`: optimize's arguments with the subcommand swapped.
std::vector<std::string> as_check(std::vector<std::string> args) {
    args[0] = "check";
    return args;
}

}  // namespace

TEST_CASE("check catches what optimize rejects, with the same exit code, and nothing is created",
          "[integration]") {
    struct bad_input {
        const char* what;
        std::function<std::vector<std::string>(optimizer_fixture&)> args;
        int code;
        const char* row;
        const char* words;
    };
    const std::string fine_sig =
        "void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k)";
    const std::vector<bad_input> cases = {
        {"a signature that disagrees with the manifest",
         [](optimizer_fixture& f) {
             return f.args({"--signature", "void matmul_f32(const float* a, int m)"});
         },
         11, "FAIL  signature", "disagrees with --signature"},
        {"a signature naming another function",
         [&](optimizer_fixture& f) {
             std::string sig = fine_sig;
             sig.replace(sig.find("matmul_f32"), 10, "gemm");
             return f.args({"--signature", sig});
         },
         11, "FAIL  kernel entry", "--signature names 'gemm'"},
        {"no oracle",
         [](optimizer_fixture& f) {
             auto a = f.args();
             a.erase(a.begin() + 1, a.begin() + 3);  // --reference FILE
             return a;
         },
         11, "FAIL  oracle", "has no oracle"},
        {"a results folder that is a file",
         [](optimizer_fixture& f) {
             f.dir.write("taken", "a file");
             return f.args({"--results-dir", (f.dir / "taken").string()});
         },
         26, "FAIL  results folder", "is a file, not a folder"},
        {"a reference that does not compile",
         [](optimizer_fixture& f) {
             // Broken for NVRTC (check compiles through the real harness) and for the fake.
             f.dir.write("reference.cu",
                         f.kernel("x") + "__device__ int broken = FAKE_COMPILE_ERROR;\n");
             return f.args();
         },
         22, "FAIL  reference compiles", "error: identifier"},
        {"an initial kernel without a __global__ function",
         [](optimizer_fixture& f) {
             f.dir.write("initial.cu", "// nothing here yet\n");
             return f.args();
         },
         11, "FAIL  kernel entry", "no __global__ function found in"},
        {"a folder given as the initial kernel",
         [](optimizer_fixture& f) {
             fs::create_directories(f.dir / "kernels");
             auto a = f.args();
             a[4] = (f.dir / "kernels").string();  // the value of --initial-kernel
             return a;
         },
         11, "FAIL  initial kernel", "is a directory"},
    };
    for (const bad_input& c : cases) {
        DYNAMIC_SECTION(c.what) {
            optimizer_fixture f;
            const auto args = c.args(f);
            const auto check = test::run_optimizer(as_check(args));
            INFO(check.output);
            CHECK(check.exit_code == c.code);
            CHECK_THAT(check.output, Catch::Contains(c.row) && Catch::Contains(c.words) &&
                                         Catch::Contains("not ready"));
            CHECK(check.output.find("CUDA_HOME") == std::string::npos);
            const auto run = test::run_optimizer(args);
            INFO(run.output);
            CHECK(run.exit_code == c.code);
            CHECK_THAT(run.output, Catch::Contains(c.words));
            CHECK_FALSE(fs::exists(f.dir / "results"));
        }
    }
}

TEST_CASE("a run that fails after its folder exists still writes run.json with the reason",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("reference.cu", f.kernel("FAKE_ILLEGAL_ADDRESS"));
    const auto r = test::run_optimizer(f.args());
    INFO(r.output);
    CHECK(r.exit_code == 22);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run["stop_reason"].GetString()) == "error");
    CHECK_THAT(std::string(run["error"].GetString()),
               Catch::Contains("the reference kernel fails"));
}

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE(
    "a compile error's reason is NVRTC's first error line naming the candidate's own file, "
    "printed once",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/broken.cu", f.kernel("FAKE_COMPILE_ERROR"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string()}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string line = "broken.cu(1): error: identifier \"FAKE_COMPILE_ERROR\" is undefined";
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    const auto& broken = history["attempts"][1];
    CHECK(std::string(broken["label"].GetString()) == "broken.cu");
    CHECK(std::string(broken["reason"].GetString()) == line);
    CHECK(occurrences(r.output, "broken.cu(1)") == 1);  // the progress line may wrap the rest
    // The attempt folder keeps the source byte for byte as kernel.cu, named for NVRTC as the
    // user's file; the initial kernel's attempt is named after initial.cu.
    const auto request =
        test::read_checked_json(f.run() / "candidates/iter-01/attempt-0/request.json", "request");
    CHECK(std::string(request["kernel"]["source_file"].GetString()) == "kernel.cu");
    CHECK(std::string(request["kernel"]["source_name"].GetString()) == "broken.cu");
    const auto initial =
        test::read_checked_json(f.run() / "candidates/iter-00/attempt-0/request.json", "request");
    CHECK(std::string(initial["kernel"]["source_name"].GetString()) == "initial.cu");
}

TEST_CASE("an initial kernel that does not compile prints its error line once and exits 21",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_COMPILE_ERROR"));
    const auto r = test::run_optimizer(f.args());
    INFO(r.output);
    CHECK(r.exit_code == 21);
    CHECK(occurrences(r.output, "initial.cu(1)") == 1);
    CHECK_THAT(r.output, Catch::Contains("FAKE_COMPILE_ERROR"));
}

TEST_CASE(
    "replay on a machine without a CUDA driver exits 20 and says so once, as does a harness that "
    "cannot start",
    "[integration]") {
    optimizer_fixture f;
    REQUIRE(test::run_optimizer(f.args({"--proposer", "autotune", "--max-iterations", "1"}))
                .exit_code == 0);
    const std::string best = (f.run() / "best-case-0.json").string();
    auto r = test::run_optimizer({"replay", best, "--harness", "/nonexistent/cuda-harness"});
    CHECK(r.exit_code == 20);
    CHECK_THAT(r.output, Catch::Contains("cannot start /nonexistent/cuda-harness") &&
                             Catch::Contains("pass --harness PATH"));
    if (test::gpu_unavailable_reason().empty()) {
        WARN("skipped: a GPU is present, so there is no 'no driver' path to test");
        return;
    }
    ::setenv("CUDA_HARNESS_CACHE_DIR", test::test_cache_dir().c_str(), 0);
    r = test::run_optimizer({"replay", best, "--harness", CUOPT_HARNESS_BINARY});
    INFO(r.output);
    CHECK((r.exit_code == 20));
    CHECK(occurrences(r.output, "no CUDA d") == 1);  // "no CUDA driver" or "no CUDA device"
    CHECK_THAT(r.output, Catch::Contains("needs a machine with an NVIDIA GPU and its driver"));
    CHECK_THAT(r.output, !Catch::Contains("replay mismatch") && !Catch::Contains("verdict:"));
}

TEST_CASE("a failing initial kernel's line is printed once, and the run ends with exit 21",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_WRONG"));
    const auto r = test::run_optimizer(f.args());
    INFO(r.output);
    CHECK(r.exit_code == 21);
    const std::string line = "initial  initial.cu  wrong_output";
    const auto first = r.output.find(line);
    REQUIRE(first != std::string::npos);
    CHECK(r.output.find(line, first + 1) == std::string::npos);
    CHECK(r.output.find("elements differ") == r.output.rfind("elements differ"));
    CHECK_THAT(r.output, Catch::Contains("best: none (the initial kernel failed); 1 attempt, 0 "
                                         "valid, 1 rejected (wrong_output 1)") &&
                             Catch::Contains("the initial kernel fails (why: its line above)"));
}

TEST_CASE("run-example.sh --json prints summary.json on stdout and nothing else", "[integration]") {
    if (!fs::exists(std::string(CUOPT_SOURCE_DIR) + "/build/CMakeCache.txt")) {
        WARN(
            "skipped: no configured build/ here (binaries carried to a GPU machine): "
            "run-example.sh sets up and builds first");
        return;
    }
    optimizer_fixture f;
    const auto runner = make_child_process_runner();
    const process_result p =
        runner->run({"/usr/bin/env", "-u", "OPENAI_API_KEY", "-u", "ANTHROPIC_API_KEY", "-u",
                     "OPENAI_BASE_URL", "-u", "ANTHROPIC_BASE_URL", "bash",
                     std::string(CUOPT_SOURCE_DIR) + "/tools/run-example.sh", "--json", "--harness",
                     CUOPT_FAKE_HARNESS_BINARY, "--max-iterations", "1", "--no-sanitizer",
                     "--results-dir", (f.dir / "results").string()},
                    std::chrono::seconds(600));
    INFO(p.stderr_text);
    REQUIRE(p.exit_code == 0);
    const auto summary = parse_json(p.stdout_text, "run-example.sh's stdout");
    CHECK(summary.HasMember("best"));
    // The key-free main job: the autotuner, by the config's own choice, not by a missing key.
    CHECK_THAT(p.stderr_text, Catch::Contains("proposer autotune\n") && Catch::Contains("best: "));
}

TEST_CASE("run-example.sh without a driver says so at once, before installing or building",
          "[integration]") {
    const auto driver = test::run_program(
        "/bin/sh",
        {"-c", "{ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep 'libcuda\\.so\\.1 '"});
    if (driver.exit_code == 0 || fs::exists("/dev/nvidiactl") ||
        fs::exists("/proc/driver/nvidia/version") || fs::exists("/dev/dxg")) {
        WARN("skipped: this machine has an NVIDIA driver (run-example.sh would run the job)");
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto p = test::run_program(
        "/bin/bash", {std::string(CUOPT_SOURCE_DIR) + "/tools/run-example.sh", "--json"});
    CHECK(p.exit_code == 20);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK_THAT(p.output, Catch::Contains("no NVIDIA driver") &&
                             Catch::Contains("Try it without a GPU") && !Catch::Contains("setup:"));
}

TEST_CASE(
    "an autotune winner stands alone: best.cu carries its defines, best.json and summary.json "
    "its options and every case's launch",
    "[integration]") {
    optimizer_fixture f;
    const auto r = test::run_optimizer(f.args(
        {"--proposer", "autotune", "--seed", "7", "--max-iterations", "2", "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto best = test::read_checked_json(f.run() / "best.json", "best");
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(best["proposer"].GetString()) == "autotune");
    CHECK(std::string(best["run_dir"].GetString()) == f.run().string());
    CHECK(std::string(summary["run_dir"].GetString()) == f.run().string());
    CHECK(std::string(summary["best_json"].GetString()) == "best.json");
    CHECK(best["speedup_vs_initial"].GetDouble() > 1.1);
    const std::string cu = test::read_text(f.run() / "best.cu");
    INFO(cu);
    CHECK_THAT(cu, Catch::StartsWith("// best.cu: the winning kernel"));
    CHECK_THAT(cu, Catch::Contains("iteration " + std::to_string(best["iteration"].GetInt()) +
                                   ", attempt " + std::to_string(best["attempt"].GetInt())));
    char folder[64];
    std::snprintf(folder, sizeof folder, "candidates/iter-%02d/attempt-%d/kernel.cu",
                  best["iteration"].GetInt(), best["attempt"].GetInt());
    CHECK_THAT(cu, Catch::EndsWith(test::read_text(f.run() / folder)));
    // The defines, options and launches are the ones the replay requests give the harness.
    for (rapidjson::SizeType i = 0; i < 3; ++i) {
        const auto replay = test::read_checked_json(
            f.run() / ("best-case-" + std::to_string(i) + ".json"), "request");
        const auto& kernel = replay["kernel"];
        REQUIRE(best["defines"].MemberCount() == kernel["defines"].MemberCount());
        for (const auto& d : kernel["defines"].GetObject()) {
            const std::string name = d.name.GetString(),
                              value = d.value.IsString() ? d.value.GetString()
                                                         : std::to_string(d.value.GetInt64());
            CHECK(best["defines"][name.c_str()].GetString() == value);
            CHECK(summary["best"]["defines"][name.c_str()].GetString() == value);
            CHECK_THAT(cu, Catch::Contains("\n#define " + name + " " + value + "\n"));
        }
        CHECK(best["compile_options"] == kernel["compile_options"]);
        const auto& launch = replay["cases"][0]["launch"];
        CHECK(best["cases"][i]["grid"] == launch["grid"]);
        CHECK(best["cases"][i]["block"] == launch["block"]);
        CHECK(summary["best"]["cases"][i]["grid"] == launch["grid"]);
        CHECK(best["cases"][i]["dynamic_shared_bytes"] == launch["dynamic_shared_bytes"]);
    }
    CHECK(std::string(best["launch"]["block"][0].GetString()) == "BLOCK_X");
    CHECK(std::string(best["cases"][1]["launch"]["grid"][0].GetString()) == "ceil(n/BLOCK_X)");
    const auto replayed = test::run_optimizer(
        {"replay", (f.run() / "best-case-1.json").string(), "--harness", k_fake});
    INFO(replayed.output);
    CHECK(replayed.exit_code == 0);
}

TEST_CASE("an optimize run whose winner is the initial kernel writes its source under the comment",
          "[integration]") {
    optimizer_fixture f;
    REQUIRE(test::run_optimizer(f.args({"--max-iterations", "0", "--no-evidence"})).exit_code == 0);
    const auto best = test::read_checked_json(f.run() / "best.json", "best");
    CHECK(std::string(best["proposer"].GetString()) == "initial");
    CHECK(best["speedup_vs_initial"].GetDouble() == 1.0);
    const std::string cu = test::read_text(f.run() / "best.cu");
    CHECK_THAT(cu, Catch::StartsWith("// best.cu: the winning kernel") &&
                       Catch::Contains("iteration 0, attempt 0 (initial: initial.cu)") &&
                       Catch::EndsWith(test::read_text(f.dir / "initial.cu")));
}

TEST_CASE("run.json's settings are typed and a replay request's generator has only its fields",
          "[integration]") {
    optimizer_fixture f;
    REQUIRE(test::run_optimizer(f.args({"--max-iterations", "0", "--no-evidence"})).exit_code == 0);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    const auto& s = run["settings"];
    CHECK(s["seed"].IsUint64());
    CHECK(s["max_iterations"].IsInt());
    CHECK(s["min_gain"].IsDouble());
    CHECK(s["timeout_s"].IsNumber());
    CHECK(s["use_nsight"].IsBool());
    CHECK(s["evidence"].IsBool());
    CHECK(s["description"].IsString());
    const auto replay = test::read_checked_json(f.run() / "best-case-1.json", "request");
    auto fields = [&replay](int arg) {
        std::set<std::string> names;
        for (const auto& m : replay["cases"][0]["args"][arg]["generator"].GetObject())
            names.insert(m.name.GetString());
        return names;
    };
    CHECK(fields(0) == std::set<std::string>{"kind", "low", "high", "seed"});     // uniform
    CHECK(fields(1) == std::set<std::string>{"kind", "mean", "stddev", "seed"});  // normal
}
