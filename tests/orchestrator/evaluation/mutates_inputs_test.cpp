// A kernel that writes into an argument the manifest declares `input` is mutates_inputs,
// whatever its outputs: through the real cuda-optimizer and fake-harness, whose
// FAKE_WRITES_INPUT[=ARG] reports what the real harness's input guard would.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace cuopt;

namespace {

using test::optimizer_fixture;
using test::verdict_of;

// The optimizer's progress lines with their wrapped reasons joined back into one line each.
std::string flattened(std::string text) {
    for (std::size_t p; (p = text.find("\n    ")) != std::string::npos;) text.replace(p, 5, " ");
    return text;
}

std::string reason_of(const rapidjson::Document& history, const std::string& label) {
    for (const auto& a : history["attempts"].GetArray())
        if (label == a["label"].GetString()) return a["reason"].GetString();
    return "(no attempt " + label + ")";
}

std::vector<std::string> files_run(const optimizer_fixture& f) {
    return f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--no-evidence"});
}

// The pilot's manifest with c an in-place argument (`inout`: random values in, C out).
void make_c_inout(const optimizer_fixture& f) {
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    const std::string output = R"("name": "c", "dtype": "f32", "kind": "output")";
    REQUIRE(manifest.find(output) != std::string::npos);
    manifest.replace(manifest.find(output), output.size(),
                     R"("name": "c", "dtype": "f32", "kind": "inout")");
    f.dir.write("input_cases.json", manifest);
}

}  // namespace

TEST_CASE(
    "a faster kernel with right outputs that writes into a declared input is mutates_inputs, "
    "the reason naming the case and the argument",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_writes_a.cu", f.kernel("FAKE_WRITES_INPUT FAKE_MS=0.5"));
    f.dir.write("cands/b_writes_b.cu", f.kernel("FAKE_WRITES_INPUT=b FAKE_MS=0.5"));
    f.dir.write("cands/c_writes_its_output.cu", f.kernel("FAKE_WRITES_INPUT=c FAKE_MS=1"));
    const auto r = test::run_optimizer(files_run(f));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(verdict_of(history, "initial.cu") == "valid");
    CHECK(verdict_of(history, "a_writes_a.cu") == "mutates_inputs");
    CHECK(reason_of(history, "a_writes_a.cu") ==
          "case 'correctness-31x37x29': the kernel wrote into input 'a' (declared input, not "
          "inout)");
    CHECK(verdict_of(history, "b_writes_b.cu") == "mutates_inputs");
    CHECK_THAT(reason_of(history, "b_writes_b.cu"), Catch::Contains("into input 'b'"));
    CHECK(verdict_of(history, "c_writes_its_output.cu") == "valid");  // c is an output
    CHECK_THAT(flattened(r.output),
               Catch::Contains("a_writes_a.cu  mutates_inputs  (best 1.00x): case "
                               "'correctness-31x37x29': the kernel wrote into input 'a'"));
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["counts"]["rejected"]["mutates_inputs"].GetInt() == 2);
    CHECK(std::string(summary["best"]["label"].GetString()) == "c_writes_its_output.cu");
    // The fake harness's response for a_writes_a.cu names 'a' in every case, schema and all.
    const auto response =
        test::read_response(f.run() / "candidates/iter-01/attempt-0/response.json");
    for (const auto& c : response["cases"].GetArray()) {
        REQUIRE(c["inputs_changed"].Size() == 1);
        CHECK(std::string(c["inputs_changed"][0].GetString()) == "a");
    }
}

TEST_CASE("an inout argument the kernel writes in place is no input that changed",
          "[integration]") {
    optimizer_fixture f;
    make_c_inout(f);
    f.dir.write("cands/a_in_place.cu", f.kernel("FAKE_WRITES_INPUT=c FAKE_MS=1"));
    f.dir.write("cands/b_writes_a.cu", f.kernel("FAKE_WRITES_INPUT=a FAKE_MS=1"));
    const auto r = test::run_optimizer(files_run(f));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(verdict_of(history, "a_in_place.cu") == "valid");
    CHECK(verdict_of(history, "b_writes_a.cu") == "mutates_inputs");
}

TEST_CASE("an initial kernel that writes into its input stops the run naming case and argument",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_MS=2 FAKE_WRITES_INPUT=b"));
    const auto r = test::run_optimizer(f.args({"--max-iterations", "0", "--no-evidence"}));
    INFO(r.output);
    CHECK(r.exit_code == 21);
    CHECK_THAT(flattened(r.output),
               Catch::Contains("initial.cu  mutates_inputs: case 'correctness-31x37x29': the "
                               "kernel wrote into input 'b' (declared input, not inout)"));
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK_THAT(std::string(summary["error"].GetString()),
               Catch::StartsWith("the initial kernel fails: mutates_inputs: case "
                                 "'correctness-31x37x29': the kernel wrote into input 'b'"));
}

TEST_CASE("a reference that writes into its input is refused as an oracle", "[integration]") {
    optimizer_fixture f;
    f.dir.write("reference.cu", f.kernel("FAKE_WRITES_INPUT=a"));
    const auto r = test::run_optimizer(f.args({"--no-evidence"}));
    INFO(r.output);
    CHECK(r.exit_code == 22);
    CHECK_THAT(flattened(r.output), Catch::Contains("the kernel wrote into input 'a'"));
}
