#include "orchestrator/contract/manifest.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/contract/manifest_checks.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

const std::string k_pilot = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json";

// The pilot manifest with one substring replaced, read from a scratch folder.
std::string error_with(const std::string& from, const std::string& to,
                       const test::scratch_folder* dir = nullptr) {
    test::scratch_folder own;
    const test::scratch_folder& d = dir ? *dir : own;
    std::string text = test::read_text(k_pilot);
    const auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    d.write("input_cases.json", text.replace(pos, from.size(), to));
    try {
        read_manifest(d / "input_cases.json");
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the pilot manifest reads with its cases, expressions and defaults") {
    const manifest m = read_manifest(k_pilot);
    REQUIRE(m.args.size() == 6);
    REQUIRE(m.cases.size() == 3);
    CHECK(m.cases[0].kind == case_kind::correctness);
    CHECK(m.cases[1].kind == case_kind::performance);
    CHECK(m.args[2].has_output());
    CHECK(m.args[2].tol.atol == 1e-4);
    CHECK(m.args[1].init.generator.kind == generator_kind::normal);
    CHECK(m.default_tunables() ==
          std::map<std::string, std::int64_t>{
              {"BLOCK_X", 16}, {"BLOCK_Y", 16}, {"ROWS_PER_THREAD", 1}, {"TILE_K", 0}});
    const launch_config l =
        evaluate_launch(m.launch, m.variables(m.cases[0], m.default_tunables()));
    CHECK(l.grid == std::array<unsigned, 3>{3, 2, 1});
    CHECK(l.block == std::array<unsigned, 3>{16, 16, 1});
    CHECK(evaluate_integer_expression(m.args[0].count, m.cases[2].params) == 384 * 320);
}

TEST_CASE("inputs nobody describes are random and never zeros") {
    test::scratch_folder dir;
    REQUIRE(error_with(R"(,
      "init": { "kind": "uniform", "low": -1.5, "high": 2.5, "seed": 11 } })",
                       " }", &dir)
                .empty());
    const manifest m = read_manifest(dir / "input_cases.json");
    CHECK(m.args[0].init.generator.kind == generator_kind::uniform);
    CHECK(m.args[0].init.generator.low < 0);
    CHECK(m.args[0].init.generator.high > 0);
}

TEST_CASE("a manifest without a performance case is refused") {
    std::string text = test::read_text(k_pilot);
    for (std::size_t p; (p = text.find("\"performance\"")) != std::string::npos;)
        text.replace(p, 13, "\"correctness\"");
    test::scratch_folder d;
    d.write("m.json", text);
    CHECK_THROWS_WITH(read_manifest(d / "m.json"),
                      "m.json: field cases: no performance case: at least one case must be of kind "
                      "'performance' to rank candidates");
}

TEST_CASE("argument mistakes name the argument and what was expected") {
    CHECK_THAT(error_with(R"("name": "b", "dtype": "f32")", R"("name": "a", "dtype": "f32")"),
               Catch::Contains("field args[1].name: duplicate argument name 'a'"));
    CHECK_THAT(error_with(R"("kind": "scalar", "value": "m" })",
                          R"("kind": "scalar", "value": "m", "count": 4 })"),
               Catch::Contains("field args[3].count: a scalar takes only 'value'"));
    CHECK_THAT(error_with(R"("kind": "output", "count": "m*n",)",
                          R"("kind": "output", "count": "m*n", "init": {"kind": "constant"},)"),
               Catch::Contains("field args[2].init: an output is written by the kernel"));
    CHECK_THAT(error_with(R"("name": "c", "dtype": "f32")", R"("name": "c", "dtype": "i32")"),
               Catch::Contains("field args[2].tolerance.atol: i32 outputs are compared exactly "
                               "(equal bits); expected 0 or no atol"));
    CHECK_THAT(error_with(R"("kind": "output", "count": "m*n",)", R"("kind": "output",)"),
               Catch::Contains("field args[2]: a buffer needs 'count'"));
}

TEST_CASE("expressions are checked for every case before anything runs") {
    CHECK_THAT(error_with(R"("count": "m*n")", R"("count": "m*q")"),
               Catch::Contains("field cases[0] ('correctness-31x37x29'): argument 'c': 'm*q': "
                               "unknown name 'q' (known: k, m, n)"));
    CHECK_THAT(error_with(R"~("grid": ["ceil(n/BLOCK_X)")~", R"~("grid": ["n/16")~"),
               Catch::Contains("field cases[0] ('correctness-31x37x29').launch: 'n/16' is "
                               "2.312500, not a whole number"));
    CHECK_THAT(error_with(R"("params": { "m": 31, "n": 37, "k": 29 })",
                          R"("params": { "m": 31, "n": 37 })"),
               Catch::Contains("unknown name 'k'"));
}

TEST_CASE("a scalar that does not fit its dtype in some case is refused at check, not at the run") {
    // What the harness would refuse at the reference (exit 22), check refuses by case and field.
    CHECK_THAT(
        error_with(R"({ "name": "m", "dtype": "i32", "kind": "scalar", "value": "m" })",
                   R"({ "name": "m", "dtype": "i32", "kind": "scalar", "value": "m*65536*2048" })"),
        Catch::Contains("field cases[0] ('correctness-31x37x29'): argument 'm': value "
                        "4160749568 is not a i32 integer"));
    CHECK_THAT(error_with(R"({ "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" })",
                          R"({ "name": "k", "dtype": "u8", "kind": "scalar", "value": "k*10" })"),
               Catch::Contains("argument 'k': value 290 is not a u8 integer"));
    CHECK_THAT(error_with(R"({ "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" })",
                          R"({ "name": "k", "dtype": "f32", "kind": "scalar", "value": 1e39 })"),
               Catch::Contains("argument 'k': value 9.9999999999999994e+38 does not fit f32"));
    CHECK(error_with(R"({ "name": "k", "dtype": "i32", "kind": "scalar", "value": "k" })",
                     R"({ "name": "k", "dtype": "i16", "kind": "scalar", "value": "k*100" })") ==
          "");  // 2900 to 32000 fit an i16
}

TEST_CASE("tunables become variables of launch expressions but never of sizes") {
    test::scratch_folder dir;
    CHECK(
        error_with(
            R"~("tunables": { "BLOCK_X": [16, 32, 8, 64, 128], "BLOCK_Y": [16, 8, 4, 2, 1], "TILE_K": [0, 16, 32, 8], "ROWS_PER_THREAD": [1, 2, 4] },
  "launch": { "grid": ["ceil(n/BLOCK_X)", "ceil(m/(BLOCK_Y*ROWS_PER_THREAD))", 1], "block": ["BLOCK_X", "BLOCK_Y", 1])~",
            R"~("tunables": { "TILE": [16, 32] }, "launch": { "grid": ["ceil(n/TILE)", "ceil(m/TILE)", 1], "block": ["TILE", "TILE", 1])~",
            &dir)
            .empty());
    const manifest m = read_manifest(dir / "input_cases.json");
    CHECK(m.default_tunables().at("TILE") == 16);
    CHECK(evaluate_launch(m.launch, m.variables(m.cases[1], {{"TILE", 32}})).grid[0] == 8);
    CHECK_THAT(
        error_with(R"("BLOCK_Y": [16, 8, 4, 2, 1])", R"("BLOCK_Y": [16, 8, 4, 2, 1], "m": [1])"),
        Catch::Contains("field cases[0].params.m: is also a tunable"));
    CHECK_THAT(error_with(R"("count": "m*n")", R"("count": "m*n*BLOCK_X")"),
               Catch::Contains("unknown name 'BLOCK_X'"));
}

TEST_CASE("an input or expected file of the wrong size names both sizes and the case") {
    test::scratch_folder dir;
    dir.write_values("a.bin", std::vector<float>(31 * 29 - 1, 1.0f));
    CHECK_THAT(
        error_with(
            R"("kind": "correctness", "params": { "m": 31, "n": 37, "k": 29 })",
            R"("kind": "correctness", "params": { "m": 31, "n": 37, "k": 29 }, "inputs": { "a": { "kind": "file", "file": "a.bin" } })",
            &dir),
        Catch::Contains("a.bin holds 3592 bytes but 'a' needs 3596 (count m*k x f32) in case "
                        "'correctness-31x37x29'"));
    CHECK_THAT(
        error_with(
            R"("kind": "correctness", "params": { "m": 31, "n": 37, "k": 29 })",
            R"("kind": "correctness", "params": { "m": 31, "n": 37, "k": 29 }, "expected": { "a": "x.bin" })"),
        Catch::Contains("field cases[0].expected.a: no output or inout argument named 'a'"));
}

TEST_CASE("a signature is parsed with qualifiers, restrict and extern C") {
    const kernel_signature s = parse_kernel_signature(
        R"(extern "C" __global__ void matmul_f32(const float* __restrict__ a, const float *b, float* c, int m, unsigned int n, long long k))");
    CHECK(s.entry == "matmul_f32");
    REQUIRE(s.params.size() == 6);
    CHECK(s.params[0].is_pointer);
    CHECK(*s.params[0].type == dtype::f32);
    CHECK(s.params[1].name == "b");
    CHECK(*s.params[4].type == dtype::u32);
    CHECK(*s.params[5].type == dtype::i64);
    CHECK_FALSE(s.params[3].is_pointer);
    CHECK_THROWS_WITH(parse_kernel_signature("int f(int x)"),
                      Catch::Contains("expected 'void NAME(TYPE NAME, ...)'"));
}

TEST_CASE("a manifest that disagrees with the signature is refused with every disagreement") {
    const manifest m = read_manifest(k_pilot);
    CHECK(check_signature(
              parse_kernel_signature(
                  "void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k)"),
              m)
              .empty());
    const std::string p = check_signature(
        parse_kernel_signature("void mm(const double* a, float b, float* c, int m, int n)"), m);
    CHECK_THAT(p, Catch::Contains("the signature has 5 parameters but the manifest lists 6 args"));
    CHECK_THAT(p,
               Catch::Contains(
                   "parameter 0 ('a' vs args[0] 'a'): 'double' is f64 but the manifest says f32"));
    CHECK_THAT(
        p,
        Catch::Contains(
            "parameter 1 ('b' vs args[1] 'b'): the signature has a scalar, the manifest a buffer"));
}

TEST_CASE("a manifest generator is refused with the same words the harness would use") {
    CHECK_THAT(
        error_with(R"("kind": "uniform", "low": -1.5)", R"("kind": "int_range", "low": -1.5)"),
        Catch::Contains("field args[0].init: int_range needs integer low <= high (got low "
                        "-1.500000, high 2.500000)"));
    CHECK_THAT(error_with(R"("name": "a", "dtype": "f32")", R"("name": "a", "dtype": "i32")"),
               Catch::Contains(
                   "field args[0].init.kind: 'uniform' fills floating-point buffers; for i32 use"));
}

TEST_CASE(
    "a case parameter or tunable beyond 64 signed bits is refused by field, never read as -1") {
    CHECK_THAT(error_with(R"("m": 256, "n": 256, "k": 256)",
                          R"("m": 18446744073709551615, "n": 256, "k": 256)"),
               Catch::Contains(
                   "field cases[1].params.m: expected an integer, found 18446744073709551615"));
    CHECK_THAT(error_with(R"("count": "m*k")",
                          R"("count": "m*k*1125899906842624*1125899906842624*1125899906842624")"),
               Catch::Contains("value out of range"));
}

TEST_CASE("an output that names its reduction length is held to the reduction rule per case") {
    test::scratch_folder dir;
    REQUIRE(error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                       R"("tolerance": { "reduction_length": "k" })", &dir)
                .empty());
    const manifest m = read_manifest(dir / "input_cases.json");
    const manifest_arg& c = m.args[2];
    CHECK(c.reduction_length == "k");
    for (const manifest_case& mc : m.cases) {
        const std::int64_t k = mc.params.at("k");
        const tolerance t = c.tolerance_in(mc.params);
        CHECK(t.atol == 0);
        CHECK(t.rtol == reduction_tolerance(dtype::f32, static_cast<std::uint64_t>(k)).rtol);
        CHECK(t.rms_atol == t.rtol);
    }
    CHECK(m.find_case(m.cases[1].name) == &m.cases[1]);
    CHECK(m.find_case("no-such-case") == nullptr);
    // What the search, the determinism gate and summary.json all use: the case's own k.
    const tolerance t2 = tolerance_in_case(m, c, m.cases[2].name);
    CHECK(t2.rtol == reduction_tolerance(dtype::f32, 320).rtol);
    CHECK(t2.rtol != tolerance_in_case(m, c, m.cases[0].name).rtol);
    CHECK_THROWS_AS(tolerance_in_case(m, c, "no-such-case"), std::logic_error);
    // Without one, every case gets the manifest's numbers.
    const manifest pilot = read_manifest(k_pilot);
    const tolerance t = pilot.args[2].tolerance_in(pilot.cases[2].params);
    CHECK(t.atol == 1e-4);
    CHECK(t.rms_atol == 0);
}

TEST_CASE("a reduction length with atol/rtol, or one that does not evaluate, is refused") {
    CHECK_THAT(error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                          R"("tolerance": { "atol": 1e-4, "reduction_length": "k" })"),
               Catch::Contains("tolerance.reduction_length") &&
                   Catch::Contains("either 'reduction_length'"));
    CHECK_THAT(error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                          R"("tolerance": { "reduction_length": "k*q" })"),
               Catch::Contains("tolerance.reduction_length ('c')") && Catch::Contains("q"));
    CHECK_THAT(
        error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                   R"("tolerance": { "reduction_length": "k-k" })"),
        Catch::Contains("tolerance.reduction_length ('c')") && Catch::Contains("is below 1"));
}

namespace {

// The pilot manifest with its cases replaced by `n` performance cases, read from `dir`.
std::string error_with_cases(std::size_t n, const test::scratch_folder& dir) {
    std::string cases;
    for (std::size_t i = 0; i < n; ++i)
        cases += std::string(i ? ", " : "") + R"({ "name": "p-)" + std::to_string(i) +
                 R"(", "kind": "performance", "params": { "m": 16, "n": 16, "k": 16 } })";
    std::string text = test::read_text(k_pilot);
    const auto from = text.find(R"("cases": [)"), to = text.rfind(']');
    REQUIRE(from != std::string::npos);
    dir.write("input_cases.json", text.replace(from, to - from + 1, R"("cases": [)" + cases + "]"));
    try {
        read_manifest(dir / "input_cases.json");
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("case and argument names over 128 characters are refused by field, in a short message") {
    const std::string case_name = R"("name": "correctness-31x37x29")";
    CHECK(error_with(case_name, R"("name": ")" + std::string(128, 'c') + "\"").empty());
    CHECK_THAT(error_with(case_name, R"("name": ")" + std::string(129, 'c') + "\""),
               Catch::Contains("field cases[0].name: "));
    const std::string arg_name = R"("name": "a", "dtype": "f32")";
    CHECK_THAT(
        error_with(arg_name, R"("name": ")" + std::string(129, 'a') + R"(", "dtype": "f32")"),
        Catch::Contains("field args[0].name: "));
    // A 1 MiB name: the message quotes its start, so it stays short (file name aside).
    test::scratch_folder dir;
    const std::string e = error_with(
        arg_name, R"("name": ")" + std::string(1 << 20, 'a') + R"(", "dtype": "f32")", &dir);
    CHECK_THAT(e, Catch::Contains("field args[0].name: "));
    CHECK(e.size() < 400 + (dir / "input_cases.json").string().size());
}

TEST_CASE("a manifest takes at most 4096 cases, one more is refused by field") {
    test::scratch_folder dir;
    CHECK(error_with_cases(4096, dir).empty());
    CHECK(read_manifest(dir / "input_cases.json").cases.size() == 4096);
    const std::string e = error_with_cases(4097, dir);
    CHECK_THAT(e, Catch::Contains("field cases: "));
    CHECK(e.size() < 400 + (dir / "input_cases.json").string().size());
}

TEST_CASE("a launch expression is limited to 1000 characters by the schema as by the evaluator") {
    static_assert(k_max_expression_length == 1000);
    const std::string grid = R"~("grid": ["ceil(n/BLOCK_X)")~";
    std::string at_limit = "ceil(n/BLOCK_X) ";
    while (at_limit.size() < k_max_expression_length) at_limit += "+0";
    REQUIRE(at_limit.size() == k_max_expression_length);
    CHECK(error_with(grid, R"("grid": [")" + at_limit + "\"").empty());
    const std::string e = error_with(grid, R"("grid": [")" + at_limit + "0\"");
    CHECK_THAT(e, Catch::Contains("field launch.grid[0]: "));
}

TEST_CASE("a candidate side file's 1 MiB entry, 65th option or 257th define is refused by field") {
    const auto refusal = [](const std::string& text) -> std::string {
        try {
            validate_json(parse_json(text, "side.json"), embedded_schema("candidate-file"),
                          "side.json");
        } catch (const json_error& e) {
            return e.what();
        }
        return "";
    };
    CHECK(refusal(R"({ "entry": ")" + std::string(1024, 'k') + "\" }").empty());
    CHECK_THAT(refusal(R"({ "entry": ")" + std::string(1025, 'k') + "\" }"),
               Catch::Contains("side.json: field entry: "));
    const std::string e = refusal(R"({ "entry": ")" + std::string(1 << 20, 'k') + "\" }");
    CHECK_THAT(e, Catch::Contains("side.json: field entry: "));
    CHECK(e.size() < 400);
    const auto options = [](int n) {
        std::string list;
        for (int i = 0; i < n; ++i)
            list += std::string(i ? ", " : "") + "\"-DX" + std::to_string(i) + "\"";
        return R"({ "compile_options": [)" + list + "] }";
    };
    CHECK(refusal(options(64)).empty());
    CHECK_THAT(refusal(options(65)), Catch::Contains("side.json: field compile_options: "));
    const auto defines = [](int n) {
        std::string list;
        for (int i = 0; i < n; ++i)
            list += std::string(i ? ", " : "") + "\"X" + std::to_string(i) + "\": 1";
        return R"({ "defines": {)" + list + "} }";
    };
    CHECK(refusal(defines(256)).empty());
    CHECK_THAT(refusal(defines(257)), Catch::Contains("side.json: field defines: "));
}

TEST_CASE("two input files of one name in two folders get two links in an attempt's inputs/") {
    // Found by fuzzing: both became inputs/x.bin, and the last link won.
    test::scratch_folder dir;
    dir.write_values("x.bin", std::vector<float>(64, 1.0f));
    std::filesystem::create_directories(dir / "sub");
    dir.write_values("sub/x.bin", std::vector<float>(16, 2.0f));
    dir.write("m.json", R"({ "schema_version": 1,
  "launch": { "grid": [1, 1, 1], "block": [64, 1, 1] },
  "args": [ { "name": "x", "dtype": "f32", "kind": "input", "count": "n", "init": { "kind": "file", "file": "x.bin" } },
            { "name": "w", "dtype": "f32", "kind": "input", "count": "16", "init": { "kind": "file", "file": "sub/x.bin" } },
            { "name": "y", "dtype": "f32", "kind": "output", "count": "n" },
            { "name": "n", "dtype": "i32", "kind": "scalar", "value": "n" } ],
  "cases": [ { "name": "p", "kind": "performance", "params": { "n": 64 } } ] })");
    const manifest m = read_manifest(dir / "m.json");
    CHECK(m.input_link(*m.init_for(m.cases[0], m.args[0]).file) == "x.bin");
    CHECK(m.input_link(*m.init_for(m.cases[0], m.args[1]).file) == "2/x.bin");
}

TEST_CASE("tunable and param names are C identifiers of at most 128 characters") {
    // A tunable named A-B passed check and failed at compile; one of 1 MiB printed 16 MB.
    CHECK_THAT(error_with(R"("BLOCK_X")", R"("A-B")"),
               Catch::EndsWith("field tunables: a tunable's name: expected a C identifier of at "
                               "most 128 characters, got 'A-B'"));
    const std::string said = error_with(R"("BLOCK_X")", "\"" + std::string(1 << 20, 'T') + "\"");
    CHECK_THAT(said, Catch::Contains("a tunable's name") && Catch::Contains("(1048576 bytes)"));
    CHECK(said.size() < 400);
    CHECK_THAT(error_with(R"("m": 31)", R"("x-y": 1, "m": 31)"),
               Catch::Contains("a param's name: expected a C identifier"));
    CHECK(error_with(R"("m": 31)", "\"" + std::string(128, 'p') + "\": 1, \"m\": 31").empty());
}

TEST_CASE(
    "a count beyond 2^53, a reduction longer than any input, and generated values that do not "
    "fit their dtype are refused at check, by case and field") {
    // 2^61 f32 elements: 2^63 bytes, beyond what a request may hold (a count of 2^61 f64 wrapped
    // count x size to 0, and an empty file "matched").
    CHECK_THAT(error_with(R"("count": "m*k")", R"("count": "2305843009213693952")"),
               Catch::Contains("field cases[0] ('correctness-31x37x29'): count of 'a'") &&
                   Catch::Contains("expected at most 2^53 (9007199254740992) elements"));
    // rtol grows with the square root of the length: 1e18 made it ~477.
    CHECK_THAT(
        error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                   R"("tolerance": { "reduction_length": "1000000000000000000" })"),
        Catch::Contains("field cases[0] ('correctness-31x37x29').tolerance.reduction_length "
                        "('c'): '1000000000000000000' is 1000000000000000000, more terms than "
                        "the case's largest input holds (1073)"));
    CHECK(error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                     R"("tolerance": { "reduction_length": "m*k" })") == "");
    // Terms from scalars alone (no input buffer): nothing bounds them.
    std::string series = test::read_text(k_pilot);
    for (const char* kind :
         {R"("kind": "input", "count": "m*k")", R"("kind": "input", "count": "k*n")"}) {
        const auto at = series.find(kind);
        REQUIRE(at != std::string::npos);
        series.replace(at, std::string(kind).size(), R"("kind": "output", "count": "1")");
    }
    {
        test::scratch_folder dir;
        std::string text = series;
        for (const char* init : {R"(,
      "init": { "kind": "uniform", "low": -1.5, "high": 2.5, "seed": 11 })",
                                 R"(,
      "init": { "kind": "normal", "mean": 0.25, "stddev": 1.0, "seed": 12 })"}) {
            const auto at = text.find(init);
            REQUIRE(at != std::string::npos);
            text.erase(at, std::string(init).size());
        }
        const auto tol = text.find(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })");
        REQUIRE(tol != std::string::npos);
        text.replace(tol, std::string(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })").size(),
                     R"("tolerance": { "reduction_length": "1000000" })");
        const auto vendor = text.find("\"vendor_baseline\"");
        REQUIRE(vendor != std::string::npos);
        text.erase(vendor, text.find('\n', vendor) - vendor + 1);
        dir.write("input_cases.json", text);
        std::string error;
        try {
            read_manifest(dir / "input_cases.json");
        } catch (const json_error& e) {
            error = e.what();
        }
        CHECK_THAT(error, !Catch::Contains("more terms than"));
    }
    const std::string a_init = R"("name": "a", "dtype": "f32", "kind": "input", "count": "m*k",
      "init": { "kind": "uniform", "low": -1.5, "high": 2.5, "seed": 11 })";
    auto a_as = [&](const std::string& dtype, const std::string& init) {
        return error_with(a_init, R"("name": "a", "dtype": ")" + dtype +
                                      R"(", "kind": "input", "count": "m*k", "init": )" + init);
    };
    CHECK_THAT(a_as("u8", R"({ "kind": "constant", "value": 300 })"),
               Catch::Contains("field args[0].init.value: value 300 is not a u8 integer"));
    CHECK_THAT(a_as("f16", R"({ "kind": "constant", "value": 3.4e38 })"),
               Catch::Contains("init.value: value 3.4e+38 does not fit f16: "
                               "expected a magnitude of at most 65504"));
    CHECK_THAT(a_as("f8e4m3", R"({ "kind": "constant", "value": 1e30 })"),
               Catch::Contains("does not fit f8e4m3: expected a magnitude of at most 448 "
                               "(beyond it the conversion saturates)"));
    CHECK_THAT(a_as("u8", R"({ "kind": "sequence", "start": -1, "step": 1 })"),
               Catch::Contains("init.start: value -1 is not a u8 integer"));
    CHECK_THAT(a_as("i32", R"({ "kind": "sequence", "start": 0, "step": 0.5 })"),
               Catch::Contains("needs integer start and step"));
    // 31 x 29 = 899 elements: the last, 3e38 + 898e36, is beyond f32 (a's dtype, for sgemm).
    CHECK_THAT(a_as("f32", R"({ "kind": "sequence", "start": 3e38, "step": 1e36 })"),
               Catch::Contains("field cases[0] ('correctness-31x37x29'): argument 'a''s "
                               "generator step: the last of 899 elements, start + step x 898: "
                               "value 1.1980000000000001e+39 does not fit f32"));
    CHECK_THAT(a_as("f16", R"({ "kind": "uniform", "low": 0, "high": 1e6 })"),
               Catch::Contains("init.high: value 1e+06 does not fit f16"));
    CHECK(a_as("f32", R"({ "kind": "sequence", "start": -30000, "step": 1 })") == "");
}

TEST_CASE(
    "an integer output is compared exactly: its tolerance takes atol and rtol of 0 only, each "
    "refused by key in one line, and it is held to 0 where it names none") {
    const std::string f32_c = R"("name": "c", "dtype": "f32", "kind": "output", "count": "m*n",
      "tolerance": { "atol": 1e-4, "rtol": 1e-4 })";
    // The pilot with an i32 'c' and without its cuBLAS sgemm baseline (which needs f32).
    auto c_as_i32 = [&](const std::string& tolerance, const test::scratch_folder* dir = nullptr) {
        test::scratch_folder own;
        const test::scratch_folder& d = dir ? *dir : own;
        std::string text = test::read_text(k_pilot);
        const auto vendor = text.find("\"vendor_baseline\"");
        REQUIRE(vendor != std::string::npos);
        text.erase(vendor, text.find('\n', vendor) - vendor + 1);
        const auto c = text.find(f32_c);
        REQUIRE(c != std::string::npos);
        d.write("input_cases.json",
                text.replace(c, f32_c.size(),
                             R"("name": "c", "dtype": "i32", "kind": "output", "count": "m*n")" +
                                 tolerance));
        try {
            read_manifest(d / "input_cases.json");
        } catch (const json_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(c_as_i32(R"(, "tolerance": { "atol": 1 })") ==
          "input_cases.json: field args[2].tolerance.atol: i32 outputs are compared exactly "
          "(equal bits); expected 0 or no atol");
    CHECK(c_as_i32(R"(, "tolerance": { "atol": 0, "rtol": 0.5 })") ==
          "input_cases.json: field args[2].tolerance.rtol: i32 outputs are compared exactly "
          "(equal bits); expected 0 or no rtol");
    CHECK(c_as_i32(R"(, "tolerance": { "reduction_length": "k" })") ==
          "input_cases.json: field args[2].tolerance.reduction_length: i32 outputs are compared "
          "exactly (equal bits); expected no reduction_length");
    for (const std::string& exact : {std::string(), std::string(R"(, "tolerance": {})"),
                                     std::string(R"(, "tolerance": { "atol": 0, "rtol": 0.0 })")}) {
        test::scratch_folder dir;
        const std::string error = c_as_i32(exact, &dir);
        INFO(error);
        REQUIRE(error.empty());
        const manifest m = read_manifest(dir / "input_cases.json");
        for (const manifest_case& mc : m.cases) {
            // What a request's check carries: the harness refuses any other number (exit 11).
            const tolerance t = tolerance_in_case(m, m.args[2], mc.name);
            CHECK(t.atol == 0);
            CHECK(t.rtol == 0);
            CHECK(t.rms_atol == 0);
        }
    }
    for (dtype type : {dtype::i8, dtype::u8, dtype::i32, dtype::u32, dtype::i64, dtype::u64}) {
        const tolerance t = default_tolerance(type);
        CHECK((t.atol == 0 && t.rtol == 0 && t.rms_atol == 0));
    }
}

TEST_CASE("atol and rtol may be written as JSON integers and are applied as given") {
    test::scratch_folder dir;
    REQUIRE(error_with(R"("tolerance": { "atol": 1e-4, "rtol": 1e-4 })",
                       R"("tolerance": { "atol": 1, "rtol": 0 })", &dir)
                .empty());
    const manifest m = read_manifest(dir / "input_cases.json");
    const tolerance t = tolerance_in_case(m, m.args[2], m.cases[0].name);
    CHECK(t.atol == 1.0);
    CHECK(t.rtol == 0.0);
}

TEST_CASE(
    "the file-size rule refuses a count whose bytes overflow 64 bits rather than matching an "
    "empty file to the wrapped size") {
    test::scratch_folder dir;
    dir.write("empty.bin", "");
    manifest m;
    manifest_arg& a = m.args.emplace_back();
    a.name = "a";
    a.type = dtype::f64;
    a.kind = arg_kind::input;
    a.count = "2305843009213693952";  // 2^61 x 8 bytes = 2^64: 0 once wrapped
    a.init.file = dir / "empty.bin";
    m.cases.emplace_back().name = "big";
    const manifest_reading::context ctx{"input_cases.json"};
    CHECK_THROWS_WITH(manifest_reading::check_file_sizes(m, ctx),
                      "input_cases.json: field cases[0] ('big'): count of 'a' "
                      "(2305843009213693952) is 2305843009213693952, whose f64 bytes overflow 64 "
                      "bits; expected at most 2^53 elements");
    a.count = "0";  // and the rule itself still holds where the product fits
    CHECK_NOTHROW(manifest_reading::check_file_sizes(m, ctx));
    a.count = "1";
    CHECK_THROWS_WITH(manifest_reading::check_file_sizes(m, ctx),
                      Catch::Contains("empty.bin holds 0 bytes but 'a' needs 8"));
}

TEST_CASE(
    "arch_specific reads as a boolean (default false) and anything else is refused by field") {
    CHECK_FALSE(read_manifest(k_pilot).arch_specific);
    const manifest fp8 =
        read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/input_cases.json");
    CHECK(fp8.arch_specific);
    CHECK(fp8.required_mma == "fp8");
    const std::string from = "\"schema_version\": 1,";
    CHECK(error_with(from, from + " \"arch_specific\": false,").empty());
    CHECK_THAT(error_with(from, from + " \"arch_specific\": \"sm_90a\","),
               Catch::Contains("input_cases.json") && Catch::Contains("arch_specific"));
}

TEST_CASE(
    "a holdout compiles as the search does: it takes the main manifest's arch_specific, and one "
    "that names another is refused by field") {
    const std::string example = std::string(CUOPT_SOURCE_DIR) + "/examples/gemm-fp8/";
    const manifest fp8 = read_manifest(example + "input_cases.json");
    REQUIRE(fp8.arch_specific);
    // The bundled holdout gives only cases: wgmma's MMA 3 and 4 compile for sm_90a there too.
    CHECK(read_holdout_manifest(example + "holdout_cases.json", fp8).arch_specific);
    const test::scratch_folder dir;
    const std::string cases = R"("cases": [{"name": "h", "kind": "correctness",
        "params": {"m": 17, "n": 9, "k": 33}}])";
    dir.write("same.json", R"({"schema_version": 1, "arch_specific": true, )" + cases + "}");
    CHECK(read_holdout_manifest(dir.path() / "same.json", fp8).arch_specific);
    dir.write("other.json", R"({"schema_version": 1, "arch_specific": false, )" + cases + "}");
    CHECK_THROWS_WITH(read_holdout_manifest(dir.path() / "other.json", fp8),
                      Catch::Contains("other.json") && Catch::Contains("arch_specific") &&
                          Catch::Contains("differs from input_cases.json"));
    // A main manifest without it: a holdout cannot switch it on.
    const manifest pilot = read_manifest(k_pilot);
    CHECK_THROWS_WITH(read_holdout_manifest(dir.path() / "same.json", pilot),
                      Catch::Contains("arch_specific") && Catch::Contains("differs from"));
}
