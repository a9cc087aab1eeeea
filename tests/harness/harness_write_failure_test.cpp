// The real cuda-harness when it cannot write a file: started with RLIMIT_FSIZE set low and
// SIGXFSZ ignored, its writes past the limit fail with EFBIG ("File too large"), down the same
// path as a full disk's ENOSPC (write(2) or close(2) returns -1, errno says why). A real ENOSPC
// needs a small file system of our own (a tmpfs or loop mount: root only), and /dev/full
// cannot take a rename, so EFBIG stands in for it here.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>

#include "common/child_process.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

/// How a limited harness ended: its exit code (or the signal that killed it) and its two
/// streams apart, so a test can count stderr's lines.
struct limited_run {
    int exit_code = -1;
    int signal = 0;
    std::string out, err;
};

std::string harness_binary() {
    const char* override_binary = std::getenv("CUOPT_HARNESS_BINARY");
    return override_binary && *override_binary ? override_binary : CUOPT_HARNESS_BINARY;
}

/// Runs the real harness with `args`, no file it writes larger than `max_file_bytes` (SIGXFSZ
/// ignored, so a write past the limit fails with EFBIG instead of killing it) and `input` on
/// its stdin.
limited_run run_limited(const std::vector<std::string>& args, rlim_t max_file_bytes,
                        const std::string& input = "", const std::string& program = "") {
    int in[2], out[2], err[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    REQUIRE(::pipe(err) == 0);
    const std::string binary = program.empty() ? harness_binary() : program;
    std::vector<std::string> argv_text = {binary};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // between fork and exec: only async-signal-safe calls
        const rlimit limit{max_file_bytes, max_file_bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        ::signal(SIGXFSZ, SIG_IGN);  // an ignored signal stays ignored across exec
        ::dup2(in[0], STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    for (int fd : {in[0], out[1], err[1]}) ::close(fd);
    if (!input.empty())
        REQUIRE(::write(in[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    ::close(in[1]);
    limited_run r;
    read_pipes_to_end(out[0], r.out, err[0], r.err);
    ::close(out[0]);
    ::close(err[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    return r;
}

std::string request_json(int y_count, const std::string& x_arg) {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "twice" },
      "timing": { "warmup": 1, "iterations": 5 },
      "cases": [ { "name": "big", "launch": { "grid": [256], "block": [256] }, "args": [ )" +
           x_arg + R"(,
        { "name": "y", "dtype": "f32", "count": )" +
           std::to_string(y_count) + R"(, "output_file": "out/y.bin" },
        { "name": "n", "dtype": "i32", "value": 16384 } ] },
      { "name": "after", "launch": { "grid": [1], "block": [64] }, "args": [
        { "name": "x", "dtype": "f32", "count": 64, "generator": {"kind": "uniform"} },
        { "name": "y", "dtype": "f32", "count": 64, "output_file": "out/after.bin" },
        { "name": "n", "dtype": "i32", "value": 64 } ] } ] })";
}

// A generated x (16384 floats) and an output y of `y_count` floats.
std::string generated_request(int y_count) {
    return request_json(
        y_count,
        R"({ "name": "x", "dtype": "f32", "count": 16384, "generator": {"kind": "uniform"} })");
}

std::size_t line_count(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// No temporary of an abandoned write is left beside the file.
bool no_temporary_left(const fs::path& folder) {
    for (const auto& entry : fs::directory_iterator(folder))
        if (entry.path().filename().string().find(".tmp-") != std::string::npos) return false;
    return true;
}

struct write_failure_fixture {
    test::scratch_folder dir;
    write_failure_fixture() { dir.write("k.cu", test::k_twice_kernel); }
    std::vector<std::string> args(const std::string& request, std::vector<std::string> extra) {
        std::vector<std::string> a = {(dir / request).string(), "--cache-dir",
                                      (dir / "cache").string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
};

}  // namespace

TEST_CASE(
    "a response that cannot be written is one stderr line naming it and the system's reason, "
    "and the harness exits 70, not by a signal",
    "[integration]") {
    write_failure_fixture f;
    f.dir.write("req.json", generated_request(16384));
    // The response of a compile-only run is a few KB; the cubin cache's files are larger than
    // 512 bytes too, and a cache that cannot be written is no error.
    const limited_run r =
        run_limited(f.args("req.json", {"--compile-only", "--arch", "sm_80"}), 512);
    INFO(r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 70);
    CHECK(r.out.empty());
    CHECK(line_count(r.err) == 1);
    CHECK(r.err == "cuda-harness: internal_error: cannot write " +
                       (f.dir / "response.json").string() + ": File too large (errno 27)\n");
    CHECK_FALSE(fs::exists(f.dir / "response.json"));
    CHECK(no_temporary_left(f.dir.path()));
}

TEST_CASE("the fake harness, too, says a response it cannot write in one line and exits 70",
          "[integration]") {
    write_failure_fixture f;
    f.dir.write("req.json", generated_request(16384));
    const limited_run r = run_limited(f.args("req.json", {}), 512, "", CUOPT_FAKE_HARNESS_BINARY);
    INFO(r.err);
    CHECK(r.signal == 0);  // was SIGABRT: an uncaught file_write_error
    CHECK(r.exit_code == 70);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("fake-harness: internal_error: ") &&
                          Catch::Contains((f.dir / "response.json").string()) &&
                          Catch::Contains("File too large"));
    CHECK(no_temporary_left(f.dir.path()));
}

TEST_CASE(
    "an unwritable response to a bad request still says, on its one line, how the request "
    "ended",
    "[integration]") {
    write_failure_fixture f;
    f.dir.write("req.json", request_json(64, R"({ "name": "x", "dtype": "f32", "count": 64,
        "input_file": "missing.bin" })"));
    const limited_run r = run_limited(f.args("req.json", {"--compile-only", "--quiet"}), 512);
    INFO(r.err);
    CHECK(r.exit_code == 70);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("cuda-harness: internal_error: cannot write " +
                                        (f.dir / "response.json").string() +
                                        ": File too large (errno 27)"));
    CHECK_THAT(r.err, Catch::EndsWith("(the request itself ended invalid_request)\n"));
}

TEST_CASE(
    "a worker whose response cannot be written answers that request with exit 70 and the "
    "file's name, then exits 70 cleanly",
    "[integration]") {
    write_failure_fixture f;
    f.dir.write("req.json", generated_request(16384));
    const std::string line = (f.dir / "req.json").string() + "\n";
    const limited_run r =
        run_limited({"--worker", "--compile-only", "--arch", "sm_80", "--root",
                     f.dir.path().string(), "--cache-dir", (f.dir / "cache").string()},
                    512, line + line);
    INFO(r.out << r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 70);
    REQUIRE(line_count(r.out) == 1);  // the second request is left for a fresh worker
    rapidjson::Document reply;
    reply.Parse(r.out.c_str());
    REQUIRE(reply.IsObject());
    CHECK(reply["exit_code"].GetInt() == 70);
    CHECK(std::string(reply["status"].GetString()) == "internal_error");
    CHECK(std::string(reply["messages"].GetString()) ==
          "cuda-harness: internal_error: cannot write " + (f.dir / "response.json").string() +
              ": File too large (errno 27)\n");
}

TEST_CASE(
    "an output too large to write makes the response internal_error naming the .bin file "
    "and File too large, the cases after it are skipped",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    write_failure_fixture f;
    f.dir.write("req.json", generated_request(65536));  // 256 KiB of y, over a 64 KiB limit
    const limited_run r = run_limited(f.args("req.json", {"--quiet"}), 64 * 1024);
    INFO(r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 70);
    const std::string expected =
        "cannot write " + (f.dir / "out/y.bin").string() + ": File too large (errno 27)";
    CHECK(r.err == "cuda-harness: internal_error: " + expected + "\n");
    const auto doc = test::read_response(f.dir / "response.json");
    CHECK(std::string(doc["status"].GetString()) == "internal_error");
    CHECK(doc["exit_code"].GetInt() == 70);
    CHECK(std::string(doc["error"].GetString()) == expected);
    CHECK(std::string(doc["cases"][0]["error"].GetString()) == expected);
    CHECK(std::string(doc["cases"][1]["status"].GetString()) == "skipped");
    CHECK_THAT(doc["cases"][1]["error"].GetString(), Catch::Contains("could not write its files"));
    CHECK_FALSE(fs::exists(f.dir / "out/y.bin"));
    CHECK(no_temporary_left(f.dir / "out"));
}

TEST_CASE(
    "an input dump too large to write names the dump file, and a worker answers it and "
    "exits 70",
    "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    write_failure_fixture f;
    f.dir.write("req.json", request_json(16384, R"({ "name": "x", "dtype": "f32", "count": 65536,
        "generator": {"kind": "uniform"}, "input_dump_file": "x.bin" })"));
    const std::string expected =
        "cannot write " + (f.dir / "x.bin").string() + ": File too large (errno 27)";
    const limited_run one_shot = run_limited(f.args("req.json", {"--quiet"}), 128 * 1024);
    INFO(one_shot.err);
    CHECK(one_shot.exit_code == 70);
    CHECK(std::string(test::read_response(f.dir / "response.json")["error"].GetString()) ==
          expected);

    const limited_run worker = run_limited({"--worker", "--quiet", "--root", f.dir.path().string(),
                                            "--cache-dir", (f.dir / "cache").string()},
                                           128 * 1024, (f.dir / "req.json").string() + "\n");
    INFO(worker.out << worker.err);
    CHECK(worker.signal == 0);
    CHECK(worker.exit_code == 70);
    rapidjson::Document reply;
    reply.Parse(worker.out.c_str());
    REQUIRE(reply.IsObject());
    CHECK(reply["exit_code"].GetInt() == 70);
    CHECK(std::string(reply["messages"].GetString()) ==
          "cuda-harness: internal_error: " + expected + "\n");
}
