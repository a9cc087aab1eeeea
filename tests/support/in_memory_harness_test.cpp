// The attempt evaluator's verdicts with the in-memory fake harness (support/in_memory_harness):
// each marker's verdict and reason are the binary's, no process is started, and a hang is a
// timeout at once instead of after the timeout.
#include "in_memory_harness.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "orchestrator/evaluation/attempt_evaluator.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

struct evaluator_fixture {
    test::scratch_folder dir;
    manifest m = read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    test::in_memory_harness in_memory;
    candidate initial;
    oracle_files oracle;

    evaluator_settings settings() const {
        evaluator_settings s;
        s.harness = CUOPT_FAKE_HARNESS_BINARY;
        s.timing.fresh_inputs = true;
        s.timeout = std::chrono::seconds(3);
        return s;
    }
    evaluator_fixture() {
        initial.source =
            test::read_text(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/initial.cu");
        initial.entry = "matmul_f32";
        initial.proposer = proposer_kind::initial;
        initial.label = "initial";
        const attempt_result r = attempt_evaluator(m, settings(), in_memory)
                                     .evaluate(initial, dir / "reference", nullptr);
        REQUIRE(r.verdict == verdict::valid);
        for (const auto& ce : r.cases)
            for (const auto& oc : ce.outputs) oracle[{ce.name, oc.arg}] = oc.file;
    }
    candidate marked(const std::string& marker) const {
        candidate c = initial;
        c.proposer = proposer_kind::files;
        c.label = marker;
        c.source += "\n// " + marker + "\n";
        return c;
    }
    attempt_result evaluate(process_runner& runner, const std::string& marker,
                            const std::string& folder) {
        return attempt_evaluator(m, settings(), runner)
            .evaluate(marked(marker), dir / folder, &oracle);
    }
};

}  // namespace

TEST_CASE("the in-memory fake harness gives each marker the binary's verdict and reason",
          "[integration]") {
    evaluator_fixture f;
    const auto binary = make_child_process_runner();
    const std::vector<std::pair<std::string, verdict>> markers = {
        {"FAKE_MS=0.5", verdict::valid},
        {"FAKE_WRONG", verdict::wrong_output},
        {"FAKE_COMPILE_ERROR", verdict::compile_error},
        {"FAKE_CRASH", verdict::crash},
        {"FAKE_ILLEGAL_ADDRESS", verdict::cuda_error},
        {"FAKE_SKIP_LAST_ROW", verdict::unwritten_output},
        {"FAKE_WRITES_INPUT", verdict::mutates_inputs},
        {"FAKE_MISSING_OUTPUT", verdict::harness_error},
        {"FAKE_DISK_FULL", verdict::harness_error},
        {"FAKE_NO_CASES", verdict::harness_error},
        {"FAKE_MS=abc", verdict::harness_error},  // the fake's own failure: exit 70 in both
    };
    for (const auto& [marker, expected] : markers) {
        INFO(marker);
        const attempt_result mem = f.evaluate(f.in_memory, marker, "mem-" + marker);
        const attempt_result bin = f.evaluate(*binary, marker, "bin-" + marker);
        CHECK(mem.verdict == expected);
        CHECK(bin.verdict == expected);
        // The same words, but for the folder each ran in.
        std::string mem_reason = mem.reason, bin_reason = bin.reason;
        for (std::string* r : {&mem_reason, &bin_reason})
            for (const std::string& folder : {"mem-" + marker, "bin-" + marker})
                for (std::size_t at; (at = r->find(folder)) != std::string::npos;)
                    r->replace(at, folder.size(), "FOLDER");
        CHECK(mem_reason == bin_reason);
    }
}

TEST_CASE("the in-memory fake harness starts no process and times out at once", "[evaluator]") {
    evaluator_fixture f;
    const attempt_result pid = f.evaluate(f.in_memory, "FAKE_PIDFILE", "pid");
    CHECK(pid.verdict == verdict::valid);
    std::size_t found = 0;
    for (const auto& e : fs::recursive_directory_iterator(f.dir / "pid"))
        if (e.path().filename() == "harness.pid") {
            CHECK(test::read_text(e.path()) == std::to_string(getpid()));  // this process
            ++found;
        }
    CHECK(found > 0);
    const auto start = std::chrono::steady_clock::now();
    const attempt_result hang = f.evaluate(f.in_memory, "FAKE_HANG", "hang");
    CHECK(hang.verdict == verdict::timeout);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));  // not the 3 s
    CHECK_THAT(hang.reason, Catch::Contains("timed out after 3000 ms"));
    CHECK(f.in_memory.commands().size() > 2);
    for (const auto& argv : f.in_memory.commands()) CHECK(argv.at(0) == CUOPT_FAKE_HARNESS_BINARY);
}

TEST_CASE("the in-memory fake harness refuses what only a process can do", "[evaluator]") {
    test::in_memory_harness runner;
    CHECK_THROWS_WITH(runner.run({"/bin/true"}, std::chrono::seconds(1)),
                      Catch::Contains("only fake-harness command lines"));
    CHECK_THROWS_WITH(runner.run({CUOPT_FAKE_HARNESS_BINARY, "--worker"}, std::chrono::seconds(1)),
                      Catch::Contains("--worker needs the fake-harness binary"));
    const process_result info =
        runner.run({CUOPT_FAKE_HARNESS_BINARY, "--device-info"}, std::chrono::seconds(1));
    CHECK(info.exit_code == 0);
    CHECK_THAT(info.stdout_text, Catch::Contains("\"simulated\": true"));
    CHECK(
        runner.run({CUOPT_FAKE_HARNESS_BINARY, "--version"}, std::chrono::seconds(1)).stdout_text ==
        "fake\n");
    CHECK(runner.run({CUOPT_FAKE_HARNESS_BINARY}, std::chrono::seconds(1)).exit_code ==
          to_int(exit_code::usage));
}
