// `cuda-optimizer export --header`: the generated launcher computes, for every case and holdout
// shape of every example, the grid, block and shared memory the run's own evaluator computes
// (built with nvcc and run on the host: no GPU needed); the export refuses a run that is not a
// go (unless --force), and a run folder's linked or oversized files.
#include "orchestrator/artifacts/kernel_export.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/device_facts.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/torch_export.hpp"
#include "orchestrator/commands/export_verify.hpp"
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
    k.arch = arch_specific_target("sm_90");
    if (!m.arch_specific) k.arch = "sm_90";
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

// The example's cases and its holdout's, as the export reads them from a run.
export_facts example_facts(const manifest& m, const std::vector<manifest_case>& holdout) {
    export_facts f;
    f.verdict = "go";
    f.verdict_line = "go 2.000x [1.900, 2.100] over the initial kernel";
    f.gpu = "test GPU";
    for (const manifest_case& c : m.cases)
        f.cases.push_back({c.name, c.kind == case_kind::performance ? "performance" : "correctness",
                           c.params, c.kind == case_kind::performance ? 1.5 : 0});
    for (const manifest_case& c : holdout) f.cases.push_back({c.name, "holdout", c.params, 0});
    return f;
}

struct example_package {
    manifest m;
    std::map<std::string, std::string> files;
    std::string entry;
};

// The example's package: its initial kernel as the winner, its reference as the oracle.
example_package package_of(const std::string& example) {
    example_package p{read_manifest(k_examples / example / "input_cases.json"), {}, ""};
    const manifest h = read_holdout_manifest(k_examples / example / "holdout_cases.json", p.m);
    exported_kernel k = example_kernel(example, "initial.cu", p.m, p.m.default_tunables());
    exported_kernel r = example_kernel(example, "reference.cu", p.m, p.m.default_tunables());
    r.launch = p.m.reference_launch ? *p.m.reference_launch : p.m.launch;
    p.entry = k.entry;
    p.files = torch_package_files(k, r, p.m, example_facts(p.m, h.cases));
    return p;
}

const char* const k_torch_headers = "/usr/include/torch/library.h";

// Debian's libtorch-dev is PyTorch's CPU build: it lacks the one generated header of c10's
// CUDA part, which says how that library was built (nothing the op uses).
void write_cuda_macros_stand_in(const test::scratch_folder& dir) {
    dir.write("stand-in/c10/cuda/impl/cuda_cmake_macros.h", "#pragma once\n");
}

}  // namespace

TEST_CASE("a buffer's count becomes its tensor's shape when it is a product of names") {
    using shape = std::vector<std::string>;
    CHECK(shape_of_count("m*k") == shape{"m", "k"});
    CHECK(shape_of_count("rows") == shape{"rows"});
    CHECK(shape_of_count(" 4 * n ") == shape{"4", "n"});
    CHECK(shape_of_count("batch*heads*seq*64") == shape{"batch", "heads", "seq", "64"});
    CHECK_FALSE(shape_of_count("ceil(n/2)"));
    CHECK_FALSE(shape_of_count("m*k+1"));
    CHECK_FALSE(shape_of_count("m**k"));
    CHECK_FALSE(shape_of_count("0*n"));
    CHECK_FALSE(shape_of_count(""));
}

TEST_CASE(
    "each example's PyTorch package compiles: its kernels with nvcc, its op against "
    "Debian's PyTorch headers",
    "[integration]") {
    if (!fs::exists(k_nvcc)) {
        WARN("skipped: no nvcc at " << k_nvcc);
        return;
    }
    for (const char* example : {"matmul", "softmax", "reduction", "gemm-fp8"}) {
        INFO(example);
        const example_package p = package_of(example);
        test::scratch_folder dir;
        for (const auto& [name, text] : p.files) dir.write(name, text);
        for (const std::string& prefix : {p.entry, p.entry + "_reference"}) {
            const auto built = test::run_program(
                k_nvcc, {"-std=c++17", "-arch=sm_90", "-c", "-o", (dir / (prefix + ".o")).string(),
                         (dir / ("csrc/" + prefix + "_kernel.cu")).string()});
            INFO(built.output);
            CHECK(built.exit_code == 0);
        }
        const std::string op = test::read_text(dir / ("csrc/" + p.entry + "_op.cpp"));
        CHECK_THAT(op, Catch::Contains("TORCH_LIBRARY_FRAGMENT(cuda_optimizer, m)") &&
                           Catch::Contains("TORCH_WARN_ONCE"));
        if (!fs::exists(k_torch_headers)) {
            WARN("the op's C++ not compiled: no PyTorch headers at " << k_torch_headers
                                                                     << " (apt-get install "
                                                                        "libtorch-dev)");
            continue;
        }
        write_cuda_macros_stand_in(dir);
        const auto compiled = test::run_program(
            "/usr/bin/g++", {"-std=c++17", "-fsyntax-only", "-I" + (dir / "stand-in").string(),
                             "-I/usr/include/torch/csrc/api/include", "-I/usr/local/cuda/include",
                             (dir / ("csrc/" + p.entry + "_op.cpp")).string()});
        INFO(compiled.output);
        const std::string torch_version =
            test::read_text("/usr/include/torch/csrc/api/include/torch/version.h");
        if (std::string(example) == "gemm-fp8" &&
            torch_version.find("#define TORCH_VERSION_MAJOR 1") != std::string::npos) {
            // PyTorch before 2.1 has no float8 tensors: the op says so, in one line.
            CHECK(compiled.exit_code != 0);
            CHECK_THAT(compiled.output, Catch::Contains("needs PyTorch 2.1 or newer"));
        } else {
            CHECK(compiled.exit_code == 0);
        }
    }
}

TEST_CASE("the package's Python reads each example's op as its C++ does", "[integration][torch]") {
    const auto has_torch =
        test::run_program("/bin/sh", {"-c", "/usr/bin/python3 -c 'import torch' 2>&1"});
    if (has_torch.exit_code != 0) {
        WARN("skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)");
        return;
    }
    for (const char* example : {"matmul", "softmax", "reduction", "gemm-fp8"}) {
        INFO(example);
        const example_package p = package_of(example);
        test::scratch_folder dir;
        for (const auto& [name, text] : p.files) dir.write(name, text);
        // For every case: each input's shape and each output's from the fake implementation,
        // and every buffer's count by the runtime's own evaluator.
        const std::string script =
            "import sys, math\nsys.path.insert(0, sys.argv[1])\nimport _runtime as r\n"
            "e = r.read_export(sys.argv[1])\nfake = r.make_fake(e)\n"
            "dt = {'float8_e4m3fn': 'float32'}\n"
            "for c in e['cases']:\n"
            "    ex = dict(e, args=[dict(a, dtype=dt.get(a['dtype'], a['dtype'])) for a in "
            "e['args']])\n"
            "    args = r.call_args(ex, c['params'], 'cpu', 1)\n"
            "    named = dict(zip(e['op_args'], args))\n"
            "    outs = r.as_list(r.make_fake(ex)(*args))\n"
            "    counts = [r.evaluate(a['count'], c['params']) for a in e['args'] if 'count' in "
            "a]\n"
            "    sizes = [math.prod(v.shape) for v in args if hasattr(v, 'shape')] + "
            "[math.prod(o.shape) for o in outs]\n"
            "    print(c['name'], ' '.join(map(str, counts)), '|', ' '.join(map(str, sizes)))\n";
        dir.write("check.py", script);
        const auto ran =
            test::run_program("/usr/bin/python3",
                              {(dir / "check.py").string(), (dir / ("cuopt_" + p.entry)).string()});
        INFO(ran.output);
        REQUIRE(ran.exit_code == 0);
        std::ostringstream want;
        const manifest h = read_holdout_manifest(k_examples / example / "holdout_cases.json", p.m);
        std::vector<manifest_case> cases = p.m.cases;
        cases.insert(cases.end(), h.cases.begin(), h.cases.end());
        for (const manifest_case& c : cases) {
            std::string counts, inputs, outputs;
            for (const manifest_arg& a : p.m.args) {
                if (!a.is_buffer()) continue;
                const std::string n =
                    std::to_string(evaluate_integer_expression(a.count, c.params));
                counts += (counts.empty() ? "" : " ") + n;
                (a.has_input() ? inputs : outputs) += " " + n;
            }
            want << c.name << " " << counts << " |" << inputs << outputs << "\n";
        }
        CHECK(ran.output == want.str());
        // Without a GPU the package's own test says so and passes.
        const auto tested = test::run_program("/usr/bin/python3",
                                              {(dir / ("tests/test_" + p.entry + ".py")).string()});
        CHECK(tested.exit_code == 0);
        CHECK_THAT(tested.output, Catch::Contains("SKIP test_matches_reference: no CUDA device"));
    }
}

TEST_CASE(
    "the exported launcher's arithmetic equals the manifest's for every case and holdout "
    "shape of every example",
    "[integration]") {
    if (!fs::exists(k_nvcc)) {
        WARN("skipped: no nvcc at " << k_nvcc);
        return;
    }
    struct example {
        std::string name, file;
        bool holdout;
        // A tunable whose other values the kernel refuses (static_assert) unless every other
        // tunable has its first value: gemm-fp8's MMA path ignores the FMA kernels' tunables.
        std::string alone = "";
    };
    for (const example& e :
         {example{"matmul", "initial.cu", true}, example{"softmax", "initial.cu", true},
          example{"reduction", "initial.cu", true}, example{"gemm-fp8", "initial.cu", true, "MMA"},
          example{"matmul-tiled", "matmul_tiled.cu", false}}) {
        const manifest m = read_manifest(k_examples / e.name / "input_cases.json");
        std::vector<manifest_case> cases = m.cases;
        if (e.holdout) {
            const manifest h = read_holdout_manifest(k_examples / e.name / "holdout_cases.json", m);
            cases.insert(cases.end(), h.cases.begin(), h.cases.end());
        }
        // The first configuration and the last of every tunable: launch shapes that differ.
        // With a tunable that must stand alone, the last of the others beside its first value,
        // and its last value beside the others' first.
        std::map<std::string, std::int64_t> first = m.default_tunables(), last;
        for (const auto& [name, values] : m.tunables) last[name] = values.back();
        std::vector<std::map<std::string, std::int64_t>> configurations = {first, last};
        if (!e.alone.empty()) {
            configurations[1][e.alone] = first[e.alone];
            configurations.push_back(first);
            configurations.back()[e.alone] = last[e.alone];
        }
        for (const auto& tunables : configurations) {
            INFO(e.name << " with " << tunables.size() << " tunables");
            const exported_kernel k = example_kernel(e.name, e.file, m, tunables);
            test::scratch_folder dir;
            dir.write(k.entry + ".cuh", cuda_header(k, m));
            dir.write("driver.cu", driver(k, m, cases));
            // gemm-fp8 asks for sm_90a (its wgmma kernels): that target alone, no compute_90
            // PTX beside it, where the kernel's own static_assert refuses MMA 3 and 4.
            const std::string arch = "arch=compute_" + k.arch.substr(3) + ",code=" + k.arch;
            const auto built = test::run_program(
                k_nvcc, {"-std=c++17", "-gencode", arch, "-o", (dir / "driver").string(),
                         (dir / "driver.cu").string()});
            INFO(built.output);
            REQUIRE(built.exit_code == 0);
            const auto ran = test::run_program((dir / "driver").string(), {});
            CHECK(ran.output == expected(k, m, cases));
        }
    }
}

TEST_CASE("export writes the winner's header only for a go, and never reads through a link",
          "[integration]") {
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
    "a parameter no scalar carries is a launcher parameter, a scalar standing for an "
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

TEST_CASE(
    "export --torch writes the package beside the header, --verify says in one line why it "
    "cannot run without a GPU") {
    test::optimizer_fixture f;
    const auto r = test::run_optimizer(
        f.args({"--max-iterations", "1", "--significance-runs", "2", "--sanitizer",
                std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh",
                "--holdout-cases", (k_examples / "matmul" / "holdout_cases.json").string()}));
    INFO(r.output);
    REQUIRE(fs::exists(f.run() / "summary.json"));
    const fs::path out = f.dir / "pkg";
    auto exported = test::run_optimizer({"export", f.run().string(), "--torch", out.string(),
                                         "--header", (f.dir / "h").string(), "--force"});
    INFO(exported.output);
    REQUIRE(exported.exit_code == 0);
    for (const char* file :
         {"setup.py", "pyproject.toml", "README.md", "bench.py", "tests/test_matmul_f32.py",
          "cuopt_matmul_f32/__init__.py", "cuopt_matmul_f32/_runtime.py",
          "cuopt_matmul_f32/export.json", "csrc/matmul_f32.cuh", "csrc/matmul_f32_op.cpp",
          "csrc/matmul_f32_kernel.cu", "csrc/matmul_f32_reference_kernel.cu"})
        CHECK(fs::is_regular_file(out / file));
    CHECK(fs::is_regular_file(f.dir / "h" / "matmul_f32.cuh"));
    // The package's cases are the run's: its measured medians and its holdout shapes.
    const rapidjson::Document e =
        parse_json(test::read_text(out / "cuopt_matmul_f32/export.json"), "export.json");
    std::set<std::string> kinds;
    for (const auto& c : e["cases"].GetArray()) {
        kinds.insert(c["kind"].GetString());
        if (std::string(c["kind"].GetString()) == "performance")
            CHECK(c["run_median_ms"].GetDouble() > 0);
    }
    CHECK(kinds == std::set<std::string>{"correctness", "holdout", "performance"});
    CHECK_THAT(test::read_text(out / "cuopt_matmul_f32/export.json"),
               Catch::Contains("\"schema\": \"matmul_f32(Tensor a, Tensor b) -> Tensor\""));
    // Neither flag: a usage error; --verify without --torch too.
    CHECK(test::run_optimizer({"export", f.run().string()}).exit_code == 64);
    CHECK(test::run_optimizer({"export", f.run().string(), "--verify", "--header", out.string()})
              .exit_code == 64);
    // The reference's request is the run's, read like every other file: not through a link.
    fs::rename(f.run() / "reference" / "request.json", f.dir / "request.json");
    fs::create_symlink(f.dir / "request.json", f.run() / "reference" / "request.json");
    exported =
        test::run_optimizer({"export", f.run().string(), "--torch", out.string(), "--force"});
    CHECK(exported.exit_code == 11);
    CHECK_THAT(exported.output, Catch::Contains("request.json") && Catch::Contains("a link"));
    fs::remove(f.run() / "reference" / "request.json");
    fs::rename(f.dir / "request.json", f.run() / "reference" / "request.json");
    // --verify's figures, as it records them: summary.json's export block (schema-checked)
    // and a table in the rebuilt report.
    std::string summary = test::read_text(f.run() / "summary.json");
    summary.insert(summary.rfind('}'),
                   R"(, "export": {"package": "/p", "op": "cuda_optimizer::matmul_f32",
        "built": true, "test_passed": true, "torch": "2.11.0", "gpu": "H100", "tolerance": 0.1,
        "within_tolerance": false, "failure": null, "cases": [{"name": "perf-256",
        "run_median_ms": 0.004, "op_median_ms": 0.009, "ratio": 2.25, "within": false,
        "compiled_median_ms": 0.011, "kernel_median_ms": 0.0042, "back_to_back_median_ms": 0.0071,
        "why": "launch overhead"}]})");
    write_file_atomic(f.run() / "summary.json", summary);
    test::read_checked_json(f.run() / "summary.json", "summary");
    REQUIRE(test::run_optimizer({"report", f.run().string()}).exit_code == 0);
    CHECK_THAT(test::read_text(f.run() / "report.html"),
               Catch::Contains("Exported op, measured in place") &&
                   Catch::Contains("2.250&times;") && Catch::Contains("launch overhead") &&
                   Catch::Contains("<th>back to back</th>") && Catch::Contains("0.0071") &&
                   Catch::Contains("<th>its kernel</th>") && Catch::Contains("0.0042"));
    // --verify builds and records inside the run folder: never in another user's.
    if (::geteuid() == 0) {
        REQUIRE(test::run_program("/bin/chown", {"65534", f.run().string()}).exit_code == 0);
        exported = test::run_optimizer(
            {"export", f.run().string(), "--torch", out.string(), "--force", "--verify"});
        CHECK(exported.exit_code == 11);
        CHECK_THAT(exported.output, Catch::Contains("another user's (uid 65534)"));
        CHECK_FALSE(fs::exists(f.run() / "export-verify"));
        REQUIRE(test::run_program("/bin/chown", {"0", f.run().string()}).exit_code == 0);
    }
    if (!test::gpu_unavailable_reason().empty()) {
        exported = test::run_optimizer({"export", f.run().string(), "--torch", out.string(),
                                        "--force", "--verify", "--python", "/usr/bin/python3"});
        CHECK(exported.exit_code == 11);
        CHECK_THAT(exported.output,
                   Catch::Contains("no CUDA device") || Catch::Contains("no Python with torch"));
    }
}

TEST_CASE(
    "an imported problem's package tests the op against its own module, and replace(model) "
    "hands the op forward's tensors",
    "[integration][torch]") {
    const auto has_torch =
        test::run_program("/bin/sh", {"-c", "/usr/bin/python3 -c 'import torch' 2>&1"});
    if (has_torch.exit_code != 0) {
        WARN("skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)");
        return;
    }
    test::scratch_folder dir;
    dir.write("cands/fast.cu",
              "// FAKE_MS=0.5\n" + test::read_text(k_examples / "matmul/initial.cu"));
    const auto r = test::run_optimizer(
        {"optimize", "--config",
         (fs::path(CUOPT_SOURCE_DIR) / "tests/data/torch-oracle/matmul/config.json").string(),
         "--harness", CUOPT_FAKE_HARNESS_BINARY, "--results-dir", (dir / "results").string(),
         "--proposer", "files", "--candidates", (dir / "cands").string(), "--max-iterations", "1",
         "--python", "/usr/bin/python3", "--no-evidence", "--quiet"});
    INFO(r.output);
    const fs::path run = dir / "results/run-001";
    REQUIRE(fs::is_regular_file(run / "pytorch/pytorch.json"));
    const auto exported =
        test::run_optimizer({"export", run.string(), "--torch", (dir / "pkg").string(), "--force"});
    INFO(exported.output);
    REQUIRE(exported.exit_code == 0);
    CHECK_FALSE(fs::exists(dir / "pkg/csrc/matmul_f32_reference_op.cpp"));  // the module is
    CHECK(fs::is_regular_file(dir / "pkg/cuopt_matmul_f32/reference.py"));  // the oracle
    CHECK_THAT(test::read_text(dir / "pkg/README.md"), Catch::Contains("replace(model)"));
    const std::string script = R"(import importlib.util, sys
sys.path.insert(0, sys.argv[1] + "/cuopt_matmul_f32")
import _runtime as r
spec = importlib.util.spec_from_file_location("t", sys.argv[1] + "/tests/test_matmul_f32.py")
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
e = r.read_export(sys.argv[1] + "/cuopt_matmul_f32")
params = {"m": 5, "n": 7, "k": 3}
args = r.call_args(e, params, "cpu", 1)
out = t.module_reference(e, r)(args, params)
print("reference", list(out.shape), r.mismatches(out, args[0] @ args[1], e["cases"][0]["tolerance"]["c"]))
ns = {}
exec(open(sys.argv[1] + "/cuopt_matmul_f32/reference.py").read(), ns)
model = ns["Model"](*(ns["get_init_inputs"]() if "get_init_inputs" in ns else []))
model = r.replace_forward(model, e, lambda *a: [list(x.shape) for x in a])
print("replaced", model(args[0], args[1]))
)";
    dir.write("check.py", script);
    const auto ran = test::run_program("/usr/bin/python3",
                                       {(dir / "check.py").string(), (dir / "pkg").string()});
    CHECK(ran.output == "reference [5, 7] (0, 0.0)\nreplaced [[5, 3], [3, 7]]\n");
}

TEST_CASE(
    "an op whose arguments are named like its own locals, with an inout, a float, a flat count "
    "and a parameter no shape gives, compiles, names it cannot take are refused") {
    test::scratch_folder dir;
    const fs::path file = dir.write("input_cases.json", R"json({"schema_version": 1,
      "launch": {"grid": ["ceil(seq*d/256)", 1, 1], "block": [256, 1, 1]},
      "args": [
        {"name": "q", "dtype": "f16", "kind": "input", "count": "seq*d",
         "init": {"kind": "normal", "mean": 0, "stddev": 1, "seed": 1}},
        {"name": "v", "dtype": "f32", "kind": "inout", "count": "seq*d",
         "init": {"kind": "uniform", "low": 0, "high": 1, "seed": 2}},
        {"name": "device", "dtype": "i32", "kind": "input", "count": "ceil(seq/2)",
         "init": {"kind": "int_range", "low": 0, "high": 9, "seed": 3}},
        {"name": "e", "dtype": "f32", "kind": "output", "count": "seq*window"},
        {"name": "p", "dtype": "f32", "kind": "scalar", "value": 0.125},
        {"name": "guard", "dtype": "i64", "kind": "scalar", "value": "seq*d"}],
      "cases": [{"name": "a", "kind": "performance", "params": {"seq": 64, "d": 32, "window": 4}},
                {"name": "b", "kind": "correctness", "params": {"seq": 3, "d": 8, "window": 2}}]})json");
    const manifest m = read_manifest(file);
    CHECK(torch_export_refusal(m, "attn") == "");
    CHECK_THAT(torch_export_refusal(m, "pass"), Catch::Contains("Python keyword"));
    exported_kernel k;
    k.entry = "attn";
    k.source =
        "#include <cuda_fp16.h>\nextern \"C\" __global__ void attn(const __half* q, float* v, "
        "const "
        "int* device, float* e, float p, long long guard) {}\n";
    k.launch = m.launch;
    k.arch = "sm_90";
    export_facts f;
    f.verdict = "go";
    for (const manifest_case& c : m.cases) f.cases.push_back({c.name, "performance", c.params, 1});
    const auto files = torch_package_files(k, std::nullopt, m, f);
    const std::string op = files.at("csrc/attn_op.cpp");
    CHECK_THAT(op, Catch::Contains("m.def(\"attn(Tensor q, Tensor(a!) v, Tensor device, int "
                                   "window, float p=0.125) -> Tensor\")"));
    for (const auto& [name, text] : files) dir.write(name, text);
    if (fs::exists(k_nvcc)) {
        const auto built = test::run_program(
            k_nvcc, {"-std=c++17", "-arch=sm_90", "-c", "-o", (dir / "k.o").string(),
                     (dir / "csrc/attn_kernel.cu").string()});
        INFO(built.output);
        CHECK(built.exit_code == 0);
    }
    if (fs::exists(k_torch_headers)) {
        write_cuda_macros_stand_in(dir);
        const auto compiled = test::run_program(
            "/usr/bin/g++",
            {"-std=c++17", "-fsyntax-only", "-Wall", "-Wshadow", "-I" + (dir / "stand-in").string(),
             "-I/usr/include/torch/csrc/api/include", "-I/usr/local/cuda/include",
             (dir / "csrc/attn_op.cpp").string()});
        INFO(compiled.output);
        CHECK(compiled.exit_code == 0);
    }
    // Names the op's C++ or the package's Python use themselves are refused, one line each.
    std::string text = test::read_text(file);
    text.replace(text.find("\"name\": \"device\""), 16, "\"name\": \"at\"");
    const manifest clash = read_manifest(dir.write("clash.json", text));
    CHECK_THAT(torch_export_refusal(clash, "attn"), Catch::Contains("argument at"));
}

TEST_CASE("export --verify says why the op's time is off the run's from its kernel's own time") {
    // The kernel alone as the run saw it: the rest is the call's.
    CHECK_THAT(verify_off_reason({0.0230, 0.0337, 0.0236}),
               Catch::StartsWith("launch overhead: its kernel alone 0.0236 ms (1.026x the run's)"));
    // The kernel itself slower: not overhead, whatever the kernel's size.
    CHECK_THAT(verify_off_reason({0.0230, 0.0337, 0.0300}),
               Catch::StartsWith("slower than the run measured (its kernel alone 0.0300 ms") &&
                   Catch::Contains("NVRTC"));
    CHECK_THAT(verify_off_reason({0.0634, 0.0756, 0.0730}),
               Catch::StartsWith("slower than the run measured (its kernel alone"));
    CHECK_THAT(verify_off_reason({0.0175, 0.0134, 0.0130}),
               Catch::StartsWith("faster than the run measured (its kernel alone 0.0130 ms"));
    // No profiler figure: a kernel of a few microseconds is taken to be overhead, a long one not.
    CHECK_THAT(verify_off_reason({0.0175, 0.0199, 0}),
               Catch::StartsWith("launch overhead: CUDA events around one call"));
    CHECK_THAT(verify_off_reason({1.5, 1.9, 0}),
               Catch::StartsWith("slower than the run measured:"));
}
