#include "common/runner_process.hpp"

#include <catch2/catch.hpp>
#include <csignal>

using namespace cuopt;
using namespace std::chrono_literals;

TEST_CASE("a child's exit code, stdout and stderr come back", "[integration]") {
    const auto runner = make_child_process_runner();
    const auto r = runner->run({"/bin/sh", "-c", "echo out; echo err >&2; exit 13"}, 10s);
    CHECK(r.exit_code == 13);
    CHECK(r.signal == 0);
    CHECK_FALSE(r.timed_out);
    CHECK(r.stdout_text == "out\n");
    CHECK(r.stderr_text == "err\n");
    CHECK(r.describe() == "exit 13");
}

TEST_CASE("a child that outlives its limit is killed and reported as timed out", "[integration]") {
    const auto runner = make_child_process_runner();
    const auto r = runner->run({"/bin/sh", "-c", "echo started >&2; exec sleep 30"}, 300ms);
    CHECK(r.timed_out);
    CHECK(r.signal == SIGKILL);
    CHECK(r.wall_ms < 5000);
    CHECK(r.stderr_text == "started\n");
    CHECK_THAT(r.describe(), Catch::StartsWith("timed out after"));
}

TEST_CASE("a child that crashes is reported with its signal", "[integration]") {
    const auto runner = make_child_process_runner();
    const auto r = runner->run({"/bin/sh", "-c", "kill -SEGV $$"}, 10s);
    CHECK(r.signal == SIGSEGV);
    CHECK_THAT(r.describe(), Catch::Contains("signal 11"));
}

TEST_CASE("a program that cannot start is a result, not an exception") {
    const auto runner = make_child_process_runner();
    const auto r = runner->run({"/nonexistent/cuda-harness"}, 1s);
    CHECK(r.failed_to_start);
    CHECK_THAT(r.describe(), Catch::Contains("/nonexistent/cuda-harness"));
}

TEST_CASE("a child that writes more than a pipe holds is read to the end", "[integration]") {
    const auto runner = make_child_process_runner();
    const auto r =
        runner->run({"/bin/sh", "-c", "head -c 1000000 /dev/zero | tr '\\\\0' x >&2"}, 10s);
    CHECK(r.exit_code == 0);
    CHECK(r.stderr_text.size() == 1000000);
}
