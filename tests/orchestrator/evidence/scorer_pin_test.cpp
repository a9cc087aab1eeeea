// The scorer pinned (issue 44): the files that decide a verdict are hashed before the search
// and again before the verdict; one that changed ends the run in harness_error naming it.
#include "orchestrator/evidence/scorer_pin.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "test_support.hpp"

using namespace cuopt;
using test::optimizer_fixture;
namespace fs = std::filesystem;

TEST_CASE("a pinned file that keeps its bytes passes, one rewritten, removed or added is named") {
    test::scratch_folder dir;
    dir.write("oracle.bin", "abcd");
    dir.write("manifest.json", "{}");
    scorer_pin pin;
    pin.add("oracle file of perf c", dir / "oracle.bin");
    pin.add("manifest", dir / "manifest.json");
    pin.add("holdout", dir / "holdout.json");  // not there: must stay so
    CHECK(pin.changes().empty());
    dir.write("manifest.json", "{}");  // rewritten with the same bytes: unchanged
    CHECK(pin.changes().empty());
    dir.write("oracle.bin", "abce");
    dir.write("holdout.json", "{}");
    const auto changes = pin.changes();
    REQUIRE(changes.size() == 2);
    CHECK_THAT(changes[0], Catch::StartsWith("harness_error: the oracle file of perf c ") &&
                               Catch::Contains("oracle.bin changed during the run"));
    CHECK_THAT(changes[1], Catch::Contains("holdout") && Catch::Contains("unreadable when pinned"));
}

TEST_CASE("a harness binary replaced during the run ends it in harness_error, without a verdict",
          "[integration]") {
    optimizer_fixture f;
    // A harness that rewrites itself whenever it runs a request (not for --device-info, the
    // preflight's probe or compiles): the binary the verdict rests on is not the one pinned.
    const fs::path harness = f.dir.write(
        "harness.sh", std::string("#!/bin/sh\ncase \"$*\" in *--device-info*|*--compile-only*) ;; "
                                  "*) echo '# ran' >> \"$0\";; esac\nexec ") +
                          CUOPT_FAKE_HARNESS_BINARY + " \"$@\"\n");
    fs::permissions(harness, fs::perms::owner_all);
    std::vector<std::string> args = f.args({"--max-iterations", "1", "--significance-runs", "2"});
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--harness") args[i + 1] = harness.string();
    const auto r = test::run_optimizer(args);
    INFO(r.output);
    CHECK(r.exit_code == 31);
    CHECK_THAT(r.output, Catch::Contains("harness_error: the harness binary " + harness.string() +
                                         " changed during the run"));
    CHECK_FALSE(fs::exists(f.run() / "summary.json"));
    CHECK_THAT(test::read_text(f.run() / "run.json"),
               Catch::Contains("harness_error: the harness binary"));
}
