// `cuda-optimizer export --header`: the generated launcher computes, for every case and holdout
// shape of every example, the grid, block and shared memory the run's own evaluator computes
// (built with nvcc and run on the host: no GPU needed); the export refuses a run that is not a
// go (unless --force), and a run folder's linked or oversized files.
#include "orchestrator/artifacts/kernel_export.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "common/file_io.hpp"
#include "orchestrator/contract/integer_expression.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const fs::path k_examples = fs::path(CUOPT_SOURCE_DIR) / "examples";
const char* const k_nvcc = "/usr/local/cuda/bin/nvcc";

// The example's initial kernel at these tunables, as best.cu writes a winner: defines first.
exported_kernel example_kernel(const std::string& example, const std::string& file,
                               const manifest& m, std::map<std::string, std::int64_t> tunables) {
    exported_kernel k;
    k.source = test::read_text(k_examples / example / file);
    k.entry = first_kernel_name(k.source);
    std::string defines;
    for (const auto& [name, value] : tunables)
        defines += "#define " + name + " " + std::to_string(value) + "\n";
    k.source = defines + k.source;
    k.tunables = std::move(tunables);
    k.launch = m.launch;
    k.arch = "sm_90";
    return k;
}

// A host program printing ENTRY_launch_shape's answer for each case: "NAME rc gx gy gz bx by bz
// s".
std::string driver(const exported_kernel& k, const manifest& m,
                   const std::vector<manifest_case>& cases) {
    std::ostringstream o;
    o << "#include \"" << k.entry << ".cuh\"\n#include <cstdio>\nint main() {\n"
      << "    dim3 g, b;\n    size_t s = 0;\n    cudaError_t e;\n";
    for (const manifest_case& c : cases) {
        std::string call;
        for (const manifest_arg& a : m.args) {
            std::string v = "nullptr";
            if (!a.is_buffer())
                v = a.value_is_number
                        ? a.value
                        : std::to_string(evaluate_integer_expression(a.value, c.params));
            call += (call.empty() ? "" : ", ") + v;
        }
        for (const std::string& p : extra_launch_params(m))
            call += (call.empty() ? "" : ", ") + std::to_string(c.params.at(p));
        o << "    e = " << k.entry << "_launch_shape(" << call << (call.empty() ? "" : ", ")
          << "&g, &b, &s);\n"
          << "    std::printf(\"" << c.name
          << " %d %u %u %u %u %u %u %zu\\n\", int(e), g.x, g.y, g.z, b.x, b.y, b.z, s);\n";
    }
    return o.str() + "}\n";
}

std::string expected(const exported_kernel& k, const manifest& m,
                     const std::vector<manifest_case>& cases) {
    std::ostringstream o;
    for (const manifest_case& c : cases) {
        const launch_config l = evaluate_launch(k.launch, m.variables(c, k.tunables));
        o << c.name << " 0 " << l.grid[0] << " " << l.grid[1] << " " << l.grid[2] << " "
          << l.block[0] << " " << l.block[1] << " " << l.block[2] << " " << l.dynamic_shared_bytes
          << "\n";
    }
    return o.str();
}

}  // namespace

TEST_CASE(
    "the exported launcher's arithmetic equals the manifest's for every case and holdout "
    "shape of every example") {
    if (!fs::exists(k_nvcc)) {
        WARN("skipped: no nvcc at " << k_nvcc);
        return;
    }
    struct example {
        std::string name, file;
        bool holdout;
    };
    for (const example& e :
         {example{"matmul", "initial.cu", true}, example{"softmax", "initial.cu", true},
          example{"reduction", "initial.cu", true}, example{"gemm-fp8", "initial.cu", true},
          example{"matmul-tiled", "matmul_tiled.cu", false}}) {
        const manifest m = read_manifest(k_examples / e.name / "input_cases.json");
        std::vector<manifest_case> cases = m.cases;
        if (e.holdout) {
            const manifest h = read_holdout_manifest(k_examples / e.name / "holdout_cases.json", m);
            cases.insert(cases.end(), h.cases.begin(), h.cases.end());
        }
        // The first configuration and the last of every tunable: launch shapes that differ.
        std::map<std::string, std::int64_t> first = m.default_tunables(), last;
        for (const auto& [name, values] : m.tunables) last[name] = values.back();
        for (const auto& tunables : {first, last}) {
            INFO(e.name << " with " << tunables.size() << " tunables");
            const exported_kernel k = example_kernel(e.name, e.file, m, tunables);
            test::scratch_folder dir;
            dir.write(k.entry + ".cuh", cuda_header(k, m));
            dir.write("driver.cu", driver(k, m, cases));
            const auto built = test::run_program(
                k_nvcc, {"-std=c++17", "-arch=sm_90", "-o", (dir / "driver").string(),
                         (dir / "driver.cu").string()});
            INFO(built.output);
            REQUIRE(built.exit_code == 0);
            const auto ran = test::run_program((dir / "driver").string(), {});
            CHECK(ran.output == expected(k, m, cases));
        }
    }
}

TEST_CASE("export writes the winner's header only for a go, and never reads through a link") {
    test::optimizer_fixture f;
    const auto r = test::run_optimizer(
        f.args({"--max-iterations", "1", "--significance-runs", "2", "--sanitizer",
                std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh"}));
    INFO(r.output);
    REQUIRE(fs::exists(f.run() / "summary.json"));
    const rapidjson::Document s = test::read_checked_json(f.run() / "summary.json", "summary");
    const std::string verdict = s["verdict"].GetString();
    const fs::path out = f.dir / "export";
    auto exported = test::run_optimizer({"export", f.run().string(), "--header", out.string()});
    if (verdict == "go") {
        CHECK(exported.exit_code == 0);
    } else {
        CHECK(exported.exit_code == 11);
        CHECK_THAT(exported.output, Catch::Contains("not go") && Catch::Contains("--force"));
        exported =
            test::run_optimizer({"export", f.run().string(), "--header", out.string(), "--force"});
        CHECK(exported.exit_code == 0);
        CHECK_THAT(test::read_text(out / "matmul_f32.cuh"), Catch::Contains("--force"));
    }
    const std::string header = test::read_text(out / "matmul_f32.cuh");
    CHECK_THAT(header, Catch::Contains("inline cudaError_t launch_matmul_f32(const float* a, "
                                       "const float* b, float* c, int m, int n, int k, "
                                       "cudaStream_t cuopt_stream = 0)") &&
                           Catch::Contains("verdict " + verdict));
    CHECK_THAT(test::read_text(out / "matmul_f32.cmake"),
               Catch::Contains("function(cuopt_export_matmul_f32 target)"));
    // best.json is the run's, not the exporter's: a label cannot end the comment it is quoted
    // in, and an option that is not a plain option word never reaches CMake or nvcc.
    std::string best = test::read_text(f.run() / "best.json");
    const std::string label = "\"label\": \"";
    best.insert(best.find(label) + label.size(), "x\\nstatic int injected = 1;\\n");
    write_file_atomic(f.run() / "best.json", best);
    exported =
        test::run_optimizer({"export", f.run().string(), "--header", out.string(), "--force"});
    CHECK(exported.exit_code == 0);
    CHECK(test::read_text(out / "matmul_f32.cuh").find("\nstatic int injected") ==
          std::string::npos);
    const std::string options = "\"compile_options\": [";
    best.insert(best.find(options) + options.size(), "\"x>)\\nexecute_process(COMMAND id)\"");
    write_file_atomic(f.run() / "best.json", best);
    exported =
        test::run_optimizer({"export", f.run().string(), "--header", out.string(), "--force"});
    CHECK(exported.exit_code == 11);
    CHECK_THAT(exported.output, Catch::Contains("compile_options"));
    // A best.json that is a link, or a summary.json of 17 MiB, is refused, naming the file.
    fs::rename(f.run() / "best.json", f.dir / "elsewhere.json");
    fs::create_symlink(f.dir / "elsewhere.json", f.run() / "best.json");
    exported =
        test::run_optimizer({"export", f.run().string(), "--header", out.string(), "--force"});
    CHECK(exported.exit_code == 11);
    CHECK_THAT(exported.output, Catch::Contains("best.json") && Catch::Contains("a link"));
    fs::resize_file(f.run() / "summary.json", 17 << 20);
    exported =
        test::run_optimizer({"export", f.run().string(), "--header", out.string(), "--force"});
    CHECK(exported.exit_code == 11);
    CHECK_THAT(exported.output, Catch::Contains("summary.json") && Catch::Contains("16 MiB"));
}

TEST_CASE(
    "a parameter no scalar carries is a launcher parameter; a scalar standing for an "
    "expression is checked against it") {
    if (!fs::exists(k_nvcc)) {
        WARN("skipped: no nvcc at " << k_nvcc);
        return;
    }
    test::scratch_folder dir;
    const fs::path file = dir.write("input_cases.json", R"json({"schema_version": 1,
      "tunables": {"THREADS": [256, 128]},
      "launch": {"grid": ["ceil(rows*cols/(THREADS*2))", 1, 1], "block": ["THREADS", 1, 1],
                 "dynamic_shared_bytes": "THREADS*4"},
      "args": [
        {"name": "x", "dtype": "f32", "kind": "input", "count": "rows*cols",
         "init": {"kind": "uniform", "low": 0, "high": 1, "seed": 1}},
        {"name": "y", "dtype": "f32", "kind": "output", "count": "rows*cols",
         "tolerance": {"atol": 0, "rtol": 0}},
        {"name": "total", "dtype": "i64", "kind": "scalar", "value": "rows*cols"}],
      "cases": [{"name": "a", "kind": "performance", "params": {"rows": 7, "cols": 300}},
                {"name": "b", "kind": "correctness", "params": {"rows": 1, "cols": 1}}]})json");
    const manifest m = read_manifest(file);
    CHECK(extra_launch_params(m) == std::vector<std::string>{"cols", "rows"});
    exported_kernel k;
    k.entry = "scale";
    k.source =
        "#define THREADS 128\nextern \"C\" __global__ void scale(const float* x, float* y, "
        "long long total) {}\n";
    k.tunables = {{"THREADS", 128}};
    k.launch = m.launch;
    dir.write("scale.cuh", cuda_header(k, m));
    std::string program = driver(k, m, m.cases);
    // total disagreeing with rows*cols: refused before any launch.
    program.insert(program.rfind('}'),
                   "    e = scale_launch_shape(nullptr, nullptr, 5, 7, 300, &g, &b, &s);\n"
                   "    std::printf(\"wrong-total %d\\n\", int(e));\n");
    dir.write("driver.cu", program);
    const auto built =
        test::run_program(k_nvcc, {"-std=c++17", "-arch=sm_90", "-o", (dir / "driver").string(),
                                   (dir / "driver.cu").string()});
    INFO(built.output);
    REQUIRE(built.exit_code == 0);
    const auto ran = test::run_program((dir / "driver").string(), {});
    CHECK(ran.output == expected(k, m, m.cases) + "wrong-total " + std::to_string(int(1)) +
                            "\n");  // cudaErrorInvalidValue
}
