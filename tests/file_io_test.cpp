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
