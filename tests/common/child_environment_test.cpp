// The environment of the optimizer's children: the allow-list itself, and through the real
// cuda-optimizer binary a harness and a compute-sanitizer that write down what they were given.
#include "common/child_environment.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

TEST_CASE("the allow-list passes what CUDA and NVIDIA's tools read and never a key") {
    for (const char* name :
         {"PATH", "HOME", "LANG", "LC_ALL", "LC_NUMERIC", "TMPDIR", "XDG_CACHE_HOME",
          "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_CACHE_PATH",
          "CUDA_HARNESS_CACHE_DIR", "CUDAToolkit_ROOT", "CUOPT_DIE_WITH_PARENT", "CUOPT_FAKE_TRACE",
          "NV_COMPUTE_PROFILER_LOCAL_CONNECTION_OVERRIDE",
          "NV_COMPUTE_SANITIZER_LOCAL_CONNECTION_OVERRIDE"}) {
        INFO(name);
        CHECK(passed_to_child(name));
    }
    for (const char* name : {"OPENAI_API_KEY",
                             "ANTHROPIC_API_KEY",
                             "AWS_SECRET_ACCESS_KEY",
                             "AWS_ACCESS_KEY_ID",
                             "GOOGLE_APPLICATION_CREDENTIALS",
                             "GITHUB_TOKEN",
                             "SOME_RANDOM_TOKEN",
                             "LD_PRELOAD",
                             "OPENAI_BASE_URL",
                             "SSH_AUTH_SOCK",
                             "USER",
                             "PATHX",
                             "XPATH",
                             "path",
                             "CUDA",
                             "CUOPT_API_KEY",
                             "CUDA_SECRET",
                             "CUOPT_PASSWORD",
                             "CUDA_HARNESS_TOKEN",
                             "LC_AUTH",
                             "FAKE_TRACE",
                             ""}) {
        INFO(name);
        CHECK_FALSE(passed_to_child(name));
    }
}

TEST_CASE("a scrubbed environment keeps the allowed entries in their order and drops the rest") {
    const char* env[] = {"OPENAI_API_KEY=sk-secret",
                         "PATH=/usr/bin:/bin",
                         "NO_EQUALS_SIGN",
                         "CUDA_VISIBLE_DEVICES=1",
                         "AWS_SECRET_ACCESS_KEY=abc",
                         "HOME=/home/u",
                         "CUDA_EMPTY=",
                         nullptr};
    CHECK(scrubbed_entries(env) == std::vector<std::string>{"PATH=/usr/bin:/bin",
                                                            "CUDA_VISIBLE_DEVICES=1",
                                                            "HOME=/home/u", "CUDA_EMPTY="});
    CHECK(scrubbed_entries(nullptr).empty());
}

namespace {

// An executable script in `dir` that appends its environment to `log`, then execs `target`.
fs::path env_recorder(const test::scratch_folder& dir, const std::string& name, const fs::path& log,
                      const std::string& target) {
    const fs::path script = dir.write(name, "#!/bin/sh\n{ echo '--- " + name + "'; env; } >> '" +
                                                log.string() + "'\nexec '" + target + "' \"$@\"\n");
    ::chmod(script.c_str(), 0755);
    return script;
}

}  // namespace

TEST_CASE("optimize with a harness wrapper that records its environment: no key reaches it",
          "[integration][env]") {
    const test::scoped_env keys[] = {
        {"OPENAI_API_KEY", "sk-secret-openai-0123"},  {"ANTHROPIC_API_KEY", "sk-ant-secret-4567"},
        {"AWS_SECRET_ACCESS_KEY", "aws-secret-89ab"}, {"SOME_RANDOM_TOKEN", "token-secret-cdef"},
        {"UNLISTED_SETTING", "not-for-children"},     {"CUDA_VISIBLE_DEVICES", "0"},
    };
    for (const char* isolation : {"process", "worker"}) {
        INFO("--isolation " << isolation);
        test::optimizer_fixture f;
        const fs::path log = f.dir / "children-env.txt";
        const fs::path harness = env_recorder(f.dir, "harness.sh", log, CUOPT_FAKE_HARNESS_BINARY);
        const fs::path sanitizer =
            env_recorder(f.dir, "sanitizer.sh", log,
                         std::string(CUOPT_SOURCE_DIR) + "/tests/fake-compute-sanitizer.sh");
        f.dir.write("cands/a_faster.cu", f.kernel("FAKE_MS=1"));
        const auto r = test::run_optimizer(
            test::joined(test::optimize_args(f.dir.path(), harness.string()),
                         {"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                          "--timeout", "5", "--isolation", isolation, "--sanitizer",
                          sanitizer.string(), "--significance-runs", "2"}));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        const std::string recorded = test::read_text(log);
        CHECK_THAT(recorded, Catch::Contains("--- harness.sh"));
        CHECK_THAT(recorded, Catch::Contains("--- sanitizer.sh"));  // the winner's evidence ran
        for (const char* secret :
             {"sk-secret-openai", "sk-ant-secret", "aws-secret", "token-secret", "not-for-children",
              "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_", "SOME_RANDOM_TOKEN"}) {
            INFO(secret);
            CHECK(recorded.find(secret) == std::string::npos);
        }
        for (const char* kept :
             {"\nPATH=", "\nHOME=", "\nCUDA_VISIBLE_DEVICES=0\n", "\nCUOPT_DIE_WITH_PARENT=1\n"}) {
            INFO(kept);
            CHECK(recorded.find(kept) != std::string::npos);
        }
    }
}
