#include "orchestrator/artifacts/run_artifacts.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "orchestrator/artifacts/winner_files.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// A kernel whose defines are #ifndef-guarded (as a tunable kernel's are), that fails to
// compile unless every define and -D/-U option reached it with the winning values.
const char* k_tunable_kernel =
    "#ifndef TILE\n"
    "#define TILE 8\n"
    "#endif\n"
    "#ifdef DROPPED\n"
    "#error DROPPED must be undefined by -UDROPPED\n"
    "#endif\n"
    "static_assert(TILE == 32, \"TILE\");\n"
    "static_assert(EXTRA == 3, \"EXTRA\");\n"
    "static_assert(FLAG == 1, \"FLAG\");\n"
    "extern \"C\" __global__ void scale(float* x, int n) {\n"
    "    const int i = blockIdx.x * TILE + threadIdx.x;\n"
    "    if (i < n) x[i] *= EXTRA + SCALE;\n"
    "}\n";

manifest tunable_manifest() {
    manifest m;
    m.tunables["TILE"] = {8, 32};
    m.launch.grid = {"ceil(n/TILE)", "1", "1"};
    m.launch.block = {"TILE", "1", "1"};
    m.cases.resize(2);
    m.cases[0].name = "small";
    m.cases[0].kind = case_kind::correctness;
    m.cases[0].params = {{"n", 100}};
    m.cases[1].name = "big";
    m.cases[1].params = {{"n", 4096}};
    launch_expressions own = m.launch;
    own.block = {"64", "1", "1"};
    own.dynamic_shared_bytes = "n*4";
    m.cases[1].launch = own;
    return m;
}

search_outcome winner_outcome() {
    search_outcome o;
    attempt_result initial;
    initial.cand.source = "extern \"C\" __global__ void scale(float* x, int n) {}\n";
    initial.cand.entry = "scale";
    initial.cand.label = "initial.cu";
    initial.verdict = verdict::valid;
    initial.geomean_ms = 2.0;
    initial.speedup_vs_initial = 1.0;
    attempt_result best;
    best.iteration = 3;
    best.attempt = 2;
    best.cand.source = k_tunable_kernel;
    best.cand.entry = "scale";
    best.cand.proposer = proposer_kind::autotune;
    best.cand.label = "TILE=32 --use_fast_math";
    best.cand.tunables = {{"TILE", 32}};
    best.cand.defines = {{"SCALE", "2.0f"}, {"EXTRA", "1"}};
    best.cand.compile_options = {"--use_fast_math", "-DEXTRA=3", "-UDROPPED", "-DFLAG",
                                 "--define-macro=MODE=fast"};
    best.verdict = verdict::valid;
    best.geomean_ms = 0.8;
    best.speedup_vs_initial = 2.5;
    o.history = {initial, best};
    o.initial = 0;
    o.best = 1;
    return o;
}

// The kernel as the harness compiles it: source, defines as -D, then the options.
kernel_spec as_requested(const candidate& c, const std::string& source) {
    kernel_spec k;
    k.source = source;
    k.source_name = "kernel.cu";
    k.entry = c.entry;
    for (const auto& [name, value] : c.defines) k.defines.emplace_back(name, value);
    for (const auto& [name, value] : c.tunables)
        if (!c.defines.count(name)) k.defines.emplace_back(name, std::to_string(value));
    std::sort(k.defines.begin(), k.defines.end());
    k.compile_options = c.compile_options;
    return k;
}

}  // namespace

TEST_CASE(
    "best.cu compiles to the winner's cubin with its request's defines and options, and alone") {
    const search_outcome o = winner_outcome();
    const candidate& c = o.history[1].cand;
    const std::string best = best_source_text(o, tunable_manifest(), "results/run-004");
    const compile_result attempt = compile_kernel(as_requested(c, c.source), "sm_90");
    INFO(attempt.log);
    REQUIRE(attempt.ok);
    const compile_result replayed = compile_kernel(as_requested(c, best), "sm_90");
    INFO(replayed.log);
    REQUIRE(replayed.ok);
    CHECK(replayed.cubin == attempt.cubin);
    // Alone: no defines, and of the options only what is not a -D/-U.
    kernel_spec alone = as_requested(c, best);
    alone.defines.clear();
    alone.compile_options = {"--use_fast_math"};
    const compile_result standalone = compile_kernel(alone, "sm_90");
    INFO(standalone.log);
    REQUIRE(standalone.ok);
    CHECK(standalone.cubin == attempt.cubin);
}

TEST_CASE(
    "best.cu opens with where the winner came from, how to compile it and every case's launch") {
    const std::string best =
        best_source_text(winner_outcome(), tunable_manifest(), "results/run-004");
    INFO(best);
    CHECK_THAT(best, Catch::Contains("iteration 3, attempt 2 (autotune: TILE=32 --use_fast_math)"));
    CHECK_THAT(best, Catch::Contains("run-004"));
    CHECK_THAT(best, Catch::Contains("speedup: 2.500x geomean over the initial kernel"));
    CHECK_THAT(best, Catch::Contains("compile options: --use_fast_math -DEXTRA=3 -UDROPPED"));
    CHECK_THAT(best, Catch::Contains("launch: grid [ceil(n/TILE), 1, 1]  block [TILE, 1, 1]  "
                                     "with TILE=32"));
    CHECK_THAT(best, Catch::Contains("small (n=100): grid [4, 1, 1]  block [32, 1, 1]\n"));
    CHECK_THAT(best, Catch::Contains("big (n=4096): grid [128, 1, 1]  block [64, 1, 1]  dynamic "
                                     "shared bytes 16384  (its own launch: grid [ceil(n/TILE), 1, "
                                     "1]  block [64, 1, 1]  dynamic shared bytes n*4)"));
    // The defines in the harness's order, then the -D/-U options in theirs.
    CHECK_THAT(best, Catch::Contains("#define EXTRA 1\n#define SCALE 2.0f\n#define TILE 32\n"
                                     "#define EXTRA 3\n#undef DROPPED\n#define FLAG 1\n"
                                     "#define MODE fast\n#ifndef TILE\n"));
    CHECK(best.substr(best.size() - std::string(k_tunable_kernel).size()) == k_tunable_kernel);
}

TEST_CASE("best.json holds the winner as data: defines, options, tunables, launches per case") {
    const auto doc =
        parse_json(best_json(winner_outcome(), tunable_manifest(), "results/run-004"), "best.json");
    REQUIRE_NOTHROW(validate_json(doc, embedded_schema("best"), "best.json"));
    CHECK(std::string(doc["run_dir"].GetString()) ==
          (std::filesystem::current_path() / "results/run-004").string());
    CHECK(std::string(doc["source_file"].GetString()) == "best.cu");
    CHECK(doc["speedup_vs_initial"].GetDouble() == 2.5);
    CHECK(std::string(doc["defines"]["TILE"].GetString()) == "32");
    CHECK(std::string(doc["defines"]["SCALE"].GetString()) == "2.0f");
    CHECK(doc["compile_options"].Size() == 5);
    CHECK(doc["tunables"]["TILE"].GetInt() == 32);
    CHECK(std::string(doc["launch"]["grid"][0].GetString()) == "ceil(n/TILE)");
    const auto& big = doc["cases"][1];
    CHECK(std::string(big["name"].GetString()) == "big");
    CHECK(big["grid"][0].GetInt() == 128);
    CHECK(big["block"][0].GetInt() == 64);
    CHECK(big["dynamic_shared_bytes"].GetInt() == 16384);
    CHECK(std::string(big["launch"]["dynamic_shared_bytes"].GetString()) == "n*4");
    CHECK(std::string(big["replay_request"].GetString()) == "best-case-1.json");
}

TEST_CASE("when the initial kernel wins, best.cu is its source after the comment block") {
    search_outcome o = winner_outcome();
    o.history.resize(1);
    o.best = 0;
    const std::string best = best_source_text(o, tunable_manifest(), "run");
    CHECK_THAT(best, Catch::Contains("iteration 0, attempt 0 (initial: initial.cu)"));
    CHECK_THAT(best, Catch::Contains("speedup: 1.000x"));
    CHECK_THAT(best, Catch::Contains("defines: none"));
    CHECK_THAT(best, !Catch::Contains("\n#define"));
    CHECK(best.substr(best.find("\nextern") + 1) == o.history[0].cand.source);
}
