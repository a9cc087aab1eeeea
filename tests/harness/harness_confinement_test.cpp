// The real cuda-harness confining itself (Landlock): a kernel's #include reaches nothing outside
// its request's folder and the toolkit, no secret or file line reaches a response or the
// console, a worker stays inside its --root, and the response says how it was confined.
// Needs no GPU: the compiles are --compile-only.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <optional>
#include <random>

#include "common/file_io.hpp"
#include "common/landlock.hpp"
#include "harness/confined_compile.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const char* k_request = R"({ "schema_version": 1, "kernel": { "source_file": "k.cu",
  "entry": "twice" }, "cases": [ { "name": "c", "launch": { "grid": [1], "block": [64] },
  "args": [ { "name": "x", "dtype": "f32", "count": 64, "generator": {"kind": "uniform"} },
            { "name": "y", "dtype": "f32", "count": 64, "output_file": "y.bin" },
            { "name": "n", "dtype": "i32", "value": 64 } ] } ] })";

// A secret beside the request folder, a request folder inside, and the harness run on a kernel
// that starts with `first_line`.
struct confined_fixture {
    test::scratch_folder top;
    fs::path request_folder = top / "request";
    confined_fixture() {
        top.write("outside/secret.h", "int SECRET_LINE_7319 = 1; // the secret file\n");
        top.write("request/beside.h", "#define BESIDE 2\n");
        top.write("request/req.json", k_request);
    }
    test::process_result compile(const std::string& first_line,
                                 std::vector<std::string> extra = {}) {
        top.write("request/k.cu", first_line + "\n" + test::k_twice_kernel);
        std::vector<std::string> args = {(request_folder / "req.json").string(), "--compile-only",
                                         "--arch", "sm_90", "--no-cache"};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_harness(args);
    }
    std::string response_text() const { return read_text_file(request_folder / "response.json"); }
};

std::string landlock_missing() {
    std::string why;
    return landlock_abi(&why) > 0 ? "" : why;
}

}  // namespace

TEST_CASE("a kernel including a secret outside its folder gets a compile error, never the secret",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    test::scoped_env key("SECRET_API_KEY", "sk-confinement-test-4242");
    const std::string abs = (f.top / "outside/secret.h").string();
    for (const std::string& include :
         {std::string("/proc/self/environ"), abs, std::string("../outside/secret.h")}) {
        INFO(include);
        const test::process_result r = f.compile("#include \"" + include + "\"");
        CHECK(r.exit_code == 10);
        CHECK_THAT(r.output, Catch::Contains("cannot open source file \"" + include +
                                             "\": not in the request's folder"));
        const std::string response = f.response_text();
        for (const char* secret : {"sk-confinement-test-4242", "SECRET_LINE_7319", "secret file"}) {
            CHECK(r.output.find(secret) == std::string::npos);
            CHECK(response.find(secret) == std::string::npos);
        }
        const rapidjson::Document doc = test::read_response(f.request_folder / "response.json");
        CHECK(std::string(doc["confinement"]["mode"].GetString()) == "landlock");
    }
}

TEST_CASE("a header beside the kernel still compiles under confinement", "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    const test::process_result r = f.compile("#include \"beside.h\"\nstatic_assert(BESIDE == 2);");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    const rapidjson::Document doc = test::read_response(f.request_folder / "response.json");
    CHECK(doc["compile"]["ok"].GetBool());
    const auto& c = doc["confinement"];
    CHECK(std::string(c["mode"].GetString()) == "landlock");
    CHECK(c["abi"].GetInt() >= 1);
    bool folder_writable = false;
    for (const auto& w : c["write"].GetArray())
        folder_writable |= fs::equivalent(w.GetString(), f.request_folder);
    CHECK(folder_writable);
}

TEST_CASE("a link beside the kernel to a file outside is refused like the file itself",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    fs::create_symlink(f.top / "outside/secret.h", f.request_folder / "innocent.h");
    const test::process_result r = f.compile("#include \"innocent.h\"");
    CHECK(r.exit_code == 10);
    CHECK_THAT(r.output, Catch::Contains("cannot open source file \"innocent.h\""));
    CHECK(r.output.find("SECRET_LINE_7319") == std::string::npos);
    CHECK(f.response_text().find("SECRET_LINE_7319") == std::string::npos);
}

TEST_CASE("a harness run with --unconfined says in one line that nothing is confined, and why",
          "[integration]") {
    confined_fixture f;
    const test::process_result r = f.compile("// trusted", {"--unconfined"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("cuda-harness: warning: not confined (--unconfined was "
                                         "given): a kernel's #include can read any file"));
    const rapidjson::Document doc = test::read_response(f.request_folder / "response.json");
    CHECK(std::string(doc["confinement"]["mode"].GetString()) == "none");
    CHECK(std::string(doc["confinement"]["reason"].GetString()) == "--unconfined was given");
}

TEST_CASE("a confined worker refuses a request outside its --root and serves the one inside",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    f.top.write("request/k.cu", test::k_twice_kernel);
    const fs::path input =
        f.top.write("stdin.txt", (f.top / "outside/secret.h").string() + "\n" +
                                     (f.request_folder / "req.json").string() + "\n");
    const std::string command = "'" + std::string(CUOPT_HARNESS_BINARY) +
                                "' --worker --compile-only --arch sm_90 --no-cache --root '" +
                                f.request_folder.string() + "' < '" + input.string() + "'";
    const test::process_result r = test::run_program("/bin/sh", {"-c", command});
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("is outside " + f.request_folder.string() +
                                         ", the folder this harness is confined to (--root)"));
    CHECK_THAT(r.output, Catch::Contains("\"exit_code\":64"));
    CHECK_THAT(r.output, Catch::Contains("\"exit_code\":0"));
    CHECK(r.output.find("SECRET_LINE_7319") == std::string::npos);
}

TEST_CASE("every include NVRTC could not open reads the same, missing or refused") {
    const std::string log =
        "k.cu(1): catastrophic error: cannot open source file \"missing.h\"\n"
        "k.cu(2): catastrophic error: cannot open source file \".bashrc\": Permission denied\n"
        "  #include \".bashrc\"";
    const std::string out = explain_refused_includes(log);
    const std::string words =
        "\": not in the request's folder or the CUDA toolkit's headers "
        "(cuda-harness compiles confined to them)";
    CHECK(out == "k.cu(1): catastrophic error: cannot open source file \"missing.h" + words +
                     "\nk.cu(2): catastrophic error: cannot open source file \".bashrc" + words +
                     "\n  #include \".bashrc\"");
}

namespace {

// A random relative path of 1..6 parts from `parts`.
std::string random_path(std::mt19937& rng, const std::vector<std::string>& parts) {
    std::string rel;
    const int length = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < length; ++i) rel += (i ? "/" : "") + parts[rng() % parts.size()];
    return rel;
}

// libc's realpath, independent of std::filesystem: where an existing path really is.
std::optional<fs::path> real_location(const fs::path& p) {
    char buf[PATH_MAX];
    if (!::realpath(p.c_str(), buf)) return std::nullopt;
    return fs::path(buf);
}

bool lies_under(const fs::path& p, const fs::path& base) {
    const auto m = std::mismatch(base.begin(), base.end(), p.begin(), p.end());
    return m.first == base.end();
}

// A tree with a file inside, a file outside, and links pointing in and out.
struct link_maze {
    test::scratch_folder top;
    fs::path base = top / "base";
    link_maze() {
        top.write("base/a/inside.h", "#define INSIDE_MARK 1\n");
        top.write("base/b/inside.h", "#define INSIDE_MARK 1\n");
        top.write("elsewhere/inside.h", "#define OUTSIDE_MARK_5521 1\n");
        fs::create_symlink(top / "elsewhere", base / "out");
        fs::create_symlink(base / "b", base / "a" / "in");
    }
    const std::vector<std::string> parts = {"a", "b", "..", ".", "out", "in", "inside.h"};
};

}  // namespace

// Property: for random relative paths through `..`, `.`, plain names and links pointing in and
// out, resolve_inside accepts exactly the existing paths libc's realpath puts under the base.
TEST_CASE("resolve_inside accepts exactly the paths that really lie inside, over random paths") {
    link_maze maze;
    std::mt19937 rng(20261201);
    const fs::path real_base = *real_location(maze.base);
    int inside = 0, outside = 0;
    for (int n = 0; n < 4000; ++n) {
        const std::string rel = random_path(rng, maze.parts);
        const std::optional<fs::path> real = real_location(maze.base / rel);
        if (!real) continue;  // only paths that exist have a realpath to compare with
        const bool really_inside = lies_under(*real, real_base);
        INFO(rel << " -> " << *real);
        bool accepted = true;
        try {
            (void)resolve_inside(maze.base, rel);
        } catch (const std::invalid_argument&) {
            accepted = false;
        }
        CHECK(accepted == really_inside);
        (really_inside ? inside : outside) += 1;
    }
    CHECK(inside > 50);
    CHECK(outside > 50);
}

// Property through the real binary: a kernel including a random path compiles exactly when
// the file it names really lies inside its folder, and the outside file's line never shows.
TEST_CASE("random includes compile exactly when they really lie inside the request's folder",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    link_maze maze;
    maze.top.write("base/req.json", k_request);
    std::mt19937 rng(7);
    const fs::path real_base = *real_location(maze.base);
    int inside = 0, outside = 0;
    while (inside + outside < 24) {
        const std::string rel = random_path(rng, maze.parts);
        const std::optional<fs::path> real = real_location(maze.base / rel);
        if (!real || fs::is_directory(*real)) continue;
        const bool really_inside = lies_under(*real, real_base);
        if ((really_inside ? inside : outside) >= 12) continue;
        (really_inside ? inside : outside) += 1;
        maze.top.write("base/k.cu", "#include \"" + rel + "\"\n" + test::k_twice_kernel);
        const test::process_result r =
            test::run_harness({(maze.base / "req.json").string(), "--compile-only", "--arch",
                               "sm_90", "--no-cache", "--quiet"});
        INFO(rel << " -> " << *real << "\n" << r.output);
        CHECK(r.exit_code == (really_inside ? 0 : 10));
        CHECK(r.output.find("OUTSIDE_MARK_5521") == std::string::npos);
        CHECK(read_text_file(maze.base / "response.json").find("OUTSIDE_MARK_5521") ==
              std::string::npos);
    }
}

// On the GPU: the confined harness still starts the driver, times with CUPTI, reads the GPU
// through NVML and calls cuBLAS (what the driver needs was found on an H200, not guessed).
TEST_CASE("on a GPU the confined harness times with CUPTI, reads NVML and calls cuBLAS", "[gpu]") {
    if (const std::string why = test::gpu_unavailable_reason(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    test::scratch_folder dir;
    fs::copy(fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul", dir / "kernel");
    test::process_result r = test::run_harness({(dir / "kernel/request.json").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    rapidjson::Document doc = test::read_response(dir / "kernel/response.json");
    CHECK(std::string(doc["confinement"]["mode"].GetString()) == "landlock");
    CHECK(std::string(doc["timer"]["name"].GetString()) == "cupti");
    CHECK(doc["gpu_monitor"]["source"].IsString());
    for (const auto& c : doc["cases"].GetArray())
        CHECK(std::string(c["status"].GetString()) == "ok");

    dir.write("vendor/request.json", R"({ "schema_version": 1, "vendor": { "library": "cublas" },
  "timing": { "warmup": 2, "iterations": 10 }, "cases": [ { "name": "g", "vendor_call": {
  "op": "sgemm", "layout": "row_major", "m": 64, "n": 64, "k": 64, "a": "a", "b": "b", "c": "c" },
  "args": [ { "name": "a", "dtype": "f32", "count": 4096, "generator": {"kind": "uniform"} },
            { "name": "b", "dtype": "f32", "count": 4096, "generator": {"kind": "uniform"} },
            { "name": "c", "dtype": "f32", "count": 4096, "output_file": "c.bin" } ] } ] })");
    r = test::run_harness({(dir / "vendor/request.json").string()});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    doc = test::read_response(dir / "vendor/response.json");
    CHECK(std::string(doc["confinement"]["mode"].GetString()) == "landlock");
    CHECK(doc["vendor"]["file"].IsString());
}

TEST_CASE("a descriptor the harness inherited never reaches the compile through /proc/self/fd",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    f.top.write("request/k.cu", "#include \"/proc/self/fd/7\"\n" + test::k_twice_kernel);
    // A memfd (no path Landlock could check) holding a secret, open on fd 7 in the harness.
    const fs::path script =
        f.top.write("run.py",
                    "import os, subprocess, sys\n"
                    "fd = os.memfd_create('secret', 0)\n"
                    "os.write(fd, b'int MEMFD_SECRET_9911 = 1;\\n')\n"
                    "os.dup2(fd, 7, inheritable=True)\n"
                    "r = subprocess.run(sys.argv[1:], pass_fds=(7,), stdout=subprocess.PIPE, "
                    "stderr=subprocess.STDOUT)\n"
                    "sys.stdout.write(r.stdout.decode()); sys.exit(r.returncode)\n");
    const test::process_result r = test::run_program(
        "python3", {script.string(), CUOPT_HARNESS_BINARY, (f.request_folder / "req.json").string(),
                    "--compile-only", "--arch", "sm_90", "--no-cache"});
    INFO(r.output);
    CHECK(r.exit_code == 10);
    CHECK(r.output.find("MEMFD_SECRET_9911") == std::string::npos);
    CHECK(f.response_text().find("MEMFD_SECRET_9911") == std::string::npos);
}

TEST_CASE("under an injected profiler the process runs unconfined on purpose, its compiles do not",
          "[integration]") {
    if (const std::string why = landlock_missing(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    confined_fixture f;
    test::scoped_env injected("CUDA_INJECTION64_PATH", "/nonexistent/libInjection.so");
    test::scoped_env key("SECRET_API_KEY", "sk-profiler-test-5150");
    const test::process_result r = f.compile("#include \"/proc/self/environ\"");
    CHECK(r.exit_code == 10);
    CHECK_THAT(r.output, Catch::Contains("not confined (a profiler is injected"));
    CHECK(r.output.find("sk-profiler-test-5150") == std::string::npos);
    CHECK(f.response_text().find("sk-profiler-test-5150") == std::string::npos);
    const rapidjson::Document doc = test::read_response(f.request_folder / "response.json");
    CHECK(std::string(doc["confinement"]["mode"].GetString()) == "none");
}
