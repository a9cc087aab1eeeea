#include "common/temporary_folder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/file_io.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

TEST_CASE("a temporary folder is private to us, named unpredictably, and removed with its files",
          "[security]") {
    test::scratch_folder dir;
    fs::path kept;
    {
        const temporary_folder a("cuda-optimizer-preflight", dir.path());
        const temporary_folder b("cuda-optimizer-preflight", dir.path());
        CHECK(a.path() != b.path());
        CHECK(a.path().parent_path() == dir.path());
        const std::string name = a.path().filename().string();
        CHECK(name.rfind("cuda-optimizer-preflight-", 0) == 0);
        CHECK(name.size() == std::string("cuda-optimizer-preflight-").size() + 6);
        struct stat st {};
        REQUIRE(::lstat(a.path().c_str(), &st) == 0);
        CHECK(S_ISDIR(st.st_mode));
        CHECK((st.st_mode & 0777) == 0700);
        CHECK(st.st_uid == ::geteuid());
        write_file_atomic(a / "sub/request.json", std::string("{}"));
        fs::create_symlink(dir / "outside.txt", a / "link");  // removed, its target not
        kept = a.path();
    }
    CHECK_FALSE(fs::exists(kept));
    CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("a temporary folder is made in $TMPDIR when no parent is given, and moves") {
    test::scratch_folder dir;
    const test::scoped_env tmpdir("TMPDIR", dir.path().c_str());
    temporary_folder a("cuda-harness-test");
    CHECK(a.path().parent_path() == dir.path());
    const fs::path where = a.path();
    temporary_folder b = std::move(a);
    CHECK(b.path() == where);
    CHECK(a.path().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(fs::is_directory(where));
}

TEST_CASE("a temporary folder that cannot be made says where and why") {
    CHECK_THROWS_WITH(temporary_folder("x", "/proc/no/such/place"),
                      Catch::Contains("/proc/no/such/place/x-XXXXXX: cannot create a temporary "
                                      "folder (No such file or directory)"));
}
