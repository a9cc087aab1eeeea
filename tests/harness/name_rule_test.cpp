// One rule for names, wherever they are read: a case or argument name the manifest takes (what
// `check` accepts) is one the harness's request reader takes, and one it refuses is refused
// there too, with a short message. The hostile ones: U+0000 (a C string stops there, so
// "perf-\u0000x" became "perf-" downstream), a lone surrogate, path parts, 1 MiB of name.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_document.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const fs::path k_source = CUOPT_SOURCE_DIR;

using test::refusal;
using test::replaced;

// The pilot manifest and the harness's example request, with one name (as JSON text) put in.
struct both_readers {
    test::scratch_folder dir;
    both_readers() { fs::copy(k_source / "examples/harness/matmul", dir / "req"); }
    std::string manifest(const std::string& from, const std::string& to) {
        dir.write("m.json", replaced(test::read_text(k_source / "examples/matmul/input_cases.json"),
                                     from, to));
        return refusal([&] { read_manifest(dir / "m.json"); });
    }
    std::string request(const std::string& from, const std::string& to) {
        dir.write(
            "req/r.json",
            replaced(test::read_text(k_source / "examples/harness/matmul/request.json"), from, to));
        return refusal([&] { read_request(dir / "req/r.json"); });
    }
};

const std::string k_long(1 << 16, 'n');

}  // namespace

TEST_CASE("a case name the manifest takes the request takes, and one it refuses it refuses") {
    both_readers r;
    const std::vector<std::string> names = {"perf",
                                            "perf-\\u0000x",
                                            "perf-\\udfff",
                                            "perf-\\ud83d\\ude00",
                                            std::string(128, 'c'),
                                            std::string(129, 'c'),
                                            "a b",
                                            "../x",
                                            "x/y",
                                            "caf\\u00e9",
                                            "",
                                            "-x",
                                            "a\\nb",
                                            "ok.1_2-3",
                                            k_long};
    for (const std::string& name : names) {
        INFO(name.substr(0, 80));
        const std::string in_manifest =
            r.manifest("\"name\": \"correctness-31x37x29\"", "\"name\": \"" + name + "\"");
        const std::string in_request =
            r.request("\"name\": \"correctness-31x37x29\"", "\"name\": \"" + name + "\"");
        INFO("manifest: " << in_manifest << "\nrequest: " << in_request);
        CHECK(in_manifest.empty() == in_request.empty());
        CHECK(in_manifest.size() < 600);
        CHECK(in_request.size() < 600);
    }
    CHECK(r.manifest("\"name\": \"correctness-31x37x29\"", "\"name\": \"ok.1_2-3\"").empty());
    CHECK_THAT(r.request("\"name\": \"correctness-31x37x29\"", "\"name\": \"perf-\\u0000x\""),
               Catch::Contains("cases[0].name") && Catch::Contains("U+0000"));
}

TEST_CASE("an argument name the manifest takes the request takes, and one it refuses it refuses") {
    both_readers r;
    const std::vector<std::string> names = {"a_1",
                                            "_a",
                                            "1a",
                                            "a-b",
                                            "a.b",
                                            "\\u0000",
                                            "a\\u0000",
                                            "\\udfff",
                                            std::string(128, 'a'),
                                            std::string(129, 'a'),
                                            "caf\\u00e9",
                                            k_long};
    for (const std::string& name : names) {
        INFO(name.substr(0, 80));
        const std::string in_manifest =
            r.manifest("{ \"name\": \"a\", \"dtype\"", "{ \"name\": \"" + name + "\", \"dtype\"");
        const std::string in_request = r.request("\"name\": \"a\",", "\"name\": \"" + name + "\",");
        INFO("manifest: " << in_manifest << "\nrequest: " << in_request);
        CHECK(in_manifest.empty() == in_request.empty());
        CHECK(in_manifest.size() < 600);
        CHECK(in_request.size() < 600);
    }
}
