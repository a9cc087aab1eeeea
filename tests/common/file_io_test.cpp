#include "common/file_io.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
    for (const char* file : {"harness/case_buffers.cpp", "harness/case_outputs.cpp"}) {
        INFO(file);
        CHECK(read_text_file(src / file).find("write_file_durable") == std::string::npos);
    }
}

namespace {

struct stat stat_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st;
}

std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("an atomic write never writes through a link planted at its old pid-named temporary",
          "[security]") {
    test::scratch_folder dir;
    const fs::path victim = dir.write("home/authorized_keys", "ssh-ed25519 AAAA victim\n");
    fs::create_directories(dir / "shared");
    const std::string pid = std::to_string(::getpid());
    for (const char* writer : {"atomic", "durable"}) {
        INFO(writer);
        for (int p = ::getpid() - 2; p < ::getpid() + 64; ++p)
            fs::create_symlink(victim, dir / ("shared/out.json.tmp-" + std::to_string(p)));
        if (std::string(writer) == "atomic")
            write_file_atomic(dir / "shared/out.json", std::string("kernel text"));
        else
            write_file_durable(dir / "shared/out.json", std::string("kernel text"));
        CHECK(read_text_file(victim) == "ssh-ed25519 AAAA victim\n");
        CHECK(read_text_file(dir / "shared/out.json") == "kernel text");
        CHECK(fs::is_symlink(dir / ("shared/out.json.tmp-" + pid)));  // left as it was
        for (int p = ::getpid() - 2; p < ::getpid() + 64; ++p)
            fs::remove(dir / ("shared/out.json.tmp-" + std::to_string(p)));
        CHECK(names_in(dir / "shared") == std::vector<std::string>{"out.json"});
    }
}

TEST_CASE("a symlink at the final name is replaced by the new file and its target is untouched",
          "[security]") {
    test::scratch_folder dir;
    const fs::path victim = dir.write("home/authorized_keys", "ssh-ed25519 AAAA victim\n");
    fs::create_directories(dir / "shared");
    fs::create_symlink(victim, dir / "shared/request.json");
    write_file_atomic(dir / "shared/request.json", std::string("{}"));
    CHECK(read_text_file(victim) == "ssh-ed25519 AAAA victim\n");
    CHECK_FALSE(fs::is_symlink(dir / "shared/request.json"));
    CHECK(read_text_file(dir / "shared/request.json") == "{}");
    CHECK((stat_of(dir / "shared/request.json").st_mode & 0777) == 0644);

    fs::create_symlink(victim, dir / "shared/copy.bin");  // a copy too
    copy_file_atomic(dir / "shared/request.json", dir / "shared/copy.bin");
    CHECK(read_text_file(victim) == "ssh-ed25519 AAAA victim\n");
    CHECK_FALSE(fs::is_symlink(dir / "shared/copy.bin"));
    CHECK(read_text_file(dir / "shared/copy.bin") == "{}");
}

TEST_CASE("a write into a folder that is our own symlink goes through it to the real folder") {
    test::scratch_folder dir;
    fs::create_directories(dir / "scratch-disk/results");
    fs::create_directory_symlink(dir / "scratch-disk/results", dir / "results");
    write_file_atomic(dir / "results/run.json", std::string("{}"));
    CHECK(read_text_file(dir / "scratch-disk/results/run.json") == "{}");
    CHECK(fs::is_symlink(dir / "results"));
}

TEST_CASE("a write into a folder that is a symlink another user planted is refused", "[security]") {
    if (::geteuid() != 0) {
        WARN("skipped: not root, so a symlink owned by another user cannot be made here");
        return;
    }
    test::scratch_folder dir;
    fs::create_directories(dir / "root-home/.ssh");
    fs::create_directory_symlink(dir / "root-home/.ssh", dir / "planted");
    REQUIRE(::lchown((dir / "planted").c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH(write_file_atomic(dir / "planted/authorized_keys", std::string("x")),
                      Catch::Contains("planted/authorized_keys: its folder") &&
                          Catch::Contains("is a symlink owned by uid 65534") &&
                          Catch::Contains("refusing to write through it"));
    CHECK(fs::is_empty(dir / "root-home/.ssh"));
}

TEST_CASE("a write that cannot replace its file removes its temporary and names the reason") {
    test::scratch_folder dir;
    fs::create_directories(dir / "sub/out.json/inside");
    CHECK_THROWS_WITH(write_file_atomic(dir / "sub/out.json", std::string("x")),
                      Catch::Contains("out.json: cannot replace (is a directory)"));
    CHECK(names_in(dir / "sub") == std::vector<std::string>{"out.json"});
    CHECK_THROWS_WITH(write_file_atomic(dir / "sub/", std::string("x")),
                      Catch::Contains("not a file name"));
}
