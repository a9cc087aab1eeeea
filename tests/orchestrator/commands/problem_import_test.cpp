// `cuda-optimizer import` and the PyTorch oracle, through the real binary and Debian's CPU
// torch: KernelBench files, FlashInfer-Trace definitions and the plain form become problem
// folders the manifest reader takes; each construct the contract cannot hold is refused in one
// line naming it; the problem's code runs confined (a file outside its folder is out of reach);
// and PyTorch as the oracle gives the pilot matmul's candidates the verdicts reference.cu gives.
#include "orchestrator/commands/problem_import.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <regex>

#include "common/json_document.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const fs::path k_data = fs::path(CUOPT_SOURCE_DIR) / "tests/data/import";

// Why the import cannot run here, or "" (Debian's python3-torch, which tools/setup.sh installs).
std::string torch_missing() {
    const auto r = test::run_program("/bin/sh", {"-c", "/usr/bin/python3 -c 'import torch' 2>&1"});
    return r.exit_code == 0
               ? ""
               : "/usr/bin/python3 cannot import torch (apt-get install python3-torch)";
}

#define SKIP_WITHOUT_TORCH()                                     \
    if (const std::string why = torch_missing(); !why.empty()) { \
        WARN("skipped: " << why);                                \
        return;                                                  \
    }

test::process_result import(const fs::path& source, const fs::path& out,
                            std::vector<std::string> more = {}) {
    std::vector<std::string> args{"import",     source.string(), "--out",
                                  out.string(), "--python",      "/usr/bin/python3"};
    args.insert(args.end(), more.begin(), more.end());
    return test::run_optimizer(args);
}

std::string signature_of(const fs::path& dir) {
    const rapidjson::Document d = parse_json(test::read_text(dir / "config.json"), "config");
    return d["signature"].GetString();
}

}  // namespace

TEST_CASE("every KernelBench-format test problem imports into a folder the manifest reader takes",
          "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    int imported = 0;
    for (const auto& e : fs::directory_iterator(k_data / "kernelbench")) {
        const fs::path out = dir.path() / e.path().stem();
        const auto r = import(e.path(), out);
        INFO(e.path().filename() << ": " << r.output);
        REQUIRE(r.exit_code == 0);
        const manifest m = read_manifest(out / "input_cases.json");
        CHECK(m.cases.size() >= 2);
        CHECK(fs::is_regular_file(out / "reference.py"));
        CHECK(fs::is_regular_file(out / "holdout_cases.json"));
        ++imported;
    }
    CHECK(imported >= 10);
    CHECK(signature_of(dir.path() / "01_matmul") ==
          "void matmul(const float* A, const float* B, float* out, int M, int K, int N)");
    CHECK(signature_of(dir.path() / "06_layernorm") ==
          "void layernorm(const float* x, const float* ln_weight, const float* ln_bias, float* "
          "out, int batch_size, int features, int dim)");
    // The sum keeps dim1 as 1: its tolerance is the reduction rule over dim1.
    const manifest sum = read_manifest(dir.path() / "08_sum_reduction/input_cases.json");
    CHECK(sum.find_arg("out")->reduction_length == "dim1");
    CHECK(sum.find_arg("out")->count == "batch_size*1*dim2");
}

TEST_CASE("a FlashInfer-Trace definition imports with its workloads as performance cases",
          "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const auto r = import(k_data / "flashinfer/definitions/rmsnorm/fused_add_rmsnorm_h128.json",
                          dir.path() / "p");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(signature_of(dir.path() / "p") ==
          "void fused_add_rmsnorm_h128(const float* hidden_states, const float* residual, const "
          "float* weight, float* output, float* residual_out, float eps, int batch_size, int "
          "hidden_size)");
    const manifest m = read_manifest(dir.path() / "p/input_cases.json");
    int perf = 0;
    for (const manifest_case& c : m.cases) perf += c.kind == case_kind::performance;
    CHECK(perf == 3);  // batch_size 1, 7 and 33
    CHECK(fs::is_regular_file(dir.path() / "p/workloads.jsonl"));
    const auto bf16 =
        import(k_data / "flashinfer/definitions/rmsnorm/rmsnorm_h128.json", dir.path() / "q");
    INFO(bf16.output);
    CHECK(bf16.exit_code == 0);
    CHECK_THAT(signature_of(dir.path() / "q"),
               Catch::Contains("const __nv_bfloat16* hidden_states"));
}

TEST_CASE("the plain form: a function forward and get_inputs", "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const auto r = import(k_data / "plain/axpy.py", dir.path() / "p");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(signature_of(dir.path() / "p") ==
          "void axpy(const float* x, const float* y, float* out, int N)");
}

TEST_CASE("each construct the kernel contract cannot hold is refused in one line naming it",
          "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"random_in_forward.py", "draws random numbers"},
        {"inplace_input.py", "writes its input x in place"},
        {"complex_dtype.py", "dtype complex64"},
        {"data_dependent_shape.py", "shape depends on the input values"},
        {"no_model.py", "no class Model"},
        {"no_get_inputs.py", "no function get_inputs()"},
        {"syntax_error.py", "does not parse: line 10"},
        {"bool_output.py", "bool tensor"},
        // The import runs the file confined: /etc/hostname is out of its reach.
        {"reads_file.py", "Permission denied: '/etc/hostname'"},
    };
    for (const auto& [file, says] : refused) {
        const auto r = import(k_data / "refused" / file, dir.path() / file);
        INFO(file << ": " << r.output);
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains(file + ": cannot import: ") && Catch::Contains(says));
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir.path() / file));  // nothing half-written
    }
}

TEST_CASE(
    "a problem that hangs is stopped at --timeout, and one that rewrites its copy of the "
    "source cannot change what the folder keeps",
    "[integration][torch][security]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const std::string model = test::read_text(k_data / "plain/axpy.py");
    // It closes its streams' pipes (the shim writes them to python.log) and never answers.
    dir.write("hang.py", model + "\nimport time\nwhile True:\n    time.sleep(1)\n");
    const auto start = std::chrono::steady_clock::now();
    auto r = import(dir / "hang.py", dir / "hang", {"--timeout", "5"});
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("ran past 5 s and was stopped"));
    CHECK(s < 60);
    dir.write("swap.py",
              model + "\nopen('reference.py', 'w').write('# REPLACED BY THE CHILD\\n')\n");
    r = import(dir / "swap.py", dir / "swap");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(test::read_text(dir / "swap/reference.py") == test::read_text(dir / "swap.py"));
}

TEST_CASE("an import never writes into a folder that holds files, nor without a Python with torch",
          "[integration][torch]") {
    test::scratch_folder dir;
    dir.write("taken/x", "mine");
    auto r = import(k_data / "plain/axpy.py", dir.path() / "taken");
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("--out must be a new or empty folder"));
    r = test::run_optimizer({"import", (k_data / "plain/axpy.py").string(), "--out",
                             (dir.path() / "p").string(), "--python", "/bin/false"});
    CHECK(r.exit_code == 20);
    CHECK_THAT(r.output, Catch::Contains("no Python with torch for this imported problem: "
                                         "/bin/false cannot import torch"));
}

TEST_CASE("the PyTorch side's answer is untrusted: a bad field is named, never written",
          "[torch]") {
    const std::string good =
        R"({"form":"plain","entry":"forward","torch":"x","axes":[{"name":"N","value":8,"small":3}],)"
        R"("args":[{"name":"x","role":"input","dtype":"f32","shape":["N"],)"
        R"("init":{"kind":"normal","mean":0,"stddev":1}}],)"
        R"("outputs":[{"name":"out","dtype":"f32","shape":["N"]}],"holdout":[],"workloads":[]})";
    CHECK(read_introspection(good, "answer").args.size() == 2);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {R"("dtype":"f32","shape":["N"],)", R"("dtype":"complex","shape":["N"],)"},
        {"\"shape\":[\"N\"],\"init\"", "\"shape\":[\"system(1)\"],\"init\""},
        {R"({"name":"N","value":8)", R"({"name":"N;rm","value":8)"},
        {R"("kind":"normal")", R"("kind":"file")"},
    };
    for (const auto& [from, to] : bad) {
        std::string text = good;
        text.replace(text.find(from), from.size(), to);
        INFO(text);
        CHECK_THROWS_WITH(read_introspection(text, "answer"), Catch::Contains("answer: field "));
    }
    CHECK_THROWS_WITH(read_introspection(R"({"refused":"forward() draws random numbers"})", "a"),
                      "forward() draws random numbers");
}

TEST_CASE("PyTorch as the oracle gives the pilot matmul's candidates reference.cu's verdicts",
          "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const fs::path examples = fs::path(CUOPT_SOURCE_DIR) / "examples/matmul";
    const fs::path torch_config =
        fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul/config.json";
    const std::string initial = test::read_text(examples / "initial.cu");
    for (const char* marker : {"FAKE_WRONG", "FAKE_SKIP_LAST_ROW", "FAKE_MS=0.5"})
        dir.write(std::string("candidates/") + marker + ".cu",
                  std::string("// ") + marker + "\n" + initial);
    std::map<std::string, std::string> verdicts[2];
    int which = 0;
    for (const fs::path& config : {examples / "config.json", torch_config}) {
        const fs::path results = dir.path() / std::to_string(which);
        const auto r = test::run_optimizer(
            {"optimize", "--config", config.string(), "--harness", CUOPT_FAKE_HARNESS_BINARY,
             "--results-dir", results.string(), "--proposer", "files", "--candidates",
             (dir.path() / "candidates").string(), "--max-iterations", "3", "--python",
             "/usr/bin/python3", "--no-evidence", "--quiet"});
        INFO(config << ": " << r.output);
        REQUIRE(fs::is_regular_file(results / "run-001/history.json"));
        const rapidjson::Document h =
            parse_json(test::read_text(results / "run-001/history.json"), "history");
        for (const auto& a : h["attempts"].GetArray())
            verdicts[which][a["label"].GetString()] = a["verdict"].GetString();
        ++which;
    }
    // The PyTorch run's baseline is eager; initial.cu is one more row, judged the same way.
    CHECK(verdicts[1]["pytorch-eager"] == "valid");
    verdicts[1].erase("pytorch-eager");
    CHECK(verdicts[0].size() == 4);
    CHECK(verdicts[0] == verdicts[1]);
    CHECK(std::count_if(verdicts[1].begin(), verdicts[1].end(),
                        [](const auto& v) { return v.second == "wrong_output"; }) >= 1);
}

TEST_CASE("without an initial kernel PyTorch eager is the baseline, torch.compile a row beside it",
          "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const fs::path examples = fs::path(CUOPT_SOURCE_DIR) / "examples/matmul";
    const fs::path data = fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul";
    const std::string config =
        "{\"signature\": \"void matmul_f32(const float* a, const float* b, float* c, int m, "
        "int n, int k)\", \"torch_reference\": \"" +
        (data / "pytorch.json").string() + "\", \"input_cases\": \"" +
        (examples / "input_cases.json").string() + "\"}";
    dir.write("config.json", config);
    const std::string initial = test::read_text(examples / "initial.cu");
    dir.write("candidates/fast.cu", "// FAKE_MS=0.01\n" + initial);
    dir.write("candidates/wrong.cu", "// FAKE_WRONG\n" + initial);
    const std::vector<std::string> common{"optimize",
                                          "--config",
                                          (dir / "config.json").string(),
                                          "--harness",
                                          CUOPT_FAKE_HARNESS_BINARY,
                                          "--python",
                                          "/usr/bin/python3",
                                          "--results-dir",
                                          (dir / "results").string(),
                                          "--no-evidence"};
    auto r = test::run_optimizer(test::joined(common, {"--proposer", "autotune"}));
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output,
               Catch::Contains("gives the autotuner nothing to tune: use --proposer llm"));
    r = test::run_optimizer(test::joined(
        common, {"--proposer", "files", "--candidates", (dir / "candidates").string()}));
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("initial  pytorch-eager  valid") &&
                             Catch::Contains("wrong.cu  wrong_output") &&
                             Catch::Contains("x geomean over PyTorch eager"));
    const rapidjson::Document s =
        parse_json(test::read_text(dir / "results/run-001/summary.json"), "summary");
    CHECK(std::string(s["initial"]["label"].GetString()) == "pytorch-eager");
    CHECK(s["initial"]["geomean_ms"].GetDouble() > 0);  // timed for real, on this CPU
    CHECK(std::string(s["best"]["label"].GetString()) == "fast.cu");
    // torch.compile is a row of its own: Debian's torch 1.13 has none, and says so.
    CHECK(s.HasMember("pytorch_compile"));
    CHECK_THAT(test::read_text(dir / "results/run-001/report.html"),
               Catch::Contains("<h3>PyTorch</h3>") && Catch::Contains("<th>torch.compile</th>"));
    CHECK_THAT(std::string(s["pytorch_compile"]["reason"].GetString()), Catch::Contains("compile"));
}

TEST_CASE("an imported problem's files for submit: its mapping and the module's source too",
          "[integration]") {
    const fs::path data = fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul";
    const auto r = test::run_optimizer(
        {"optimize", "--config", (data / "config.json").string(), "--list-files"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains((data / "pytorch.json").string()) &&
                             Catch::Contains((data / "model.py").string()) &&
                             Catch::Contains("initial.cu"));
}

TEST_CASE(
    "the user's own kernel beside PyTorch eager: a row the search starts from, the verdict "
    "over eager",
    "[integration][torch]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const fs::path data = fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul";
    const std::string initial =
        test::read_text(fs::path(CUOPT_SOURCE_DIR) / "examples/matmul/initial.cu");
    dir.write("candidates/faster.cu", "// FAKE_MS=0.001\n" + initial);
    auto optimize = [&](const std::string& kernel, const std::vector<std::string>& more) {
        return test::run_optimizer(test::joined(
            {"optimize", "--config", (data / "config.json").string(), "--initial-kernel", kernel,
             "--harness", CUOPT_FAKE_HARNESS_BINARY, "--python", "/usr/bin/python3",
             "--results-dir", (dir / "results").string(), "--no-evidence"},
            more));
    };
    dir.write("mine.cu", "// FAKE_MS=0.002\n" + initial);
    auto r = optimize((dir / "mine.cu").string(),
                      {"--proposer", "files", "--candidates", (dir / "candidates").string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    // The closing table: eager, yours, best; the verdict line over eager.
    CHECK_THAT(r.output, Catch::Contains("case                          eager          yours") &&
                             Catch::Contains("x geomean over PyTorch eager"));
    const fs::path run = dir / "results/run-001";
    const rapidjson::Document s = parse_json(test::read_text(run / "summary.json"), "summary");
    CHECK(std::string(s["initial"]["label"].GetString()) == "pytorch-eager");
    REQUIRE(s.HasMember("initial_kernel"));
    const auto& own = s["initial_kernel"];
    CHECK(std::string(own["label"].GetString()) == "mine.cu");
    CHECK(own["iteration"].GetInt() == 1);
    CHECK(own["attempt"].GetInt() == 0);
    CHECK(own["speedup_vs_initial"].GetDouble() ==
          Approx(s["initial"]["geomean_ms"].GetDouble() / own["geomean_ms"].GetDouble()));
    CHECK(std::string(s["best"]["label"].GetString()) == "faster.cu");
    // The search started from it: iteration 1 writes it down first, then the proposer's batch.
    const rapidjson::Document batch =
        parse_json(test::read_text(run / "candidates/iter-01/candidates.json"), "candidates");
    REQUIRE(batch["batch"].Size() == 2);
    CHECK(std::string(batch["batch"][0]["label"].GetString()) == "mine.cu");
    CHECK_THAT(test::read_text(run / "report.html"), Catch::Contains("<th>yours</th>"));
    // The autotuner has something to tune now: the user's kernel.
    r = optimize((dir / "mine.cu").string(), {"--proposer", "autotune", "--max-iterations", "1"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("mine.cu  valid") && Catch::Contains("autotune"));
    // A wrong kernel of the user's stops the run before the proposer is asked, as ever.
    dir.write("wrong.cu", "// FAKE_WRONG\n" + initial);
    r = optimize((dir / "wrong.cu").string(),
                 {"--proposer", "files", "--candidates", (dir / "candidates").string()});
    CHECK(r.exit_code == 21);
    CHECK_THAT(r.output, Catch::Contains("the initial kernel fails"));
    const rapidjson::Document h =
        parse_json(test::read_text(dir / "results/run-003/history.json"), "history");
    CHECK(h["attempts"].Size() == 2);  // eager and the user's kernel; no candidate measured
}

TEST_CASE("a run with the user's kernel beside PyTorch eager, killed, resumes without redoing it",
          "[integration][torch][resume]") {
    SKIP_WITHOUT_TORCH();
    test::scratch_folder dir;
    const fs::path data = fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul";
    const std::string initial =
        test::read_text(fs::path(CUOPT_SOURCE_DIR) / "examples/matmul/initial.cu");
    dir.write("mine.cu", "// FAKE_MS=0.002\n" + initial);
    dir.write("candidates/a_faster.cu", "// FAKE_MS=0.001\n" + initial);
    dir.write("candidates/b_hang.cu", "// FAKE_HANG\n" + initial);
    const fs::path run = dir / "results/run-001";
    const std::string command =
        std::string(CUOPT_OPTIMIZER_BINARY) + " optimize --config " +
        (data / "config.json").string() + " --initial-kernel " + (dir / "mine.cu").string() +
        " --harness " + CUOPT_FAKE_HARNESS_BINARY +
        " --python /usr/bin/python3 --proposer files --candidates " +
        (dir / "candidates").string() + " --results-dir " + (dir / "results").string() +
        " --timeout 5 --no-evidence --quiet & pid=$!; i=0; while [ ! -e " +
        (run / "candidates/iter-02/attempt-0").string() +
        " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; kill -9 $pid; wait $pid";
    const auto killed = test::run_program("/bin/sh", {"-c", command});
    INFO(killed.output);
    REQUIRE(fs::exists(run / "candidates/iter-02/attempt-0"));
    // The user's kernel is part of what the run was: changed, the resume is refused.
    dir.write("mine.cu", "// FAKE_MS=0.003\n" + initial);
    const auto refused = test::run_optimizer({"optimize", "--resume", run.string()});
    CHECK(refused.exit_code == 28);
    CHECK_THAT(refused.output, Catch::Contains("the initial kernel") &&
                                   Catch::Contains("mine.cu changed since the run began"));
    dir.write("mine.cu", "// FAKE_MS=0.002\n" + initial);
    const auto r = test::run_optimizer({"optimize", "--resume", run.string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("3 attempt(s) kept from history.json"));
    const rapidjson::Document h = parse_json(test::read_text(run / "history.json"), "history");
    REQUIRE(h["attempts"].Size() == 4);
    const char* labels[] = {"pytorch-eager", "mine.cu", "a_faster.cu", "b_hang.cu"};
    for (unsigned i = 0; i < 4; ++i)
        CHECK(std::string(h["attempts"][i]["label"].GetString()) == labels[i]);
    const rapidjson::Document s = parse_json(test::read_text(run / "summary.json"), "summary");
    CHECK(std::string(s["initial_kernel"]["label"].GetString()) == "mine.cu");
    CHECK(std::string(s["best"]["label"].GetString()) == "a_faster.cu");
    CHECK_THAT(r.output, Catch::Contains("x geomean over PyTorch eager"));
}

TEST_CASE(
    "on the GPU, PyTorch as the oracle gives the softmax example's candidates reference.cu's "
    "verdicts",
    "[gpu][torch]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    const fs::path source = CUOPT_SOURCE_DIR;
    std::map<std::string, std::string> verdicts[2];
    int which = 0;
    for (const fs::path& config : {source / "examples/softmax/config.json",
                                   source / "tests/data/torch-oracle/softmax/config.json"}) {
        const fs::path results = dir / std::to_string(which);
        const auto r = test::run_optimizer({"optimize", "--config", config.string(), "--harness",
                                            CUOPT_HARNESS_BINARY, "--results-dir", results.string(),
                                            "--max-iterations", "2", "--no-evidence", "--quiet"});
        INFO(config << ": " << r.output);
        if (r.output.find("no Python with torch") != std::string::npos) {
            WARN("skipped: no Python with torch here");
            return;
        }
        REQUIRE(fs::is_regular_file(results / "run-001/history.json"));
        const rapidjson::Document h =
            parse_json(test::read_text(results / "run-001/history.json"), "history");
        for (const auto& a : h["attempts"].GetArray())
            verdicts[which][a["label"].GetString()] = a["verdict"].GetString();
        ++which;
    }
    CHECK(verdicts[1]["pytorch-eager"] == "valid");  // the baseline; initial.cu is a row
    verdicts[1].erase("pytorch-eager");
    // The second iteration follows each run's own timings, so the two runs may try different
    // configurations there: compare the verdicts of every label both runs tried.
    std::size_t common = 0;
    for (const auto& [label, verdict] : verdicts[0]) {
        const auto other = verdicts[1].find(label);
        if (other == verdicts[1].end()) continue;
        INFO(label);
        CHECK(other->second == verdict);
        ++common;
    }
    CHECK(common >= 5);  // the initial kernel and the autotuner's first configurations
}
