// Black-box tests of the real cuda-harness binary that need no GPU: bad input of
// every class, compile errors, compile-only mode, the cache, files a request must not touch.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <set>

#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

std::string request_json(const std::string& x_count = "64", const std::string& entry = "twice",
                         const std::string& x_file = "x.bin") {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": ")" + entry +
           R"(" },
      "cases": [ { "name": "c", "launch": { "grid": [1], "block": [64] }, "args": [
        { "name": "x", "dtype": "f32", "count": )" +
           x_count + R"(, "input_file": ")" + x_file + R"(" },
        { "name": "y", "dtype": "f32", "count": 64, "output_file": "out/y.bin" },
        { "name": "n", "dtype": "i32", "value": 64 } ] } ] })";
}

struct harness_fixture {
    test::scratch_folder dir;
    harness_fixture() {
        dir.write("k.cu", test::k_twice_kernel);
        dir.write_values("x.bin", std::vector<float>(64, 3.0f));
    }
    test::process_result run(const std::string& json, std::vector<std::string> extra = {}) {
        dir.write("req.json", json);
        std::vector<std::string> args = {(dir / "req.json").string(), "--cache-dir",
                                         test::test_cache_dir()};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_harness(args);
    }
    rapidjson::Document response() { return test::read_response(dir / "response.json"); }
};

}  // namespace

TEST_CASE("each bad request exits 11 with a response and a message naming the field",
          "[integration]") {
    harness_fixture f;
    struct bad_case {
        std::string json, message;
    };
    const std::vector<bad_case> cases = {
        {"{ \"schema_version\": 1, ", "req.json: malformed JSON at line 1"},
        {request_json("65"),
         "field cases[0].args[0].input_file: 'x.bin' holds 256 bytes but count 65 x f32"},
        {request_json("64", "twice", "../x.bin"),
         "field cases[0].args[0].input_file: '../x.bin' escapes the request folder"},
        {request_json("64", "missing_kernel"),
         "field kernel.entry: no __global__ function 'missing_kernel' in k.cu"},
        {[] {
             std::string j = request_json();
             j.replace(j.find("\"dtype\": \"f32\", \"count\": 64, \"output"), 14,
                       "\"dtype\": \"f31\"");
             return j;
         }(),
         "field cases[0].args[1].dtype: expected one of"},
        {[] {
             std::string j = request_json();
             j.replace(j.find("\"cases\""), 7, "\"kases\"");
             return j;
         }(),
         "field kases: unknown field; expected one of: schema_version, kernel, vendor, device, "
         "inputs_key, timing, cases"},
    };
    for (const auto& c : cases) {
        INFO(c.json);
        const auto r = f.run(c.json, {"--compile-only"});
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains(c.message));
        const auto doc = f.response();
        CHECK(std::string(doc["status"].GetString()) == "invalid_request");
        CHECK(doc["exit_code"].GetInt() == 11);
        CHECK_THAT(doc["error"].GetString(), Catch::Contains(c.message));
    }
}

TEST_CASE("a compile error exits 10 with NVRTC's log in the response", "[integration]") {
    harness_fixture f;
    f.dir.write("k.cu", test::k_twice_kernel + "this is not C++;\n");
    const auto r = f.run(request_json(), {"--compile-only", "--no-cache"});
    CHECK(r.exit_code == 10);
    const auto doc = f.response();
    CHECK(std::string(doc["status"].GetString()) == "compile_error");
    CHECK_FALSE(doc["compile"]["ok"].GetBool());
    CHECK_THAT(doc["compile"]["log"].GetString(), Catch::Contains("error"));
    CHECK(doc["compile"]["cubin_sha256"].IsNull());
}

TEST_CASE(
    "a kernel with arch_specific compiles for the architecture-specific target (sm_90a), where "
    "Hopper's wgmma lives - without it, or before sm_90, for the plain arch",
    "[integration]") {
    harness_fixture f;
    // Compiles only where the sm_90a features are on (its device pass; the host pass has no
    // __CUDA_ARCH__).
    f.dir.write("k.cu",
                std::string("#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
                            "static_assert(__CUDA_ARCH__ < 0, \"needs sm_90a\");\n"
                            "#endif\n") +
                    test::k_twice_kernel);
    std::string specific = request_json();
    const std::string entry = "\"entry\": \"twice\"";
    specific.replace(specific.find(entry), entry.size(), entry + ", \"arch_specific\": true");
    struct expectation {
        std::string json;
        std::vector<std::string> flags;
        int exit_code;
        std::string arch;
    };
    for (const auto& e :
         std::vector<expectation>{{specific, {"--arch", "sm_90"}, 0, "sm_90a"},
                                  {specific, {"--arch", "sm_90a"}, 0, "sm_90a"},
                                  {request_json(), {"--arch", "sm_90"}, 10, "sm_90"},
                                  {specific, {"--arch", "sm_80"}, 10, "sm_80"}}) {
        std::vector<std::string> flags = {"--compile-only", "--no-cache"};
        flags.insert(flags.end(), e.flags.begin(), e.flags.end());
        const auto r = f.run(e.json, flags);
        INFO(e.json << "\n" << r.output);
        CHECK(r.exit_code == e.exit_code);
        const auto doc = f.response();
        CHECK(std::string(doc["compile"]["arch"].GetString()) == e.arch);
        if (e.exit_code != 0)
            CHECK_THAT(doc["compile"]["log"].GetString(), Catch::Contains("needs sm_90a"));
    }
}

TEST_CASE("compile-only works without a GPU - reports resources and hits the cache the second time",
          "[integration]") {
    harness_fixture f;
    REQUIRE(f.run(request_json(), {"--compile-only", "--arch", "sm_80"}).exit_code == 0);
    auto doc = f.response();
    CHECK(std::string(doc["mode"].GetString()) == "compile_only");
    CHECK(std::string(doc["compile"]["arch"].GetString()) == "sm_80");
    CHECK(doc["compile"]["resources"]["registers"].GetInt() > 0);
    CHECK(doc["cases"].GetArray().Size() == 0);
    REQUIRE(f.run(request_json(), {"--compile-only", "--arch", "sm_80"}).exit_code == 0);
    doc = f.response();
    CHECK(doc["compile"]["cache_hit"].GetBool());
}

TEST_CASE("the response option writes the response where asked", "[integration]") {
    harness_fixture f;
    const auto r = f.run(request_json(),
                         {"--compile-only", "--response", (f.dir / "elsewhere/r.json").string()});
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(f.dir / "elsewhere/r.json"));
    CHECK_FALSE(fs::exists(f.dir / "response.json"));
}

TEST_CASE(
    "a rejected request deletes nothing: not the source it names as an output, not the request, "
    "not an earlier output",
    "[integration]") {
    harness_fixture f;
    f.dir.write("out/y.bin", "an earlier run's result");
    std::string j = request_json("63");
    CHECK(f.run(j).exit_code == 11);
    CHECK(test::read_text(f.dir / "out/y.bin") == "an earlier run's result");
    CHECK(f.response()["cases"].Size() == 0);  // and the response lists no output from this run
    for (const char* victim : {"k.cu", "req.json"}) {
        j = request_json();
        j.replace(j.find("out/y.bin"), 9, victim);
        const auto r = f.run(j);
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains("outputs need paths of their own"));
    }
    CHECK(test::read_text(f.dir / "k.cu") == test::k_twice_kernel);
    CHECK(test::read_text(f.dir / "req.json").find(R"("output_file": "req.json")") !=
          std::string::npos);
}

TEST_CASE("without a driver a valid request exits 14 after compiling - with the compile block",
          "[integration]") {
    if (test::gpu_unavailable_reason().empty()) {
        WARN("skipped: a GPU is present, so there is no 'no driver' path to test");
        return;
    }
    harness_fixture f;
    const auto r = f.run(request_json());
    CHECK((r.exit_code == 14 || r.exit_code == 15));
    CHECK_THAT(r.output, Catch::Contains("no CUDA"));
    const auto doc = f.response();
    CHECK(doc["compile"]["ok"].GetBool());
    CHECK(doc["device"].IsNull());
}

TEST_CASE("a v0.0 request is accepted and its layout recorded", "[integration]") {
    harness_fixture f;
    const auto r = f.run(R"({ "source": "k.cu", "kernel": "twice", "grid": [1], "block": [64],
        "arguments": [ { "kind": "buffer", "direction": "in", "bytes": 256, "input_file": "x.bin", "type": "float32" },
                       { "kind": "buffer", "direction": "out", "bytes": 256, "type": "float32" },
                       { "kind": "scalar", "type": "int32", "value": 64 } ] })",
                         {"--compile-only"});
    CHECK(r.exit_code == 0);
    CHECK(std::string(f.response()["request_layout"].GetString()) == "upstream-v0");
}

TEST_CASE("asking for device info without a device exits with the no-driver or no-device code",
          "[integration]") {
    if (test::gpu_unavailable_reason().empty()) {
        WARN("skipped: a GPU is present");
        return;
    }
    const auto r = test::run_harness({"--device-info"});
    CHECK((r.exit_code == 14 || r.exit_code == 15));
    CHECK_THAT(r.output, Catch::Contains("no CUDA"));
}

TEST_CASE("a missing request argument is a usage error", "[integration]") {
    CHECK(test::run_harness({}).exit_code == 64);
    CHECK(test::run_harness({"--bogus"}).exit_code == 64);
}

TEST_CASE("the harness's --version names the version and the commit it was built from",
          "[integration]") {
    const auto r = test::run_harness({"--version"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Matches("cuda-harness [0-9.]+ \\(commit [0-9a-z]+\\)\\s*"));
}

TEST_CASE("a stray byte in the source or an option NVRTC rejects is a compile error that says so",
          "[integration]") {
    harness_fixture f;
    f.dir.write("k.cu", test::k_twice_kernel + "// caf\xe9 \xff\n");
    auto r = f.run(request_json(), {"--compile-only", "--no-cache"});
    CHECK(r.exit_code == 10);
    CHECK_THAT(r.output,
               Catch::Contains("but found no kernel 'twice' in it (is the source valid UTF-8?)"));
    f.dir.write("k.cu", test::k_twice_kernel);
    std::string j = request_json();
    j.replace(j.find(R"("entry": "twice")"), 16,
              R"("entry": "twice", "compile_options": ["--frobnicate"])");
    r = f.run(j, {"--compile-only", "--no-cache"});
    CHECK(r.exit_code == 10);
    CHECK_THAT(
        r.output,
        Catch::Contains("NVRTC rejected an option: check kernel.compile_options ('--frobnicate')"));
    r = f.run(request_json(), {"--compile-only", "--no-cache", "--arch", "sm_999"});
    CHECK(r.exit_code == 64);  // an arch NVRTC does not know is a bad command line
    CHECK_THAT(r.output, Catch::Contains("unknown architecture sm_999"));
}

namespace {

// Everything under a folder, so a test can say that a refused run left nothing behind.
std::set<std::string> listing(const fs::path& folder) {
    std::set<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(folder)) names.insert(e.path().string());
    return names;
}

}  // namespace

TEST_CASE(
    "a compile error shows NVRTC's first error lines on stderr, named as the request's "
    "source_name with true line numbers, and says where the whole log is",
    "[integration]") {
    harness_fixture f;
    f.dir.write("k.cu",
                "extern \"C\" __global__ void twice(const float* x, float* y, int n) {\n"
                "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "  if (i < n) y[i] = TILE * a3[i];\n"
                "  y[0] = a4;\n"
                "  y[1] = a5;\n"
                "  y[2] = a6; }\n");
    std::string j = request_json();
    j.replace(j.find(R"("entry": "twice")"), 16,
              R"("source_name": "initial.cu", "entry": "twice", "defines": { "TILE": 2 })");
    const auto r = f.run(j, {"--compile-only", "--no-cache", "--arch", "sm_90"});
    INFO(r.output);
    CHECK(r.exit_code == 10);
    const std::string response = (f.dir / "response.json").string();
    CHECK_THAT(r.output,
               Catch::Contains("cuda-harness: compile_error: NVRTC could not compile initial.cu "
                               "for sm_90 (4 errors; the whole log is in field compile.log of " +
                               response +
                               "):\n  initial.cu(3): error: identifier \"a3\" is "
                               "undefined\n  initial.cu(4): error: identifier \"a4\" "
                               "is undefined\n  initial.cu(5): error: identifier "
                               "\"a5\" is undefined\n  ... and 1 more\n"));
    CHECK_THAT(r.output, !Catch::Contains("k.cu("));
    const auto doc = f.response();  // the place the message names holds the whole log
    CHECK_THAT(doc["compile"]["log"].GetString(),
               Catch::Contains("initial.cu(6): error: identifier \"a6\" is undefined"));
    CHECK_THAT(doc["error"].GetString(), Catch::Contains("initial.cu(3): error"));
}

TEST_CASE(
    "an --arch NVRTC does not know is a usage error naming the ones it knows, and nothing is "
    "written",
    "[integration]") {
    harness_fixture f;
    auto r = f.run(request_json(), {"--compile-only", "--no-cache", "--arch", "sm_999"});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output,
               Catch::Contains(
                   "--arch: unknown architecture sm_999; expected sm_XY such as sm_90 (NVRTC ") &&
                   Catch::Contains(" knows sm_") && Catch::Contains("sm_90"));
    CHECK_FALSE(fs::exists(f.dir / "response.json"));
    CHECK(f.run(request_json(), {"--compile-only", "--no-cache", "--arch", "sm_90a"}).exit_code ==
          0);
}

TEST_CASE(
    "a directory given as the request or as the response is a usage error that says so and "
    "leaves nothing behind",
    "[integration]") {
    harness_fixture f;
    f.dir.write("req.json", request_json());
    fs::create_directories(f.dir / "out.json");
    const auto before = listing(f.dir.path());
    const std::string out = (f.dir / "out.json").string();
    auto r = test::run_harness({(f.dir / "req.json").string(), "--compile-only", "--response", out,
                                "--cache-dir", test::test_cache_dir()});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("cuda-harness: --response '" + out +
                                         "': is a directory; expected a file path such as '" + out +
                                         "/response.json'"));
    r = test::run_harness({out, "--compile-only", "--cache-dir", test::test_cache_dir()});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("cuda-harness: '" + out +
                                         "': is a directory; expected REQUEST.json"));
    CHECK(listing(f.dir.path()) == before);  // no response, no .tmp-NNN file

    fs::create_directories(f.dir / "response.json");  // where the default response goes
    r = test::run_harness(
        {(f.dir / "req.json").string(), "--compile-only", "--cache-dir", test::test_cache_dir()});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("the response path '" +
                                         (f.dir / "response.json").string() + "': is a directory"));
    CHECK(fs::is_empty(f.dir / "response.json"));
}

TEST_CASE(
    "the response never replaces the request, its source, an input or a user's file, and a "
    "request linked in from outside its folder is a usage error: nothing is written",
    "[integration]") {
    harness_fixture f;
    f.dir.write("req.json", request_json());
    f.dir.write("notes.txt", "mine\n");
    const std::string source = test::read_text(f.dir / "k.cu");
    const auto inputs = test::read_text(f.dir / "x.bin");
    const std::vector<std::pair<std::string, std::string>> targets = {
        {"req.json", "is the request itself"},
        {"k.cu", "exists and is not an earlier cuda-harness response"},
        {"x.bin", "exists and is not an earlier cuda-harness response"},
        {"notes.txt", "exists and is not an earlier cuda-harness response"}};
    for (const auto& [name, message] : targets) {
        const std::string target = (f.dir / ".." / f.dir.path().filename() / name).string();
        const auto r =
            test::run_harness({(f.dir / "req.json").string(), "--compile-only", "--response",
                               target, "--cache-dir", test::test_cache_dir()});
        INFO(name << ": " << r.output);
        CHECK(r.exit_code == 64);
        CHECK_THAT(r.output,
                   Catch::Contains("cuda-harness: --response '" + target + "' " + message));
    }
    CHECK_THAT(test::read_text(f.dir / "req.json"), Catch::Contains("\"kernel\""));
    CHECK(test::read_text(f.dir / "k.cu") == source);
    CHECK(test::read_text(f.dir / "x.bin") == inputs);
    CHECK(test::read_text(f.dir / "notes.txt") == "mine\n");

    // A FIFO (or any file that is not a regular one) is never opened or replaced.
    const fs::path fifo = f.dir / "fifo.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto fifo_run =
        test::run_harness({(f.dir / "req.json").string(), "--compile-only", "--response",
                           fifo.string(), "--cache-dir", test::test_cache_dir()});
    CHECK(fifo_run.exit_code == 64);
    CHECK_THAT(fifo_run.output, Catch::Contains(fifo.string() + "' exists and is no regular file"));
    CHECK(fs::is_fifo(fifo));

    // An earlier response, and an empty file, are replaced as before.
    auto again = [&] {
        return test::run_harness({(f.dir / "req.json").string(), "--compile-only", "--response",
                                  (f.dir / "r.json").string(), "--cache-dir",
                                  test::test_cache_dir()});
    };
    f.dir.write("r.json", "");
    CHECK(again().exit_code == 0);
    CHECK(again().exit_code == 0);

    test::scratch_folder elsewhere;
    elsewhere.write("k.cu", test::k_twice_kernel);
    elsewhere.write_values("x.bin", std::vector<float>(64, 3.0f));
    elsewhere.write("req.json", request_json());
    fs::create_symlink(elsewhere / "req.json", f.dir / "linked.json");
    const auto r = test::run_harness({(f.dir / "linked.json").string(), "--compile-only",
                                      "--cache-dir", test::test_cache_dir()});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.output, Catch::Contains("linked.json': leads to '" +
                                         (elsewhere / "req.json").string() + "', outside ") &&
                             Catch::Contains("expected the request's own path, or --root"));
    CHECK(!fs::exists(f.dir / "response.json"));
}

TEST_CASE("a directory where a request names its source, an input or an output says so by field",
          "[integration]") {
    harness_fixture f;
    fs::create_directories(f.dir / "sub");
    const std::string plain = request_json();
    const std::vector<std::pair<std::string, std::string>> swaps = {
        {R"("source_file": "k.cu")", "kernel.source_file"},
        {R"("input_file": "x.bin")", "cases[0].args[0].input_file"},
        {R"("output_file": "out/y.bin")", "cases[0].args[1].output_file"}};
    for (const auto& [field_json, field] : swaps) {
        std::string j = plain;
        const std::string key = field_json.substr(0, field_json.find(':') + 1);
        j.replace(j.find(field_json), field_json.size(), key + R"( "sub")");
        const auto r = f.run(j, {"--compile-only", "--no-cache"});
        INFO(j);
        CHECK(r.exit_code == 11);
        CHECK_THAT(r.output, Catch::Contains("req.json: field " + field +
                                             ": 'sub' is a directory; expected a file"));
    }
}
