// The instruction audit's parser on cuobjdump text captured from real nvcc 13.0 cubins
// (tests/fixtures/sass/, README.md there says how they were made), the audit of a cubin through
// a disassembler (a stand-in script; the real cuobjdump where it is installed), the instructions
// gate through the real cuda-optimizer on fake-harness and tests/fake-cuobjdump.sh, and the real
// cuda-harness's --cubin-out.
#include "orchestrator/evidence/instruction_audit.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "common/file_io.hpp"
#include "common/temporary_folder.hpp"
#include "in_memory_harness.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(CUOPT_SOURCE_DIR) + "/tests/fixtures/sass/" + name + ".sass");
    std::ostringstream s;
    s << in.rdbuf();
    REQUIRE(!s.str().empty());
    return s.str();
}

}  // namespace

TEST_CASE("Ampere's HMMA spellings give f16, bf16 and tf32, IMMA int8 and int4, DMMA f64") {
    const std::string text = fixture("mma_sm80");
    CHECK(parse_sass(text, "mma_f16").mma == std::map<std::string, int>{{"f16", 2}});
    CHECK(parse_sass(text, "mma_f16_f16acc").mma_opcodes.count("HMMA.16816.F16"));
    CHECK(parse_sass(text, "mma_bf16").mma == std::map<std::string, int>{{"bf16", 2}});
    CHECK(parse_sass(text, "mma_tf32").mma == std::map<std::string, int>{{"tf32", 4}});
    CHECK(parse_sass(text, "mma_s8").mma == std::map<std::string, int>{{"int8", 2}});
    CHECK(parse_sass(text, "mma_u4").mma == std::map<std::string, int>{{"int4", 1}});
    const instruction_mix f64 = parse_sass(text, "mma_f64");
    CHECK(f64.mma == std::map<std::string, int>{{"f64", 1}});
    CHECK(f64.fp64 == 1);
}

TEST_CASE("only the launched kernel and device functions count: another kernel's MMAs do not") {
    const instruction_mix m = parse_sass(fixture("mma_sm80"), "mma_bf16");
    CHECK(m.functions == std::vector<std::string>{"mma_bf16"});
    CHECK(m.other_kernels.size() == 6);
    CHECK_FALSE(satisfies_mma(m, "f16"));
    CHECK(parse_sass(fixture("mma_sm80"), "").functions.size() == 7);
    CHECK(parse_sass(fixture("mma_sm80"), "no_such_kernel").other_kernels.empty());
}

TEST_CASE("fp8 mma.sync on Ada and Blackwell consumer parts is QMMA with its e4m3/e5m2 types") {
    for (const char* name : {"fp8_sm89", "fp8_sm120"}) {
        const instruction_mix m = parse_sass(fixture(name), "mma_e5m2");
        CHECK(m.mma == std::map<std::string, int>{{"fp8", 1}});
        CHECK(m.mma_opcodes.count("QMMA.16832.F32.E5M2.E4M3"));
        CHECK(satisfies_mma(m, "fp8"));
        CHECK(satisfies_mma(m, "any"));
        CHECK_FALSE(satisfies_mma(m, "bf16"));
    }
}

TEST_CASE("Hopper's wgmma is HGMMA, IGMMA or QGMMA with the input types in the opcode") {
    const std::string text = fixture("wgmma_sm90a");
    CHECK(parse_sass(text, "wgmma_f16").mma_opcodes.count("HGMMA.64x8x16.F32"));
    CHECK(parse_sass(text, "wgmma_f16").mma.count("f16"));
    CHECK(parse_sass(text, "wgmma_bf16").mma.count("bf16"));
    CHECK(parse_sass(text, "wgmma_tf32").mma.count("tf32"));
    CHECK(parse_sass(text, "wgmma_s8").mma.count("int8"));
    const instruction_mix fp8 = parse_sass(text, "wgmma_e4m3_e5m2");
    CHECK(fp8.mma_opcodes == std::map<std::string, int>{{"QGMMA.64x8x32.F32.E4M3.E5M2", 1}});
    CHECK(satisfies_mma(fp8, "fp8"));
    CHECK_FALSE(satisfies_mma(parse_sass(text, "wgmma_bf16"), "fp8"));
}

TEST_CASE("Blackwell's tcgen05 MMAs are UTCHMMA, UTCIMMA and UTCQMMA, UTCHMMA's type is open") {
    const std::string text = fixture("tcgen05_sm100a");
    CHECK(parse_sass(text, "tc_f8f6f4").mma == std::map<std::string, int>{{"fp8", 1}});
    CHECK(parse_sass(text, "tc_i8").mma == std::map<std::string, int>{{"int8", 1}});
    const instruction_mix half = parse_sass(text, "tc_f16");
    CHECK(half.mma == std::map<std::string, int>{{"f16|bf16|tf32", 1}});
    CHECK(satisfies_mma(half, "bf16"));
    CHECK_FALSE(satisfies_mma(half, "fp8"));
}

TEST_CASE("FP64 arithmetic and conversions count as fp64, HFMA2.MMA is not an MMA") {
    const instruction_mix m = parse_sass(fixture("fp64_sm80"), "fp64_math");
    CHECK(m.fp64 == 6);  // 2 DADD, 2 DFMA, DSETP, F2F.F64.F32
    CHECK(m.mma.empty());
    const instruction_mix plain = parse_sass(fixture("plain_sm90"), "plain");
    CHECK(plain.mma.empty());
    CHECK(plain.fp64 == 0);
    CHECK(plain.total > 5);
    CHECK_FALSE(satisfies_mma(plain, "any"));
}

TEST_CASE("atomics and reductions are counted by opcode, a warp REDUX is not one") {
    const instruction_mix m = parse_sass(fixture("hazards_sm80"), "atomics");
    CHECK(m.atomic_opcodes == std::map<std::string, int>{{"ATOMG", 3}, {"ATOMS", 2}, {"RED", 4}});
    CHECK(m.atomics == 9);
    CHECK(m.clock_reads == 0);
}

TEST_CASE("reads of %clock, %clock64 and %globaltimer are found through S2R, CS2R and S2UR") {
    const instruction_mix m = parse_sass(fixture("hazards_sm80"), "clocks");
    CHECK(m.clock_reads == 4);
    CHECK(m.clock_registers == std::set<std::string>{"SR_CLOCKLO", "SR_GLOBALTIMERLO"});
    // sm_120 reads them with CS2UR (captured from cuobjdump 13.0)
    const instruction_mix b = parse_sass(
        "\t\tFunction : clocks\n"
        "        /*0030*/                   CS2UR UR6, SR_CLOCKLO ;    /* 0x00000000000675c3 */\n"
        "        /*0040*/                   CS2UR.32 UR4, SR_GLOBALTIMERHI ;\n",
        "clocks");
    CHECK(b.clock_reads == 2);
    CHECK(b.clock_registers.count("SR_GLOBALTIMERHI"));
}

TEST_CASE("device-side malloc and free are the symbol table's undefined functions") {
    const instruction_mix m = parse_sass(fixture("hazards_sm80"), "heap");
    CHECK(m.externs == std::vector<std::string>{"malloc", "free"});
    CHECK(calls_device_heap(m));
    CHECK_FALSE(calls_device_heap(parse_sass(fixture("plain_sm90"), "plain")));
    CHECK(describe_mix(m).find("calls: malloc, free") != std::string::npos);
}

TEST_CASE("a mix is described in one line with each MMA class's opcodes") {
    const instruction_mix m = parse_sass(fixture("wgmma_sm90a"), "wgmma_e4m3");
    const std::string line = describe_mix(m);
    CHECK(line.find("MMA: fp8 1 (QGMMA.64x8x32.F32.E4M3.E4M3 1)") != std::string::npos);
    CHECK(line.find("; FP64: 0; atomics: 0; clock reads: 0") != std::string::npos);
    CHECK(describe_mix(parse_sass(fixture("plain_sm90"), "plain")).find("MMA: none") !=
          std::string::npos);
}

TEST_CASE("a disassembler that fails, or prints no function, gives an audit that did not run") {
    process_result answer;  // the disassembler's, as a child would give it: no process starts
    test::scripted_runner runner([&answer](const std::vector<std::string>&) { return answer; });
    answer.exit_code = 1;
    answer.stderr_text = "cuobjdump fatal   : Invalid fatbin header\n";
    const instruction_audit bad =
        audit_cubin(runner, "/opt/cuobjdump", "/k/kernel.cubin", "k", std::chrono::seconds(10));
    CHECK_FALSE(bad.ran);
    CHECK(bad.reason == "cuobjdump exit 1: cuobjdump fatal   : Invalid fatbin header");
    REQUIRE(runner.commands().size() == 1);
    CHECK(runner.commands()[0].at(0) == "/opt/cuobjdump");
    CHECK(runner.commands()[0].back() == "/k/kernel.cubin");
    answer = process_result{};
    answer.exit_code = 0;
    answer.stdout_text = "nothing\n";
    const instruction_audit empty =
        audit_cubin(runner, "/opt/cuobjdump", "/k/kernel.cubin", "k", std::chrono::seconds(10));
    CHECK_FALSE(empty.ran);
    CHECK(empty.reason.find("printed no function") != std::string::npos);
}

TEST_CASE("a disassembler's text is parsed for the entry and the cubin's target") {
    const std::string sass =
        test::read_text(std::string(CUOPT_SOURCE_DIR) + "/tests/fixtures/sass/wgmma_sm90a.sass");
    test::scripted_runner runner([&sass](const std::vector<std::string>&) {
        process_result r;
        r.exit_code = 0;
        r.stdout_text = sass;
        return r;
    });
    const instruction_audit a =
        audit_cubin(runner, "/opt/cuobjdump", "/k/k.cubin", "wgmma_bf16", std::chrono::seconds(10));
    REQUIRE(a.ran);
    CHECK(a.arch == "sm_90a");
    CHECK(a.mix.mma.count("bf16"));
    temporary_folder dir("cuopt-audit");
    const fs::path tool = dir.path() / "cuobjdump";
    write_file_atomic(tool, "#!/bin/sh\n");
    fs::permissions(tool, fs::perms::owner_all);
    CHECK(find_disassembler(tool.string()) == tool);
    CHECK(find_disassembler((dir.path() / "none").string()).empty());
}

namespace {

const std::string k_fake_cuobjdump = std::string(CUOPT_SOURCE_DIR) + "/tests/fake-cuobjdump.sh";

// The pilot's manifest with requires.mma set.
void require_mma(test::optimizer_fixture& f, const std::string& mma) {
    std::string m = test::read_text(f.dir / "input_cases.json");
    const std::string at = "\"schema_version\": 1,";
    REQUIRE(m.find(at) != std::string::npos);
    m.insert(m.find(at) + at.size(), " \"requires\": { \"mma\": \"" + mma + "\" },");
    f.dir.write("input_cases.json", m);
}

const rapidjson::Value& checked(const rapidjson::Document& summary, const std::string& id) {
    for (const auto& c : summary["evidence"]["checked"].GetArray())
        if (id == c["attempt"].GetString()) return c;
    FAIL("attempt " << id << " was not checked");
    throw std::logic_error("unreachable");
}

std::string lines_of(const rapidjson::Value& lines) {
    std::string out;
    for (const auto& l : lines.GetArray()) out += std::string(l.GetString()) + "\n";
    return out;
}

}  // namespace

TEST_CASE(
    "a winner whose SASS lacks the manifest's required fp8 MMA is precision_path, the "
    "next one, with QGMMA e4m3, wins and its mix lands in summary.json") {
    test::optimizer_fixture f;
    require_mma(f, "fp8");
    f.dir.write("cands/a_bf16.cu",
                f.kernel("FAKE_MS=0.5 FAKE_SASS=wgmma_sm90a FAKE_ENTRY=wgmma_bf16"));
    f.dir.write("cands/b_fp8.cu",
                f.kernel("FAKE_MS=1 FAKE_SASS=wgmma_sm90a FAKE_ENTRY=wgmma_e4m3"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--significance-runs", "2", "--cuobjdump", k_fake_cuobjdump}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const auto& ev = summary["evidence"];
    CHECK(std::string(ev["requires_mma"].GetString()) == "fp8");
    const auto& loser = checked(summary, "1.0");
    CHECK(std::string(loser["gate"].GetString()) == "instructions");
    CHECK(std::string(loser["verdict"].GetString()) == "precision_path");
    CHECK_THAT(loser["reason"].GetString(),
               Catch::Contains("requires.mma is fp8, but its SASS holds no fp8 MMA") &&
                   Catch::Contains("HGMMA.64x8x16.F32.BF16"));
    CHECK(std::string(ev["winner"].GetString()) == "2.0");
    const auto& mix = checked(summary, "2.0")["instructions"];
    CHECK(mix["ran"].GetBool());
    CHECK(std::string(mix["arch"].GetString()) == "sm_90a");
    CHECK(mix["mma"]["fp8"].GetInt() == 1);
    CHECK(mix["mma_opcodes"]["QGMMA.64x8x32.F32.E4M3.E4M3"].GetInt() == 1);
    CHECK(mix["other_kernels"].Size() == 7);  // the fixture's other wgmma kernels
    CHECK_FALSE(mix["device_heap"].GetBool());
    CHECK_THAT(lines_of(summary["verdict_reasons"]), !Catch::Contains("MMA path"));
    CHECK_THAT(r.output, Catch::Contains("instructions -> precision_path") &&
                             Catch::Contains("instructions: ") && Catch::Contains("QGMMA"));
    CHECK_THAT(
        test::read_text(f.run() / "report.html"),
        Catch::Contains("Instruction mix") && Catch::Contains("QGMMA.64x8x32.F32.E4M3.E4M3"));
}

TEST_CASE("where the audit cannot run, a manifest that requires an MMA class does not end go",
          "[integration]") {
    test::optimizer_fixture f;
    require_mma(f, "fp8");
    const fs::path broken = f.dir / "cuobjdump";
    write_file_atomic(broken, "#!/bin/sh\necho 'cuobjdump fatal   : broken' >&2\nexit 1\n");
    fs::permissions(broken, fs::perms::owner_all);
    f.dir.write("cands/a_fast.cu", f.kernel("FAKE_MS=1"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--significance-runs", "2", "--cuobjdump", broken.string()}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    const auto& winner = checked(summary, "1.0");
    CHECK(std::string(winner["verdict"].GetString()) == "passed");
    CHECK_FALSE(winner["instructions"]["ran"].GetBool());
    CHECK_THAT(winner["instructions"]["reason"].GetString(),
               Catch::Contains("cuobjdump exit 1: cuobjdump fatal   : broken"));
    CHECK_THAT(lines_of(winner["warnings"]), Catch::Contains("requires.mma fp8 cannot be checked"));
    CHECK(std::string(summary["verdict"].GetString()) != "go");
    CHECK_THAT(lines_of(summary["verdict_reasons"]),
               Catch::Contains("not run: holds the required MMA path (requires.mma fp8)"));
    CHECK_THAT(r.output, Catch::Contains("why: not run: holds the required MMA path"));
}

TEST_CASE(
    "a winner that reads %clock or %globaltimer passes with a clock_read warning, and a "
    "run without requires.mma records its mix without a condition",
    "[integration]") {
    test::optimizer_fixture f;
    f.dir.write("cands/a_clock.cu", f.kernel("FAKE_MS=1 FAKE_SASS=hazards_sm80 FAKE_ENTRY=clocks"));
    const auto r = test::run_optimizer(
        f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                "--significance-runs", "2", "--cuobjdump", k_fake_cuobjdump}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto summary = test::read_checked_json(f.run() / "summary.json", "summary");
    CHECK(summary["evidence"]["requires_mma"].IsNull());
    const auto& winner = checked(summary, "1.0");
    CHECK(std::string(winner["verdict"].GetString()) == "passed");
    CHECK(winner["instructions"]["clock_reads"].GetInt() == 4);
    CHECK_THAT(lines_of(winner["warnings"]),
               Catch::Contains("clock_read: the kernel reads the clock (SR_CLOCKLO, "
                               "SR_GLOBALTIMERLO)"));
    CHECK_THAT(r.output, Catch::Contains("warning: clock_read"));
    CHECK_THAT(lines_of(summary["verdict_reasons"]), !Catch::Contains("MMA path"));
}

TEST_CASE("a bad requires.mma is refused in one line naming the file and the field",
          "[integration]") {
    test::optimizer_fixture f;
    require_mma(f, "fp9");
    const auto r = test::run_optimizer(f.args());
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.output, Catch::Contains("input_cases.json") &&
                             Catch::Contains("field requires.mma: expected one of"));
}

TEST_CASE(
    "cuda-harness --compile-only --cubin-out writes the cubin NVRTC made, without a GPU, "
    "the real cuobjdump, where installed, reads its mix") {
    test::scratch_folder dir;
    dir.write("k.cu", test::k_twice_kernel);
    dir.write_values("x.bin", std::vector<float>(64, 3.0f));
    dir.write("req.json",
              R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "twice" },
      "cases": [ { "name": "c", "launch": { "grid": [1], "block": [64] }, "args": [
        { "name": "x", "dtype": "f32", "count": 64, "input_file": "x.bin" },
        { "name": "y", "dtype": "f32", "count": 64, "output_file": "out/y.bin" },
        { "name": "n", "dtype": "i32", "value": 64 } ] } ] })");
    const fs::path cubin = dir / "kernel.cubin";
    const auto r =
        test::run_harness({(dir / "req.json").string(), "--compile-only", "--arch", "sm_90",
                           "--cubin-out", cubin.string(), "--cache-dir", test::test_cache_dir()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string bytes = test::read_text(cubin);
    REQUIRE(bytes.size() > 4);
    CHECK(bytes.substr(0, 4) ==
          "\x7f"
          "ELF");
    CHECK(
        test::run_harness({(dir / "req.json").string(), "--cubin-out", cubin.string()}).exit_code ==
        64);  // only with --compile-only
    const fs::path tool = find_disassembler("");
    if (tool.empty()) {
        WARN(
            "skipped: cuobjdump not found (PATH, $CUDAToolkit_ROOT/bin, the toolkit): the "
            "cubin's disassembly is checked where it is installed");
        return;
    }
    auto runner = make_child_process_runner();
    const instruction_audit a = audit_cubin(*runner, tool, cubin, "", std::chrono::seconds(60));
    INFO(a.reason);
    REQUIRE(a.ran);
    CHECK(a.arch == "sm_90");
    CHECK(a.mix.total > 3);
    CHECK(a.mix.mma.empty());
}

TEST_CASE("on a GPU the harness compiles for the device's own arch and its cubin is audited",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    const fs::path tool = find_disassembler("");
    if (tool.empty()) {
        WARN("skipped: cuobjdump not found beside the GPU");
        return;
    }
    test::scratch_folder dir;
    dir.write("k.cu", test::k_twice_kernel);
    dir.write_values("x.bin", std::vector<float>(64, 3.0f));
    dir.write("req.json",
              R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "twice" },
      "cases": [ { "name": "c", "launch": { "grid": [1], "block": [64] }, "args": [
        { "name": "x", "dtype": "f32", "count": 64, "input_file": "x.bin" },
        { "name": "y", "dtype": "f32", "count": 64, "output_file": "out/y.bin" },
        { "name": "n", "dtype": "i32", "value": 64 } ] } ] })");
    const fs::path cubin = dir / "kernel.cubin";
    const auto r = test::run_harness({(dir / "req.json").string(), "--compile-only", "--cubin-out",
                                      cubin.string(), "--no-cache"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto doc = test::read_response(dir / "response.json");
    const std::string arch = doc["compile"]["arch"].GetString();
    auto runner = make_child_process_runner();
    const instruction_audit a = audit_cubin(
        *runner, tool, cubin, doc["compile"]["lowered_name"].GetString(), std::chrono::seconds(60));
    INFO(a.reason);
    REQUIRE(a.ran);
    CHECK(a.arch == arch);
    CHECK(a.mix.functions.size() == 1);
    CHECK(a.mix.total > 3);
}
