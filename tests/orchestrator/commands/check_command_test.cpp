// check tells the truth: it compiles through the real cuda-harness whatever --harness names (a
// stand-in compiles nothing), with the initial kernel's tunables as optimize passes them; it
// refuses a config value optimize refuses, with optimize's code; a stand-in harness asked for a
// kernel it does not simulate says so, in check and optimize alike. Through the real binaries.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::optimizer_fixture;

std::vector<std::string> as_check(std::vector<std::string> args) {
    args[0] = "check";
    return args;
}

const std::string k_softmax = std::string(CUOPT_SOURCE_DIR) + "/tests/fixtures/softmax-rows/";

}  // namespace

TEST_CASE("check compiles through the real harness: a kernel the fake would take fails with 21",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu",
                f.kernel("FAKE_MS=2") + "__device__ int broken = not_declared_anywhere;\n");
    const auto r = test::run_optimizer(as_check(f.args()));
    INFO(r.output);
    CHECK(r.exit_code == 21);
    CHECK_THAT(r.output, Catch::Contains("FAIL  initial compiles") &&
                             Catch::Contains("not_declared_anywhere") &&
                             Catch::Contains("not ready"));
}

TEST_CASE("check compiles the initial kernel with each tunable's first value, as optimize does",
          "[integration]") {
    optimizer_fixture f;
    const std::string source = test::read_text(f.dir / "initial.cu");
    f.dir.write("initial.cu",
                "#if !defined(BLOCK_X) || BLOCK_X != 16\n#error BLOCK_X is not the "
                "first value\n#endif\n" +
                    source);
    f.dir.write("reference.cu", test::read_text(f.dir / "initial.cu"));
    const auto r = test::run_optimizer(as_check(f.args()));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("ok    CUDA toolkit        NVRTC compiles (through ") &&
                             Catch::Contains("cuda-harness)") &&
                             Catch::Contains("ok    initial compiles") &&
                             Catch::Contains("ok    reference compiles"));
}

TEST_CASE("check without a real harness to compile with says not compiled, and why, never ok",
          "[integration]") {
    optimizer_fixture f;
    // cuda-optimizer alone in a folder: no cuda-harness beside it, none on PATH.
    const fs::path lone = f.dir / "bin/cuda-optimizer";
    fs::create_directories(lone.parent_path());
    fs::copy_file(CUOPT_OPTIMIZER_BINARY, lone);
    fs::permissions(lone, fs::perms::owner_exec, fs::perm_options::add);
    f.dir.write("initial.cu",
                f.kernel("FAKE_MS=2") + "__device__ int broken = not_declared_anywhere;\n");
    const auto r = test::run_program(lone.string(), as_check(f.args()));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output,
               Catch::Contains("skip  initial compiles    not compiled: no cuda-harness beside "
                               "cuda-optimizer") &&
                   Catch::Contains("skip  reference compiles") &&
                   !Catch::Contains("ok    initial compiles"));
}

TEST_CASE("check refuses a config value optimize refuses, naming file and field, with code 11",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("config.json", R"({ "max_iterations": "three" })");
    const auto args = f.args({"--config", (f.dir / "config.json").string()});
    const auto check = test::run_optimizer(as_check(args));
    INFO(check.output);
    CHECK(check.exit_code == 11);
    CHECK_THAT(check.output,
               Catch::Contains("FAIL  config") &&
                   Catch::Contains("config.json: field max_iterations: expected a whole number "
                                   "from 0 to 10000, got three") &&
                   Catch::Contains("not ready"));
    const auto run = test::run_optimizer(args);
    CHECK(run.exit_code == 11);
    f.dir.write("config.json", R"({ "max_iterations": 2 })");
    const auto fine = test::run_optimizer(as_check(args));
    INFO(fine.output);
    CHECK(fine.exit_code == 0);
    CHECK_THAT(fine.output, Catch::Contains("ok    config"));
}

TEST_CASE("a fake run of a kernel the fake does not simulate says so, and is not a failing kernel",
          "[integration]") {
    test::scratch_folder dir;
    std::vector<std::string> args = {"optimize",
                                     "--reference",
                                     k_softmax + "softmax.cu",
                                     "--initial-kernel",
                                     k_softmax + "softmax.cu",
                                     "--input-cases",
                                     k_softmax + "input_cases.json",
                                     "--harness",
                                     CUOPT_FAKE_HARNESS_BINARY,
                                     "--results-dir",
                                     (dir / "results").string(),
                                     "--timeout",
                                     "5",
                                     "--no-sanitizer"};
    const std::string said =
        "fake-harness simulates only matmul_f32 and gemm_e4m3; this request's kernel is "
        "softmax_rows "
        "(a fake run cannot evaluate it: run on a GPU)";
    const auto run = test::run_optimizer(args);
    INFO(run.output);
    CHECK(run.exit_code == 20);
    CHECK_THAT(run.output, Catch::Contains(said) && !Catch::Contains("reference kernel fails"));
    CHECK_FALSE(fs::exists(dir / "results"));
    const auto check = test::run_optimizer(as_check(args));
    INFO(check.output);
    CHECK(check.exit_code == 20);
    CHECK_THAT(check.output, Catch::Contains("FAIL  harness runs it") && Catch::Contains(said));
}

TEST_CASE("check refuses a reference whose kernel is not the signature's, as the run would (22)",
          "[integration]") {
    optimizer_fixture f;
    std::string reference = test::read_text(f.dir / "reference.cu");
    const std::string name = "matmul_f32";
    for (std::size_t at = reference.find(name); at != std::string::npos;
         at = reference.find(name, at))
        reference.replace(at, name.size(), "matmul_reference");
    f.dir.write("reference.cu", reference);
    const auto r = test::run_optimizer(as_check(f.args(
        {"--signature",
         "void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k)"})));
    INFO(r.output);
    CHECK(r.exit_code == 22);
    CHECK_THAT(r.output, Catch::Contains("FAIL  reference entry") &&
                             Catch::Contains("defines no __global__ function of that name (it "
                                             "has: matmul_reference)") &&
                             Catch::Contains("not ready"));
}

TEST_CASE(
    "check refuses a tunable whose first value is not the kernel's default, one the kernel never "
    "reads, and 'const' on an output in the signature (11)",
    "[integration]") {
    optimizer_fixture f;
    const std::string manifest = test::read_text(f.dir / "input_cases.json");
    const std::string kernel = test::read_text(f.dir / "initial.cu");
    auto check_with = [&](const std::string& from, const std::string& to, const std::string& file,
                          std::vector<std::string> extra = {}) {
        std::string text = file == "initial.cu" ? kernel : manifest;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        f.dir.write(file, text.replace(at, from.size(), to));
        const auto r = test::run_optimizer(as_check(f.args(extra)));
        f.dir.write("input_cases.json", manifest);
        f.dir.write("initial.cu", kernel);
        return r;
    };
    auto r = check_with("#define BLOCK_X 16", "#define BLOCK_X 32", "initial.cu");
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("FAIL  tunables") &&
                             Catch::Contains("'BLOCK_X': first value 16 but initial.cu line ") &&
                             Catch::Contains("#defines BLOCK_X 32") &&
                             Catch::Contains("fix: make the kernel's default the tunable's first"));
    r = check_with(R"("tunables": {)", R"("tunables": { "UNROLL": [1, 4],)", "input_cases.json");
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output,
               Catch::Contains("FAIL  tunables") &&
                   Catch::Contains("'UNROLL' is read by neither initial.cu nor the launch"));
    r = check_with(R"("tunables": {)", R"("tunables": { "UNROLL": [1, 4],)", "input_cases.json");
    r = test::run_optimizer(as_check(f.args(
        {"--signature",
         "void matmul_f32(const float* a, const float* b, const float* c, int m, int n, int k)"})));
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("FAIL  signature") &&
                             Catch::Contains("'const float*' on an output buffer; the kernel "
                                             "writes it, so drop the const"));
    r = test::run_optimizer(as_check(f.args()));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("ok    tunables            4 read by the kernel or the "
                                         "launch, first values its defaults"));
}

TEST_CASE(
    "check refuses a tunable the kernel #defines outside its own #ifndef guard, whatever the "
    "value, since the define overrides every configuration's -D (11)",
    "[integration]") {
    optimizer_fixture f;
    const std::string kernel = test::read_text(f.dir / "initial.cu");
    const std::string guard = "#ifndef BLOCK_X\n#define BLOCK_X 16\n#endif\n";
    REQUIRE(kernel.find(guard) != std::string::npos);
    auto check_with_guard = [&](const std::string& replacement) {
        std::string text = kernel;
        f.dir.write("initial.cu", text.replace(text.find(guard), guard.size(), replacement));
        const auto r = test::run_optimizer(as_check(f.args()));
        f.dir.write("initial.cu", kernel);
        return r;
    };
    for (const std::string& unguarded :
         {std::string("#define BLOCK_X 128\n"), std::string("  #  define BLOCK_X 16\n"),
          guard + "#undef BLOCK_X\n#define BLOCK_X 16\n",
          "#ifdef BLOCK_X\n#define BLOCK_X 16\n#endif\n" + guard,
          "#if !defined(BLOCK_X)\n#else\n#define BLOCK_X 16\n#endif\n" + guard,
          "#if 0\n#elif defined(BLOCK_X)\n#define BLOCK_X 16\n#endif\n" + guard,
          "#ifndef BLOCK_X\n#elif 1\n#define BLOCK_X 16\n#endif\n" + guard,
          "#ifndef BLOCK_X\n#elifdef BLOCK_X\n#define BLOCK_X 16\n#endif\n" + guard}) {
        const auto r = check_with_guard(unguarded);
        INFO(unguarded << "\n" << r.output);
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains("FAIL  tunables            'BLOCK_X': initial.cu "
                                             "line ") &&
                                 Catch::Contains(" is outside an #ifndef BLOCK_X guard, so it "
                                                 "overrides every value of the tunable "
                                                 "(-DBLOCK_X=16 included)") &&
                                 Catch::Contains("fix: wrap it in #ifndef BLOCK_X ... #endif, "
                                                 "its value the tunable's first (16)"));
    }
    const auto r = check_with_guard("#define BLOCK_X 128\n");  // first value 16, default 128
    CHECK_THAT(r.output, Catch::Contains("'#define BLOCK_X 128' is outside an #ifndef BLOCK_X"));
    for (const std::string& guarded :
         {std::string("#if !defined(BLOCK_X)\n#define BLOCK_X 16\n#endif\n"),
          std::string("#ifdef BLOCK_X\n#else\n#define BLOCK_X 16\n#endif\n"),
          "#if 0\n#define BLOCK_X 128\n#endif\n" + guard,
          std::string("#if 0\n#elif !defined(BLOCK_X)\n#define BLOCK_X 16\n#endif\n"),
          "#ifdef BLOCK_X\n#elif 1\n#define BLOCK_X 16\n#endif\n" + guard,
          "#if 0\n#elifndef BLOCK_X\n#define BLOCK_X 16\n#endif\n" + guard,
          "#define BLOCK_XY 3\n#define BLOCK_X_HALF (BLOCK_X / 2)\n" + guard}) {
        const auto fine = check_with_guard(guarded);
        INFO(guarded << "\n" << fine.output);
        CHECK_THAT(fine.output, Catch::Contains("ok    tunables"));
    }
}

TEST_CASE("check's help shows --all-configurations with an example, its limit and its exit code",
          "[integration]") {
    const auto r = test::run_optimizer({"check", "--help"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output,
               Catch::Contains("--all-configurations") && Catch::Contains("(at most 10000)") &&
                   Catch::Contains("  cuda-optimizer check --config "
                                   "examples/matmul-tiled/config.json --all-configurations\n") &&
                   Catch::Contains("21 the initial\nkernel does not compile (with "
                                   "--all-configurations: in some configuration)"));
}

TEST_CASE("check --all-configurations refuses more than 10000 configurations in one line, with 64",
          "[integration]") {
    optimizer_fixture f;
    const std::string manifest = test::read_text(f.dir / "input_cases.json");
    const std::string from = R"("tunables": {)";
    std::string values;
    for (int v = 0; v < 40; ++v) values += (v ? ", " : "") + std::to_string(v);
    std::string text = manifest;
    f.dir.write("input_cases.json",
                text.replace(text.find(from), from.size(), from + R"( "PAD": [)" + values + "],"));
    f.dir.write("initial.cu", "#ifndef PAD\n#define PAD 0\n#endif\n__device__ int pad = PAD;\n" +
                                  test::read_text(f.dir / "initial.cu"));
    const auto r = test::run_optimizer(as_check(f.args({"--all-configurations"})));
    INFO(r.output);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("FAIL  every configuration 12000 configurations, over "
                                         "the 10000 --all-configurations compiles\n"));
}

TEST_CASE(
    "check reads a tunable's default only from its own #ifndef guard, outside comments, as C "
    "reads the number, and counts a use inside another macro as a read",
    "[integration]") {
    optimizer_fixture f;
    const std::string kernel = test::read_text(f.dir / "initial.cu");
    auto check_kernel = [&](const std::string& text) {
        f.dir.write("initial.cu", text);
        const auto r = test::run_optimizer(as_check(f.args()));
        f.dir.write("initial.cu", kernel);
        return r;
    };
    const std::string guard = "#ifndef BLOCK_X\n#define BLOCK_X 16\n#endif\n";
    REQUIRE(kernel.find(guard) != std::string::npos);
    auto with_guard = [&](const std::string& replacement) {
        std::string text = kernel;
        return text.replace(text.find(guard), guard.size(), replacement);
    };
    for (const std::string& fine :
         {with_guard("/*\n#ifndef BLOCK_X\n#define BLOCK_X 128\n#endif\n*/\n" + guard),
          with_guard("// #define BLOCK_X 128\n" + guard),
          with_guard("#ifndef BLOCK_X\n#define BLOCK_X 0x10\n#endif\n"),
          with_guard("#ifndef BLOCK_X\n#define BLOCK_X 020 // octal 16\n#endif\n"),
          with_guard("#ifndef BLOCK_X\n#if __CUDA_ARCH__ >= 900\n#define BLOCK_X 16\n#else\n"
                     "#define BLOCK_X 32\n#endif\n#endif\n"),
          with_guard("#ifndef BLOCK_X\n#define BLOCK_X 99999999999999999999\n#endif\n")}) {
        const auto r = check_kernel(fine);
        INFO(fine.substr(0, 200) << "\n" << r.output);
        CHECK_THAT(r.output, Catch::Contains("ok    tunables"));
        CHECK(r.exit_code != 70);
    }
    const auto r = check_kernel(with_guard("#ifndef BLOCK_X\n#define BLOCK_X 010\n#endif\n"));
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("'BLOCK_X': first value 16 but initial.cu line ") &&
                             Catch::Contains(" #defines BLOCK_X 8"));  // 010 is octal 8
}

TEST_CASE(
    "check --all-configurations compiles every tunable configuration: a kernel's static_assert "
    "refusal is counted, any other error names its configuration",
    "[integration]") {
    optimizer_fixture f;
    const std::string kernel = test::read_text(f.dir / "initial.cu");
    f.dir.write("initial.cu",
                "static_assert(BLOCK_X != 128 || BLOCK_Y != 1, \"too thin\");\n" + kernel);
    auto r = test::run_optimizer(as_check(f.args({"--all-configurations"})));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("ok    every configuration 288 of 300 compile; 12 refused "
                                         "by the kernel's own static_assert (the first: "
                                         "BLOCK_X=128 BLOCK_Y=1 ROWS_PER_THREAD=1 TILE_K=0)"));
    f.dir.write("initial.cu",
                "#if TILE_K == 32 && ROWS_PER_THREAD == 4 && BLOCK_X == 16\n__device__ int broken "
                "= nowhere;\n"
                "#endif\n" +
                    kernel);
    r = test::run_optimizer(as_check(f.args({"--all-configurations"})));
    INFO(r.output);
    CHECK(r.exit_code == 21);
    // A row for each configuration that fails, named by its defines, then one counting them.
    for (const char* y : {"16", "8", "4", "2", "1"})
        CHECK_THAT(r.output, Catch::Contains(std::string("FAIL  every configuration BLOCK_X=16 "
                                                         "BLOCK_Y=") +
                                             y +
                                             " ROWS_PER_THREAD=4 TILE_K=32: initial.cu(2): "
                                             "error"));
    CHECK_THAT(r.output, Catch::Contains("FAIL  every configuration 5 of 300 configurations do "
                                         "not compile (above)\n        fix: fix the kernel for "
                                         "those configurations") &&
                             Catch::Contains("nowhere"));
    r = test::run_optimizer(as_check(f.args()));  // without the flag: the first only, said so
    CHECK_THAT(r.output, Catch::Contains("(the first of 300 configurations; --all-configurations "
                                         "compiles every one)"));
}

TEST_CASE("a missing file a --config names gets a fix naming the config's key", "[integration]") {
    optimizer_fixture f;
    f.dir.write("c.json", R"({"reference": "nowhere.cu"})");
    std::vector<std::string> args = as_check(f.args({"--config", (f.dir / "c.json").string()}));
    const auto flag = std::find(args.begin(), args.end(), "--reference");
    REQUIRE(flag != args.end());
    args.erase(flag, flag + 2);  // the config's reference, not the fixture's flag
    const auto r = test::run_optimizer(args);
    INFO(r.output);
    CHECK_THAT(r.output,
               Catch::Contains("fix: no such file; check --reference (\"reference\" in "));
}

TEST_CASE(
    "the bundled matmul-tiled example compiles in every configuration of its tunables but MMA 1 "
    "with STAGES 0 (refused by its static_assert), and holds holdout cases that are no multiple "
    "of any tile",
    "[integration]") {
    const std::string example = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul-tiled/";
    const test::scratch_folder results;
    const auto r = test::run_optimizer({"check", "--config", example + "config.json",
                                        "--all-configurations", "--harness", CUOPT_HARNESS_BINARY,
                                        "--results-dir", results.path().string()});
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("ok    holdout valid       4 hidden case(s)") &&
                             Catch::Contains(
                                 "ok    every configuration 224 of 256 compile; 32 refused by the "
                                 "kernel's own static_assert") &&
                             Catch::Contains("ok    tunables            7 read by the kernel"));
}

TEST_CASE(
    "the bundled gemm-fp8 kernel compiles for sm_90a (its manifest's arch_specific) with every "
    "MMA value beside the FMA tunables' first two values, each tensor-core configuration (MMA > "
    "0) refusing by static_assert every FMA tunable but the first",
    "[integration]") {
    // All 960 configurations of the example (196 compile, 764 refused) take some 4 minutes
    // here, near CTest's limit: the FMA tunables are cut to their first two values (80).
    const std::string example = std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/";
    const test::scratch_folder dir;
    for (const char* f : {"config.json", "initial.cu", "reference.cu", "holdout_cases.json"})
        dir.write(f, test::read_text(example + f));
    std::string manifest = test::read_text(example + "input_cases.json");
    const std::string from = R"("BLOCK_X": [16, 32, 64, 8], "BLOCK_Y": [16, 8, 4, 2], )"
                             R"("TILE_K": [0, 16, 32], "ROWS_PER_THREAD": [1, 2, 4, 8], )";
    REQUIRE(manifest.find(from) != std::string::npos);
    dir.write("input_cases.json",
              manifest.replace(manifest.find(from), from.size(),
                               R"("BLOCK_X": [16, 32], "BLOCK_Y": [16, 8], "TILE_K": [0, 16], )"
                               R"("ROWS_PER_THREAD": [1, 2], )"));
    const auto r = test::run_optimizer({"check", "--config", (dir / "config.json").string(),
                                        "--all-configurations", "--harness", CUOPT_HARNESS_BINARY,
                                        "--results-dir", (dir / "results").string()});
    INFO(r.output);
    // 16 FMA configurations with MMA 0, and MMA 1 to 4 with the FMA tunables' first values:
    // MMA 3 and 4 (wgmma) compile only for sm_90a, so without arch_specific they would not.
    CHECK_THAT(r.output, Catch::Contains("ok    every configuration 20 of 80 compile; 60 refused "
                                         "by the kernel's own static_assert (the first: "
                                         "BLOCK_X=16 BLOCK_Y=16 MMA=1 ROWS_PER_THREAD=1 "
                                         "TILE_K=16)") &&
                             Catch::Contains("ok    tunables            5 read by the kernel"));
}
