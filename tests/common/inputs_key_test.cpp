// The per-run secret behind generated inputs (issue 44): the key file's reading and writing,
// and through the real cuda-optimizer and fake-harness, a run that keys every request, keeps
// the key out of every folder a candidate's compile reads, draws a round per evidence round,
// stops a kernel that predicts the public generator, and replays its inputs bit for bit.
#include "common/inputs_key.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <set>

#include "common/counter_rng.h"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "harness/request_reader.hpp"
#include "test_support.hpp"

using namespace cuopt;
using test::optimizer_fixture;
namespace fs = std::filesystem;

namespace {

std::string key_hex(const fs::path& run) {
    const auto doc = parse_json(test::read_text(run / k_inputs_key_file), "key");
    return doc["key"].GetString();
}

// Every file under `dir` (links not followed) whose bytes contain `needle`.
std::vector<fs::path> files_holding(const fs::path& dir, const std::string& needle) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file() || e.is_symlink()) continue;
        if (test::read_text(e.path()).find(needle) != std::string::npos) out.push_back(e.path());
    }
    return out;
}

}  // namespace

TEST_CASE(
    "an inputs key is written 0600 and read back as the same 128 bits, named by a public id") {
    test::scratch_folder dir;
    const inputs_key_words key = draw_inputs_key();
    CHECK(key != draw_inputs_key());
    write_inputs_key(dir / "inputs-key.json", key);
    struct stat st {};
    REQUIRE(::stat((dir / "inputs-key.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(read_inputs_key(dir / "inputs-key.json") == key);
    const std::string id = inputs_key_id(key);
    CHECK(id.size() == 16);
    CHECK(test::read_text(dir / "inputs-key.json").find(id) == std::string::npos);
}

TEST_CASE(
    "an inputs key behind a symbolic link, too long or not hex is refused with the file and "
    "field") {
    test::scratch_folder dir;
    write_inputs_key(dir / "real.json", draw_inputs_key());
    fs::create_symlink(dir / "real.json", dir / "link.json");
    CHECK_THROWS_WITH(read_inputs_key(dir / "link.json"),
                      Catch::Contains("link.json") && Catch::Contains("symbolic link"));
    dir.write("short.json", R"({"schema_version": 1, "key": "abcd"})");
    CHECK_THROWS_WITH(read_inputs_key(dir / "short.json"),
                      Catch::Contains("short.json") && Catch::Contains("field key") &&
                          Catch::Contains("32 lowercase hex digits"));
    dir.write("upper.json", R"({"schema_version": 1, "key": "ABCDEF0123456789ABCDEF0123456789"})");
    CHECK_THROWS_WITH(read_inputs_key(dir / "upper.json"), Catch::Contains("hex digits"));
    dir.write("big.json", std::string(5000, ' '));
    CHECK_THROWS_WITH(read_inputs_key(dir / "big.json"), Catch::Contains("at most 4096 bytes"));
}

TEST_CASE("streams of different keys, rounds, seeds and domains share no values") {
    const inputs_key_words k1{1, 2, 3, 4}, k2{1, 2, 3, 5};
    std::set<std::array<std::uint32_t, 8>> keys = {
        stream_key_of(k1, 0, 11), stream_key_of(k2, 0, 11), stream_key_of(k1, 1, 11),
        stream_key_of(k1, 0, 12), stream_key_of(k1, 0, 11, 1)};
    CHECK(keys.size() == 5);
}

TEST_CASE("a run keys every request with its own secret, kept out of every attempt folder",
          "[integration]") {
    optimizer_fixture f;
    const auto r = f.run_candidates({{"a.cu", "FAKE_MS=1"}});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const fs::path key_file = f.run() / k_inputs_key_file;
    struct stat st {};
    REQUIRE(::lstat(key_file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    const std::string hex = key_hex(f.run());
    const auto run_json = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(std::string(run_json["inputs_key"]["id"].GetString()) ==
          inputs_key_id(read_inputs_key(key_file)));
    // The secret itself lies in its own file only: no request, response, record or log holds it.
    CHECK(files_holding(f.run(), hex) == std::vector<fs::path>{key_file});
    // Every request names the key, relative to its own folder, which never holds it.
    std::set<std::uint64_t> rounds;
    int requests = 0;
    for (const auto& e : fs::recursive_directory_iterator(f.run())) {
        if (e.path().filename() != "request.json") continue;
        ++requests;
        const auto req = test::read_checked_json(e.path(), "request");
        INFO(e.path());
        REQUIRE(req.HasMember("inputs_key"));
        const fs::path named = e.path().parent_path() / req["inputs_key"]["file"].GetString();
        CHECK(fs::equivalent(named, key_file));
        CHECK(e.path().parent_path() != f.run());
        if (e.path().string().find("/significance/") != std::string::npos ||
            e.path().string().find("fresh-seeds") != std::string::npos)
            rounds.insert(req["inputs_key"]["round"].GetUint64());
        else if (e.path().string().find("/candidates/") != std::string::npos)
            CHECK(req["inputs_key"]["round"].GetUint64() == 0);
    }
    CHECK(requests > 10);
    // fresh seeds (and its reference), two significance rounds (and their references): each
    // evidence round drew its own.
    CHECK(rounds.size() >= 3);
    CHECK(rounds.count(0) == 0);
    const auto replay = test::read_checked_json(f.run() / "best-case-1.json", "request");
    CHECK(std::string(replay["inputs_key"]["file"].GetString()) == k_inputs_key_file);
}

TEST_CASE("a kernel that predicts the public generator is wrong under the run's key",
          "[integration]") {
    optimizer_fixture f;
    const auto r = f.run_candidates(
        {{"a_predicts.cu", "FAKE_PREDICTS_INPUTS FAKE_MS=2"}, {"b_honest.cu", "FAKE_MS=1"}});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto history = test::read_checked_json(f.run() / "history.json", "history");
    CHECK(test::verdict_of(history, "a_predicts.cu") == "wrong_output");
    CHECK(test::verdict_of(history, "b_honest.cu") == "valid");
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(std::string(summary["best"]["label"].GetString()) == "b_honest.cu");
}

TEST_CASE("a kernel doing one launch in ten's work behind a fast median is amortised_work",
          "[integration]") {
    optimizer_fixture f;
    const auto r = f.run_candidates(
        {{"a_amortises.cu", "FAKE_AMORTISES=10 FAKE_MS=1"}, {"b_honest.cu", "FAKE_MS=1"}});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const rapidjson::Value* amortised = nullptr;
    const rapidjson::Value* honest = nullptr;
    for (const auto& c : summary["evidence"]["checked"].GetArray()) {
        const std::string label = c["label"].GetString();
        if (label == "a_amortises.cu") amortised = &c;
        if (label == "b_honest.cu") honest = &c;
    }
    REQUIRE(amortised);
    CHECK(std::string((*amortised)["gate"].GetString()) == "amortised_work");
    CHECK(std::string((*amortised)["verdict"].GetString()) == "amortised_work");
    CHECK_THAT(std::string((*amortised)["reason"].GetString()),
               Catch::Contains("mean/median") && Catch::Contains("rare launches"));
    // 9 copies at 0.02 and one launch at 10 in every 10: the sum is 10.18 / (0.02 x 10) ~ 51x.
    REQUIRE((*amortised)["launch_spreads"].Size() == 2);
    CHECK((*amortised)["launch_spreads"][0]["mean_over_median"].GetDouble() > 40);
    REQUIRE(honest);
    CHECK(std::string((*honest)["verdict"].GetString()) == "passed");
    CHECK((*honest)["launch_spreads"][0]["mean_over_median"].GetDouble() == Approx(1.0));
    CHECK(std::string(summary["best"]["label"].GetString()) == "b_honest.cu");
}

TEST_CASE("replay regenerates the run's keyed inputs: the winner's outputs match its oracle",
          "[integration]") {
    optimizer_fixture f;
    const auto r = test::run_optimizer(f.args({"--max-iterations", "1", "--no-evidence"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto replayed = test::run_program(
        CUOPT_OPTIMIZER_BINARY, {"replay", (f.run() / "best-case-1.json").string(), "--harness",
                                 CUOPT_FAKE_HARNESS_BINARY});
    INFO(replayed.output);
    CHECK(replayed.exit_code == 0);
    CHECK_THAT(replayed.output, Catch::Contains("match"));
    // Without the key the same request is refused, never run on other inputs.
    fs::rename(f.run() / k_inputs_key_file, f.run() / "elsewhere.json");
    const auto lost = test::run_program(
        CUOPT_OPTIMIZER_BINARY, {"replay", (f.run() / "best-case-1.json").string(), "--harness",
                                 CUOPT_FAKE_HARNESS_BINARY});
    CHECK(lost.exit_code != 0);
    CHECK_THAT(lost.output, Catch::Contains("inputs_key"));
}

TEST_CASE("expected files made from generated inputs keep the public generator, and say so",
          "[integration]") {
    optimizer_fixture f;
    std::string manifest = test::read_text(f.dir / "input_cases.json");
    const std::string key = "\"name\": \"correctness-31x37x29\",";
    manifest.insert(manifest.find(key) + key.size(), R"( "expected": { "c": "expected.bin" },)");
    f.dir.write("input_cases.json", manifest);
    f.dir.write_values("expected.bin", std::vector<float>(31 * 37, 1.0f));
    const auto r = test::run_optimizer(f.args({"--max-iterations", "0", "--no-evidence"}));
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("case 'correctness-31x37x29' gives expected outputs for "
                                         "generated inputs") &&
                             Catch::Contains("not keyed"));
    CHECK_FALSE(fs::exists(f.run() / k_inputs_key_file));
    CHECK(test::read_text(f.run() / "reference" / "request.json").find("inputs_key") ==
          std::string::npos);
}

TEST_CASE(
    "a keyed checked launch is the key's secret: the reader draws it, the request never says") {
    test::scratch_folder dir;
    const inputs_key_words key = draw_inputs_key();
    write_inputs_key(dir / "inputs-key.json", key);
    dir.write("a/k.cu", "extern \"C\" __global__ void k(float* y) {}");
    const auto write_request = [&](const std::string& timing, const std::string& key_field) {
        return dir.write(
            "a/req.json",
            R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "k" },
          "timing": { "warmup": 3, "iterations": 40 )" +
                timing + R"( }, )" + key_field +
                R"( "cases": [ { "name": "c", "launch": { "grid": [1], "block": [1] },
          "args": [ { "name": "y", "dtype": "f32", "count": 4, "output_file": "y.bin" } ] } ] })");
    };
    const std::string with_key = R"("inputs_key": { "file": "../inputs-key.json", "round": 99 },)";
    const request r =
        read_request(write_request(R"(, "checked_launch_keyed": true)", with_key), {}, dir.path());
    REQUIRE(r.timing.checked_launch);
    CHECK(*r.timing.checked_launch == keyed_checked_position(key, 99, 40));
    CHECK(*r.timing.checked_launch < 40);
    // Rounds give positions spread over the timed launches.
    std::set<int> positions;
    for (std::uint64_t round = 0; round < 200; ++round)
        positions.insert(keyed_checked_position(key, round, 40));
    CHECK(positions.size() > 30);
    CHECK_THROWS_WITH(
        read_request(write_request(R"(, "checked_launch_keyed": true)", ""), {}, dir.path()),
        Catch::Contains("field timing.checked_launch_keyed") &&
            Catch::Contains("without an inputs_key"));
    CHECK_THROWS_WITH(
        read_request(
            write_request(R"(, "checked_launch": 3, "checked_launch_keyed": true)", with_key), {},
            dir.path()),
        Catch::Contains("expected one of them"));
    // A link at the key's name is refused, even one that stays inside the root.
    fs::rename(dir / "inputs-key.json", dir / "real-key.json");
    fs::create_symlink("real-key.json", dir / "inputs-key.json");
    CHECK_THROWS_WITH(
        read_request(write_request("", with_key), {}, dir.path()),
        Catch::Contains("field inputs_key.file") && Catch::Contains("is a symbolic link"));
}
