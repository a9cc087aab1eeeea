#include "common/file_io.hpp"

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

TEST_CASE("a relative path resolves inside the base folder") {
    test::scratch_folder dir;
    CHECK(resolve_inside(dir.path(), "a/b.bin") == fs::weakly_canonical(dir.path() / "a/b.bin"));
    CHECK(resolve_inside(dir.path(), "a/../c.bin") == fs::weakly_canonical(dir.path() / "c.bin"));
}

TEST_CASE("a path that escapes the base folder or is absolute is refused with the offending path") {
    test::scratch_folder dir;
    CHECK_THROWS_WITH(resolve_inside(dir.path(), "../x.bin"),
                      Catch::Contains("'../x.bin' escapes the request folder"));
    CHECK_THROWS_WITH(resolve_inside(dir.path(), "a/../../x.bin"), Catch::Contains("escapes"));
    CHECK_THROWS_WITH(resolve_inside(dir.path(), "/etc/passwd"), Catch::Contains("is absolute"));
    fs::create_symlink("/tmp", dir.path() / "link");
    CHECK_THROWS_WITH(resolve_inside(dir.path(), "link/x.bin"), Catch::Contains("escapes"));
}

TEST_CASE("an atomic write replaces the file whole and leaves no temporary behind") {
    test::scratch_folder dir;
    write_file_atomic(dir / "sub/out.json", std::string("first"));
    write_file_atomic(dir / "sub/out.json", std::string("second"));
    CHECK(read_text_file(dir / "sub/out.json") == "second");
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir / "sub")) files += e.is_regular_file();
    CHECK(files == 1);
}

TEST_CASE("a durable write replaces the file whole, leaves no temporary and syncs its folder") {
    test::scratch_folder dir;
    const std::string big(3 << 20, 'x');
    write_file_durable(dir / "sub/run.json", std::string("first"));
    write_file_durable(dir / "sub/run.json", big);
    CHECK(read_text_file(dir / "sub/run.json") == big);
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir / "sub")) files += e.is_regular_file();
    CHECK(files == 1);
    write_file_durable("relative-durable-test.json", std::string("{}"));  // folder "": "."
    CHECK(read_text_file("relative-durable-test.json") == "{}");
    fs::remove("relative-durable-test.json");
    CHECK_THROWS_AS(write_file_durable(dir / "sub/run.json/x", std::string("y")), file_write_error);
}

TEST_CASE("the run's records are written durably, the harness's outputs are not", "[resume]") {
    const fs::path src = CUOPT_SOURCE_DIR;
    const std::string optimize = read_text_file(src / "orchestrator/commands/optimize_command.cpp");
    for (const char* name : {"run.json", "history.json", "summary.json"}) {
        INFO(name);
        CHECK(optimize.find(std::string("write_file_durable(c.run / \"") + name + "\"") !=
              std::string::npos);
        CHECK(optimize.find(std::string("write_file_atomic(c.run / \"") + name + "\"") ==
              std::string::npos);
    }
    const std::string cands = read_text_file(src / "orchestrator/artifacts/candidates_file.cpp");
    CHECK(cands.find("write_file_durable(file, candidates_json") != std::string::npos);
    const std::string harness = read_text_file(src / "harness/case_runner.cpp");
    CHECK(harness.find("write_file_durable") == std::string::npos);
}
