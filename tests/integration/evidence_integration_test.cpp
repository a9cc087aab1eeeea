// The evidence stage through the real cuda-optimizer binary on fake-harness and
// tests/fake-compute-sanitizer.sh: the gates disqualify candidates in ranking order and
// the declared winner is the best one that passes; the re-measure, the floor and the
// stop rule land in summary.json.
#include <algorithm>
#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "common/inputs_key.hpp"
#include "test_support.hpp"

using namespace cuopt;
using test::optimizer_fixture;
namespace fs = std::filesystem;

namespace {

const rapidjson::Value* checked_entry(const rapidjson::Document& summary, const std::string& id) {
    for (const auto& c : summary["evidence"]["checked"].GetArray())
        if (id == c["attempt"].GetString()) return &c;
    return nullptr;
}

std::string gate_and_verdict(const rapidjson::Document& summary, const std::string& id) {
    const rapidjson::Value* c = checked_entry(summary, id);
    if (!c) return "(not checked)";
    return std::string((*c)["gate"].IsNull() ? "-" : (*c)["gate"].GetString()) + " " +
           (*c)["verdict"].GetString();
}

const char* k_holdout = R"({ "schema_version": 1, "cases": [
  { "name": "hold-200x130x70", "kind": "correctness", "params": { "m": 200, "n": 130, "k": 70 } },
  { "name": "hold-17x9x33", "kind": "correctness", "params": { "m": 17, "n": 9, "k": 33 } } ] })";

}  // namespace

TEST_CASE(
    "a candidate that fails the holdout loses its title to the next-best that passes, which is "
    "re-measured against the initial kernel with an A/A control",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("holdout.json", k_holdout);
    f.dir.write("cands/a_overfit.cu", f.kernel("FAKE_OVERFIT FAKE_MS=0.5"));
    f.dir.write("cands/b_honest.cu", f.kernel("FAKE_MS=1"));
    f.dir.write("cands/c_slow.cu", f.kernel("FAKE_MS=1.5"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--holdout-cases", (f.dir / "holdout.json").string(), "--significance-runs", "3"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const auto& ev = summary["evidence"];
    CHECK(ev["ran"].GetBool());
    CHECK(std::string(ev["search_best"].GetString()) == "1.0");
    CHECK(std::string(ev["winner"].GetString()) == "2.0");
    CHECK(gate_and_verdict(summary, "1.0") == "holdout holdout_failed");
    CHECK_THAT(std::string((*checked_entry(summary, "1.0"))["reason"].GetString()),
               Catch::Contains("hold-200x130x70"));
    CHECK(gate_and_verdict(summary, "2.0") == "- passed");
    CHECK_FALSE(checked_entry(summary, "3.0"));  // the winner was found before it
    // Every gate ran on the winner, the sanitizer's four tools clean.
    std::vector<std::string> ran;
    for (const auto& g : (*checked_entry(summary, "2.0"))["gates"].GetArray())
        if (g["ran"].GetBool()) ran.push_back(g["gate"].GetString());
    CHECK(ran == std::vector<std::string>{"holdout", "fresh_seeds", "repetition", "determinism",
                                          "sanitizer", "significance", "amortised_work"});
    CHECK((*checked_entry(summary, "2.0"))["sanitizer"].Size() == 4);
    CHECK(std::string((*checked_entry(summary, "2.0"))["determinism"].GetString()) == "bitwise");
    // The declared winner is what summary and best.cu carry.
    CHECK(summary["best"]["iteration"].GetInt() == 2);
    CHECK_THAT(test::read_text(f.run() / "best.cu"), Catch::Contains("FAKE_MS=1\n"));
    // Re-measured: 2 ms vs 1 ms per 256^3 is 2x and significant; the A/A control is clean.
    const auto& sig = ev["significance"];
    CHECK(sig["runs"].GetInt() == 3);
    // Each round drew its own warm-up count (11 to 26), so the checked launch moved.
    REQUIRE(sig["warmups"].Size() == 3);
    for (const auto& w : sig["warmups"].GetArray()) CHECK((w.GetInt() > 10 && w.GetInt() <= 26));
    CHECK(sig["speedup"]["ratio"].GetDouble() == Approx(2.0));
    CHECK(std::string(sig["speedup"]["verdict"].GetString()) == "faster");
    CHECK(std::string(sig["aa"]["verdict"].GetString()) == "no_significant_difference");
    CHECK(sig["reliable"].GetBool());
    CHECK(ev["headline_speedup"].GetDouble() == Approx(2.0));
    // The holdout never reached a proposer's view of the run: no attempt mentions it.
    CHECK(test::read_text(f.run() / "history.json").find("hold-") == std::string::npos);
    CHECK(fs::exists(f.run() / "holdout-reference"));
    CHECK_THAT(r.output, Catch::Contains("holdout_failed") && Catch::Contains("re-measured"));
}

TEST_CASE(
    "memoisation, a race beyond tolerance, a sanitizer race and an out-of-bounds read are "
    "disqualified by their gates, jitter within tolerance only warns",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_memo.cu", f.kernel("FAKE_MEMOISE FAKE_MS=0.3"));
    f.dir.write("cands/b_race.cu", f.kernel("FAKE_RACE FAKE_MS=0.4"));
    f.dir.write("cands/c_nondet.cu", f.kernel("FAKE_NONDETERMINISTIC_BIG FAKE_MS=0.5"));
    f.dir.write("cands/d_oob.cu", f.kernel("FAKE_OOB FAKE_MS=0.6"));
    f.dir.write("cands/e_jitter.cu", f.kernel("FAKE_NONDETERMINISTIC FAKE_MS=0.7"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--evidence-candidates", "10", "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(gate_and_verdict(summary, "1.0") == "repetition memoises_inputs");
    CHECK(gate_and_verdict(summary, "2.0") == "sanitizer sanitizer_findings");
    CHECK_THAT(std::string((*checked_entry(summary, "2.0"))["reason"].GetString()),
               Catch::Contains("racecheck: 3 error(s), 4 warning(s)"));
    CHECK(gate_and_verdict(summary, "3.0") == "determinism nondeterministic");
    CHECK(gate_and_verdict(summary, "4.0") == "sanitizer sanitizer_findings");
    CHECK_THAT(std::string((*checked_entry(summary, "4.0"))["reason"].GetString()),
               Catch::Contains("memcheck: 1160 error(s)"));
    CHECK(gate_and_verdict(summary, "5.0") == "- passed");
    CHECK(std::string(summary["evidence"]["winner"].GetString()) == "5.0");
    const auto& warnings = (*checked_entry(summary, "5.0"))["warnings"];
    REQUIRE(warnings.Size() >= 1);
    CHECK_THAT(std::string(warnings[0].GetString()), Catch::Contains("determinism"));
    CHECK((*checked_entry(summary, "1.0"))["repetition_ratio"].GetDouble() == Approx(4.0));
}

TEST_CASE("with --allow-sanitizer-findings a race only warns, --no-evidence skips the gates",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_race.cu", f.kernel("FAKE_RACE FAKE_MS=0.4"));
    auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--allow-sanitizer-findings", "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto summary = test::read_checked_json(f.run(1) / "summary.json", "summary");
    CHECK(gate_and_verdict(summary, "1.0") == "- passed");
    CHECK_THAT(std::string((*checked_entry(summary, "1.0"))["warnings"][0].GetString()),
               Catch::Contains("racecheck"));
    r = test::run_optimizer(f.args(
        {"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--no-evidence"}));
    REQUIRE(r.exit_code == 0);
    summary = test::read_checked_json(f.run(2) / "summary.json", "summary");
    CHECK_FALSE(summary["evidence"]["ran"].GetBool());
    CHECK(std::string(summary["evidence"]["skipped"].GetString()) == "--no-evidence");
    CHECK(std::string(summary["best"]["label"].GetString()) == "a_race.cu");
}

TEST_CASE(
    "a median below 0.9x the speed-of-light floor is impossible_time, fractions of speed of "
    "light are reported and --stop-at-sol ends the search",
    "[integration]") {
    optimizer_fixture f;
    // perf-256 moves 3 x 256^2 x 4 bytes: 0.197 us at the fake harness's 4000 GB/s. Every kernel
    // is compiled with the pilot's first tunables (BLOCK_X=16 BLOCK_Y=16 TILE_K=0
    // ROWS_PER_THREAD=1), which the fake harness turns into a factor 1 + 95/64: the initial kernel
    // takes 2 ms x that there, b_fine 1 ms x that.
    const double factor = 1 + 95.0 / 64;
    f.dir.write("cands/a_too_fast.cu", f.kernel("FAKE_MS=0.00001"));
    f.dir.write("cands/b_fine.cu", f.kernel("FAKE_MS=1"));
    auto r = test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                         (f.dir / "cands").string(), "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run(1) / "history.json", "history");
    CHECK(test::verdict_of(history, "a_too_fast.cu") == "impossible_time");
    CHECK_THAT(test::read_text(f.run(1) / "history.json"), Catch::Contains("speed-of-light floor"));
    const auto summary = test::read_checked_json(f.run(1) / "summary.json", "summary");
    const auto& sol = summary["evidence"]["sol"];
    REQUIRE(sol.Size() == 2);
    CHECK(std::string(sol[0]["name"].GetString()) == "perf-256");
    CHECK(sol[0]["floor_ms"].GetDouble() == Approx(3.0 * 256 * 256 * 4 / 4e12 * 1e3));
    CHECK(sol[0]["initial_fraction"].GetDouble() ==
          Approx(sol[0]["floor_ms"].GetDouble() / (2 * factor)));
    CHECK(sol[0]["best_fraction"].GetDouble() == Approx(sol[0]["floor_ms"].GetDouble() / factor));
    CHECK(sol[0]["sol_score"].GetDouble() > 0.5);
    // No L2 is known here, so the memory SOL's bytes are the floor's: 3 x 256 x 256 x 4.
    CHECK(sol[0]["traffic_bytes"].GetDouble() == 3.0 * 256 * 256 * 4);
    CHECK(sol[0]["best_memory_sol"].GetDouble() == Approx(sol[0]["best_fraction"].GetDouble()));
    CHECK_THAT(r.output, Catch::Contains("sol: perf-256"));

    r = test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                    (f.dir / "cands").string(), "--stop-at-sol", "0.00001"}));
    REQUIRE(r.exit_code == 0);
    const auto stopped = test::read_checked_json(f.run(2) / "summary.json", "summary");
    CHECK(std::string(stopped["stop_reason"].GetString()) == "near_speed_of_light");
    CHECK(test::read_checked_json(f.run(2) / "history.json", "history")["attempts"].Size() == 1);
}

TEST_CASE("when not even the initial kernel passes the gates the run says so and exits 27",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("initial.cu", f.kernel("FAKE_MS=2 FAKE_RACE"));
    f.dir.write("cands/a_racy_too.cu", f.kernel("FAKE_MS=1 FAKE_RACE"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string()}));
    INFO(r.output);
    CHECK(r.exit_code == 27);
    CHECK_THAT(r.output, Catch::Contains("no candidate passes the evidence gates"));
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["evidence"]["winner"].IsNull());
    CHECK(summary["best"].IsNull());
    CHECK(gate_and_verdict(summary, "1.0") == "sanitizer sanitizer_findings");
    CHECK(gate_and_verdict(summary, "0.0") == "sanitizer sanitizer_findings");
    CHECK_FALSE(fs::exists(f.run() / "best.cu"));
}

TEST_CASE("a holdout file that is broken stops the run before anything runs, naming the field",
          "[integration]") {
    optimizer_fixture f;
    f.dir.write("holdout.json", R"({ "schema_version": 1, "cases": [
      { "name": "h", "kind": "correctness", "params": { "m": 3, "n": 4 } } ] })");
    const auto r = test::run_optimizer(
        f.args({"--proposer", "autotune", "--holdout-cases", (f.dir / "holdout.json").string()}));
    INFO(r.output);
    CHECK(r.exit_code == 11);
    CHECK_THAT(r.output, Catch::Contains("holdout.json") && Catch::Contains("'k'"));
    CHECK_FALSE(fs::exists(f.run()));
}

TEST_CASE(
    "a kernel that computes only on the launches the search checks fails fresh_seeds, one that "
    "fails a re-measure round is disqualified, not averaged away",
    "[integration]") {
    optimizer_fixture f;
    const auto r = f.run_candidates({{"a_counts.cu", "FAKE_COUNTS_LAUNCHES FAKE_MS=0.3"},
                                     {"b_flaky.cu", "FAKE_FAILS_REMEASURE FAKE_MS=0.4"},
                                     {"c_honest.cu", "FAKE_MS=1"}});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(gate_and_verdict(summary, "1.0") == "fresh_seeds fresh_seed_failed");
    CHECK(gate_and_verdict(summary, "2.0") == "significance run_failed");
    CHECK_THAT(std::string((*checked_entry(summary, "2.0"))["reason"].GetString()),
               Catch::Contains("round 1") && Catch::Contains("wrong_output"));
    CHECK(gate_and_verdict(summary, "3.0") == "- passed");
    CHECK(std::string(summary["evidence"]["winner"].GetString()) == "3.0");
}

namespace {

// A numeric field of a case in a request or response file (0 when it has none).
std::uint64_t case_field(const fs::path& file, const std::string& name, const char* field) {
    const auto doc =
        test::read_checked_json(file, file.filename() == "request.json" ? "request" : "response");
    for (const auto& c : doc["cases"].GetArray())
        if (name == c["name"].GetString() && c.HasMember(field)) return c[field].GetUint64();
    return 0;
}

}  // namespace

TEST_CASE(
    "a kernel that computes only on the last timed launch passes the search but fails "
    "fresh_seeds, whose checked launch is drawn among the timed ones",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_last.cu", f.kernel("FAKE_LAST_LAUNCH_ONLY FAKE_MS=0.3"));
    f.dir.write("cands/b_honest.cu", f.kernel("FAKE_MS=1"));
    // 5000 timed launches cost the fake nothing; the draw lands on the last one once in ~5000.
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--iterations",
                "5000", "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["evidence"]["search_best"].GetString()) == "1.0");
    CHECK(gate_and_verdict(summary, "1.0") == "fresh_seeds fresh_seed_failed");
    const std::string reason = (*checked_entry(summary, "1.0"))["reason"].GetString();
    CHECK_THAT(reason, Catch::Contains("checked launch ") && Catch::Contains(" timed: "));
    CHECK(std::string(summary["evidence"]["winner"].GetString()) == "2.0");
    // The request never says where (a kernel's compile can read it): the position is the key's
    // secret for the round, as the optimizer computes it; the reference's single launch has the
    // checked launch's index.
    const fs::path fresh = f.run() / "evidence" / "1.0" / "fresh-seeds";
    const auto request = test::read_checked_json(fresh / "request.json", "request");
    CHECK_FALSE(request["timing"].HasMember("checked_launch"));
    REQUIRE(request["timing"]["checked_launch_keyed"].GetBool());
    const int position = keyed_checked_position(read_inputs_key(f.run() / k_inputs_key_file),
                                                request["inputs_key"]["round"].GetUint64(),
                                                request["timing"]["iterations"].GetInt());
    const int warmup = request["timing"]["warmup"].GetInt();
    CHECK(position < request["timing"]["iterations"].GetInt() - 1);
    CHECK_THAT(reason, Catch::Contains("checked launch " + std::to_string(position + 1) + " of " +
                                       std::to_string(request["timing"]["iterations"].GetInt()) +
                                       " timed"));
    const fs::path reference = f.run() / "evidence" / "1.0" / "fresh-seeds-reference";
    for (const char* name : {"perf-256", "perf-384x256x320"}) {
        const std::uint64_t checked =
            case_field(fresh / "response.json", name, "checked_launch_index");
        // The offset is drawn per round, past every launch index the search uses.
        const std::uint64_t base = case_field(fresh / "request.json", name, "launch_index_base");
        CHECK(base >= (1ull << 40));
        CHECK(base < (1ull << 41));
        CHECK(checked == base + static_cast<std::uint64_t>(warmup + position + 1));
        CHECK(case_field(reference / "request.json", name, "launch_index_base") == checked);
    }
}

TEST_CASE("inputs that never change between launches leave memoisation invisible: said, not hidden",
          "[integration]") {
    optimizer_fixture f;
    std::string m = test::read_text(f.dir / "input_cases.json");
    for (const char* from : {R"("kind": "uniform", "low": -1.5, "high": 2.5, "seed": 11)",
                             R"("kind": "normal", "mean": 0.25, "stddev": 1.0, "seed": 12)"}) {
        const auto pos = m.find(from);
        REQUIRE(pos != std::string::npos);
        m.replace(pos, std::string(from).size(),
                  R"("kind": "sequence", "start": 0.5, "step": 0.001)");
    }
    f.dir.write("input_cases.json", m);
    f.dir.write("cands/a.cu", f.kernel("FAKE_MS=1"));
    const auto r =
        test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                    (f.dir / "cands").string(), "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const rapidjson::Value* c = checked_entry(summary, "1.0");
    REQUIRE(c);
    bool repetition_skipped = false;
    for (const auto& g : (*c)["gates"].GetArray())
        repetition_skipped |=
            std::string(g["gate"].GetString()) == "repetition" && !g["ran"].GetBool();
    CHECK(repetition_skipped);
    CHECK_THAT(std::string((*c)["warnings"][0].GetString()),
               Catch::Contains("repetition: not run") && Catch::Contains("cannot be told apart"));
    // (the instructions gate too, where no cuobjdump reads the fake harness's cubin)
    CHECK_THAT(r.output, Catch::Contains("holdout, repetition)") && Catch::Contains("(not run: "));
}

TEST_CASE(
    "a sanitizer tool that never finishes disqualifies, a --sanitizer that is not there stops the "
    "run",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_dies.cu", f.kernel("FAKE_SANITIZER_DIES FAKE_MS=0.5"));
    f.dir.write("cands/b_honest.cu", f.kernel("FAKE_MS=1"));
    auto r = test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                         (f.dir / "cands").string(), "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(gate_and_verdict(summary, "1.0") == "sanitizer sanitizer_findings");
    CHECK_THAT(std::string((*checked_entry(summary, "1.0"))["reason"].GetString()),
               Catch::Contains("memcheck did not finish") && Catch::Contains("sanitizer.log"));
    CHECK(std::string(summary["evidence"]["winner"].GetString()) == "2.0");

    auto args = f.args({"--proposer", "autotune", "--max-iterations", "1"});
    args.insert(args.end(), {"--sanitizer", (f.dir / "no-such-sanitizer").string()});
    r = test::run_optimizer(args);
    CHECK(r.exit_code == 20);
    CHECK_THAT(r.output, Catch::Contains("sanitizer") && Catch::Contains("no-such-sanitizer"));
}

TEST_CASE(
    "the A/A control has a practical margin: 0.3% jitter between processes is equivalent and "
    "reliable, 5% is noisy and the run is no go",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_fast.cu", f.kernel("FAKE_MS=0.5"));
    const test::scoped_env seed("CUOPT_FAKE_JITTER_SEED", "26");
    const auto run_with = [&](const char* jitter, int n) {
        const test::scoped_env env("CUOPT_FAKE_PROCESS_JITTER", jitter);
        const auto r =
            test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                        (f.dir / "cands").string(), "--significance-runs", "5"}));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return std::make_pair(r.output,
                              test::read_checked_json(f.run(n) / "summary.json", "summary"));
    };
    SECTION("0.3%: equivalent within the 0.5% floor, the 2x winner faster, go") {
        const auto [output, summary] = run_with("0.003", 1);
        const auto& sig = summary["evidence"]["significance"];
        CHECK(std::string(sig["aa_class"].GetString()) == "equivalent");
        CHECK(sig["reliable"].GetBool());
        CHECK(sig["margin"].GetDouble() >= 0.005);
        CHECK(sig["margin"].GetDouble() < 0.03);
        const auto& c = sig["cases"][0];
        REQUIRE(c["process_spread"].IsNumber());
        CHECK(c["process_spread"].GetDouble() > 0);  // the jitter was measured
        CHECK(c["margin"].GetDouble() ==
              Approx(std::max(0.005, 3 * c["process_spread"].GetDouble())));
        CHECK(std::string(c["aa_class"].GetString()) == "equivalent");
        CHECK(std::string(sig["speedup"]["verdict"].GetString()) == "faster");
        // No holdout or sanitizer here, so no go, but not for the A/A.
        for (const auto& why : summary["verdict_reasons"].GetArray())
            CHECK_THAT(std::string(why.GetString()), !Catch::Contains("A/A"));
        CHECK_THAT(output,
                   Catch::Contains("A/A equivalent: ") && Catch::Contains("(verdicts reliable)"));
    }
    SECTION("5%: noisy (the margin the spread gives is beyond 3%), not reliable, no go") {
        const auto [output, summary] = run_with("0.05", 1);
        const auto& sig = summary["evidence"]["significance"];
        CHECK(std::string(sig["aa_class"].GetString()) == "noisy");
        CHECK_FALSE(sig["reliable"].GetBool());
        CHECK(sig["margin"].GetDouble() > 0.03);
        CHECK(std::string(summary["verdict"].GetString()) == "no_go");
        bool aa_reason = false;
        for (const auto& why : summary["verdict_reasons"].GetArray())
            aa_reason =
                aa_reason || std::string(why.GetString()).find("noisy") != std::string::npos;
        CHECK(aa_reason);
        CHECK_THAT(output, Catch::Contains("(verdicts NOT reliable)") &&
                               Catch::Contains("beyond the practical ±3.00%"));
        const auto* winner = checked_entry(summary, summary["evidence"]["winner"].GetString());
        REQUIRE(winner);
        CHECK_THAT(test::read_text(f.run() / "summary.json"),
                   Catch::Contains("the A/A control is not equivalent"));
    }
}

TEST_CASE(
    "the top candidates are re-measured before the gates: a lucky search draw loses its rank "
    "to the truly faster one, with the margin over the runner-up",
    "[integration]") {
    optimizer_fixture f;
    // The search times a at 0.4 (lucky), b at 0.45, c at 0.6; re-measured a is 0.5.
    f.dir.write("cands/a_lucky.cu", f.kernel("FAKE_MS=0.5 FAKE_SEARCH_LUCK=0.8"));
    f.dir.write("cands/b_fast.cu", f.kernel("FAKE_MS=0.45"));
    f.dir.write("cands/c_slower.cu", f.kernel("FAKE_MS=0.6"));
    const auto run = [&](const char* rerank, int n) {
        const auto r = test::run_optimizer(
            f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(), "--rerank",
                    rerank, "--significance-runs", "2"}));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        return std::make_pair(r.output,
                              test::read_checked_json(f.run(n) / "summary.json", "summary"));
    };
    SECTION("--rerank 3 (the default): b is re-measured fastest, gated first and declared") {
        const auto [output, summary] = run("3", 1);
        const auto& ev = summary["evidence"];
        CHECK(std::string(ev["search_best"].GetString()) == "1.0");
        CHECK(ev["rerank_rounds"].GetInt() == 3);
        REQUIRE(ev["reranked"].Size() == 3);
        CHECK(std::string(ev["reranked"][0]["attempt"].GetString()) == "2.0");
        CHECK(std::string(ev["reranked"][1]["attempt"].GetString()) == "1.0");
        CHECK(std::string(ev["reranked"][2]["attempt"].GetString()) == "3.0");
        CHECK(ev["reranked"][0]["speedup"]["ratio"].GetDouble() == Approx(2 / 0.45));  // initial: 2
        CHECK(ev["reranked"][1]["speedup"]["ratio"].GetDouble() == Approx(4.0));
        CHECK(std::string(ev["winner"].GetString()) == "2.0");
        CHECK(std::string(ev["checked"][0]["attempt"].GetString()) == "2.0");
        const auto& margin = ev["winner_over_runner_up"];
        REQUIRE(margin.IsObject());
        CHECK(std::string(margin["runner_up"].GetString()) == "1.0");
        CHECK(margin["estimate"]["ratio"].GetDouble() == Approx(0.5 / 0.45));
        CHECK(std::string(margin["estimate"]["verdict"].GetString()) == "faster");
        CHECK(fs::exists(f.run() / "evidence" / "rerank" / "round-3" / "initial"));
        CHECK_THAT(output, Catch::Contains("evidence: re-ranked over 3 interleaved rounds:") &&
                               Catch::Contains("as fast as the runner-up a_lucky.cu"));
    }
    SECTION("--rerank 1: the search's order stands and the lucky one is declared") {
        const auto [output, summary] = run("1", 1);
        const auto& ev = summary["evidence"];
        CHECK(ev["rerank_rounds"].GetInt() == 0);
        CHECK(ev["reranked"].Size() == 0);
        CHECK(ev["winner_over_runner_up"].IsNull());
        CHECK(std::string(ev["winner"].GetString()) == "1.0");
        CHECK_THAT(output, !Catch::Contains("re-ranked"));
    }
}

TEST_CASE(
    "the evidence stage's timed runs are summarised like the search's, and a re-measure timed "
    "while the GPU throttled is flagged",
    "[integration]") {
    optimizer_fixture f;
    f.dir.write("cands/a_hot.cu", f.kernel("FAKE_MS=0.5 FAKE_THROTTLED"));
    const auto r =
        test::run_optimizer(f.args({"--proposer", "files", "--candidates",
                                    (f.dir / "cands").string(), "--significance-runs", "2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const auto& ev = summary["evidence"];
    REQUIRE(ev["timer"].IsObject());
    CHECK(std::string(ev["timer"]["name"].GetString()) == "cupti");
    REQUIRE(ev["gpu_state"].IsObject());
    CHECK(ev["gpu_state"]["throttled"].Size() > 0);
    CHECK(ev["significance"]["throttled_cases"].GetInt() > 0);
    const auto* winner = checked_entry(summary, "1.0");
    REQUIRE(winner);
    bool flagged = false;
    for (const auto& w : (*winner)["warnings"].GetArray())
        flagged = flagged ||
                  std::string(w.GetString()).find("timed while the GPU throttled (sw_power_cap)") !=
                      std::string::npos;
    CHECK(flagged);
    CHECK_THAT(r.output, Catch::Contains("evidence timer (simulated): cupti") &&
                             Catch::Contains("evidence gpu (simulated): SM") &&
                             Catch::Contains("measured cases timed while throttled"));
}
