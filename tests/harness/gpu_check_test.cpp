// The output check on the GPU (issue 29): element_check.h's rule gives the same tally however
// the elements are grouped (the comparison kernel's threads and blocks), and the real harness's
// comparison kernel gives the verdicts and numbers of the optimizer's CPU comparison.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "common/dtype.hpp"
#include "common/element_check.h"
#include "common/sha256.hpp"
#include "harness/expected_values.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/evaluation/output_validator.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// Random bytes for `count` elements of `t`, with some elements planted as the poison, a NaN,
// an infinity, or exactly equal between `actual` and `expected`, and the rest nudged.
struct buffers {
    std::vector<unsigned char> actual, expected;
};

buffers planted(dtype t, std::size_t count, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t size = dtype_size(t);
    buffers b;
    b.actual.resize(count * size);
    b.expected.resize(count * size);
    std::uniform_real_distribution<double> value(-4, 4);
    for (std::size_t i = 0; i < count; ++i) {
        const double e = value(rng);
        double x = e * (1 + 1e-4 * value(rng));
        const int kind = static_cast<int>(rng() % 40);
        if (kind == 1) x = e;
        const auto e_bytes = is_float(t)
                                 ? encode_scalar(t, e)
                                 : encode_integer_scalar(t, static_cast<std::int64_t>((e + 4) * 8));
        auto x_bytes = is_float(t)
                           ? encode_scalar(t, x)
                           : encode_integer_scalar(t, static_cast<std::int64_t>((x + 4) * 8));
        if (kind == 2) {
            const std::uint64_t p = poison_bits(t);
            std::memcpy(x_bytes.data(), &p, size);
        }
        if (kind == 3 && is_float(t)) x_bytes = encode_scalar(t, NAN);
        if (kind == 4 && (t == dtype::f32 || t == dtype::f64 || t == dtype::f16))
            x_bytes = encode_scalar(t, INFINITY);
        std::memcpy(&b.actual[i * size], x_bytes.data(), size);
        std::memcpy(&b.expected[i * size], e_bytes.data(), size);
    }
    return b;
}

const dtype k_types[] = {dtype::f32, dtype::f64,    dtype::f16,    dtype::bf16, dtype::i32,
                         dtype::u8,  dtype::f8e4m3, dtype::f8e5m2, dtype::i64};

}  // namespace

TEST_CASE("element_check tallies the same however its elements are grouped") {
    for (const dtype t : k_types)
        for (const tolerance tol : {tolerance{1e-3, 1e-3, 0}, tolerance{0, 2e-3, 2e-3}}) {
            const std::size_t count = 10007;
            const buffers b = planted(t, count, 7 + static_cast<int>(t));
            const cuopt_check::rule r = check_rule(t, b.expected.data(), count, tol);
            // 13 "blocks" of 8 "threads", each thread taking every 104th element, merged per
            // block pairwise and then block by block, as the kernel and the harness do.
            const int threads = 8, blocks = 13, stride = threads * blocks;
            cuopt_check::tally total = cuopt_check::empty_tally();
            for (int bl = 0; bl < blocks; ++bl) {
                std::vector<cuopt_check::tally> ts(threads, cuopt_check::empty_tally());
                for (int th = 0; th < threads; ++th)
                    for (std::size_t i = bl * threads + th; i < count; i += stride)
                        cuopt_check::check_element(
                            ts[th], r, cuopt_check::load_bits(b.actual.data(), r.kind, i),
                            cuopt_check::load_bits(b.expected.data(), r.kind, i), i);
                for (int s = threads / 2; s > 0; s /= 2)
                    for (int th = 0; th < s; ++th) cuopt_check::merge(ts[th], ts[th + s]);
                cuopt_check::merge(total, ts[0]);
            }
            const validation_result grouped =
                validation_from_tally(t, total, count, r, is_float(t) && tol.rms_atol > 0);
            const validation_result seq =
                validate_output(t, b.actual.data(), b.expected.data(), count, tol);
            INFO(dtype_name(t) << " " << seq.summary());
            CHECK(seq.mismatches > 0);
            CHECK(grouped.passed == seq.passed);
            CHECK(grouped.mismatches == seq.mismatches);
            CHECK(grouped.non_finite == seq.non_finite);
            CHECK(grouped.unwritten == seq.unwritten);
            CHECK(grouped.worst_index == seq.worst_index);
            CHECK(grouped.max_abs_error == seq.max_abs_error);
            CHECK(grouped.max_rel_error == seq.max_rel_error);
            CHECK(grouped.allowed_atol == seq.allowed_atol);
            CHECK(grouped.relative_l2_error == Approx(seq.relative_l2_error).epsilon(1e-12));
        }
}

TEST_CASE("element_check decodes every dtype as element_as_double does") {
    std::mt19937_64 rng(3);
    for (int k = 0; k < k_dtype_count; ++k) {
        const dtype t = static_cast<dtype>(k);
        REQUIRE(cuopt_check::size_of(k) == static_cast<int>(dtype_size(t)));
        REQUIRE(cuopt_check::is_float_kind(k) == is_float(t));
        for (int n = 0; n < 20000; ++n) {
            const std::uint64_t bits = rng();
            unsigned char bytes[8];
            std::memcpy(bytes, &bits, 8);
            const double a = element_as_double(t, bytes, 0);
            const double b = cuopt_check::decode(k, cuopt_check::load_bits(bytes, k, 0));
            INFO(dtype_name(t) << " bits " << bits);
            REQUIRE(((std::isnan(a) && std::isnan(b)) || a == b));
        }
    }
}

namespace {

const char* k_copy_kernel = R"(
extern "C" __global__ void copy_bytes(const unsigned char* x, unsigned char* y, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) y[i] = x[i]; }
)";

std::string number(double x) {
    std::ostringstream s;
    s.precision(17);
    s << x;
    return s.str();
}

// A request that copies `actual` into the output and checks it against `expected`.
std::string copy_request(dtype t, std::size_t count, const tolerance& tol,
                         const std::string& sha256) {
    const std::string n = std::to_string(count), type(dtype_name(t));
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "copy_bytes" },
      "timing": { "warmup": 1, "iterations": 3 },
      "cases": [ { "name": "c", "launch": { "grid": [64], "block": [256] }, "measure": true, "args": [
        { "name": "x", "dtype": ")" +
           type + R"(", "count": )" + n + R"(, "input_file": "x.bin", "timing_inputs": "as_given" },
        { "name": "y", "dtype": ")" +
           type + R"(", "count": )" + n +
           R"(, "output_file": "y.bin", "check": { "expected_file": "e.bin", "expected_sha256": ")" +
           sha256 + R"(", "atol": )" + number(tol.atol) + R"(, "rtol": )" + number(tol.rtol) +
           R"(, "rms_atol": )" + number(tol.rms_atol) + R"( } },
        { "name": "n", "dtype": "u64", "value": )" +
           std::to_string(count * dtype_size(t)) + R"( } ] } ] })";
}

}  // namespace

TEST_CASE("the harness's comparison kernel gives the CPU comparison's verdict and numbers",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    dir.write("k.cu", k_copy_kernel);
    for (const dtype t : k_types)
        for (tolerance tol : {tolerance{1e-3, 1e-3, 0}, tolerance{0, 2e-3, 2e-3}}) {
            if (!is_float(t)) tol = tolerance{0, 0, 0};  // integers compare bit for bit
            const std::size_t count = (1u << 20) + 7;    // many blocks, and a ragged end
            const buffers b = planted(t, count, 11 + static_cast<int>(t));
            dir.write("x.bin", std::string(b.actual.begin(), b.actual.end()));
            dir.write("e.bin", std::string(b.expected.begin(), b.expected.end()));
            std::filesystem::remove(dir / "y.bin");
            const std::string sha = sha256_hex(b.expected.data(), b.expected.size());
            dir.write("req.json", copy_request(t, count, tol, sha));
            const auto run = test::run_harness(
                {(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
            INFO(dtype_name(t) << ": " << run.output);
            REQUIRE(run.exit_code == 0);
            const auto resp = test::read_response(dir / "response.json");
            const auto& out = resp["cases"][0]["outputs"][0];
            REQUIRE(out.HasMember("check"));
            const auto& c = out["check"];
            const validation_result cpu =
                validate_output(t, b.actual.data(), b.expected.data(), count, tol);
            INFO(cpu.summary());
            CHECK(c["passed"].GetBool() == cpu.passed);
            CHECK(c["mismatches"].GetUint64() == cpu.mismatches);
            CHECK(c["non_finite"].GetUint64() == cpu.non_finite);
            CHECK(c["unwritten"].GetUint64() == cpu.unwritten);
            CHECK(c["worst_index"].GetUint64() == cpu.worst_index);
            CHECK(c["max_abs_error"].GetDouble() == cpu.max_abs_error);
            CHECK(c["max_rel_error"].GetDouble() == cpu.max_rel_error);
            CHECK(c["allowed_atol"].GetDouble() == cpu.allowed_atol);
            const double l2 = std::sqrt(c["diff_sq"].GetDouble() / c["ref_sq"].GetDouble());
            CHECK(l2 == Approx(cpu.relative_l2_error).epsilon(1e-12));
            // A failed output stays inspectable; the file holds what the kernel wrote.
            CHECK(std::filesystem::file_size(dir / "y.bin") == b.actual.size());
        }
}

TEST_CASE("an output that passes its GPU check is not written, and a changed oracle is refused",
          "[gpu]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    dir.write("k.cu", k_copy_kernel);
    const std::vector<float> x(4099, 1.5f);
    dir.write_values("x.bin", x);
    dir.write_values("e.bin", x);
    const std::string sha = sha256_hex(x.data(), x.size() * 4);
    dir.write("req.json", copy_request(dtype::f32, x.size(), {0, 0, 0}, sha));
    auto run =
        test::run_harness({(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const auto resp = test::read_response(dir / "response.json");
    const auto& out = resp["cases"][0]["outputs"][0];
    CHECK(out["check"]["passed"].GetBool());
    CHECK(out["file"].IsNull());
    CHECK_FALSE(std::filesystem::exists(dir / "y.bin"));

    std::vector<float> other = x;
    other[7] = 2;
    dir.write_values("e.bin", other);  // the digest in the request no longer matches
    run = test::run_harness({(dir / "req.json").string(), "--cache-dir", test::test_cache_dir()});
    CHECK(run.exit_code != 0);
    CHECK_THAT(run.output, Catch::Contains("e.bin") && Catch::Contains("expected_sha256"));
}

TEST_CASE("verdicts and reasons are the same whether the harness or the optimizer checks outputs",
          "[integration]") {
    std::map<std::string, std::vector<std::string>> by_mode;
    for (const std::string mode : {"worker", "process"}) {
        test::optimizer_fixture f;
        f.dir.write("cands/wrong.cu", f.kernel("FAKE_WRONG"));
        f.dir.write("cands/skip.cu", f.kernel("FAKE_SKIP_LAST_ROW"));
        f.dir.write("cands/honest.cu", f.kernel(""));
        const auto run = test::run_optimizer(
            f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                    "--isolation", mode, "--no-evidence"}));
        INFO(run.output);
        REQUIRE(run.exit_code == 0);
        const auto history = test::read_checked_json(f.run() / "history.json", "history");
        for (const auto& a : history["attempts"].GetArray()) {
            // Each run keys its inputs with its own secret: the values in a reason differ,
            // its words and indices must not.
            const std::regex value("-?[0-9]+\\.[0-9]+(e[-+]?[0-9]+)?");
            // An error of exactly 1 prints as "1" in one run and "1.0000002" in another.
            const std::regex whole_error("error -?[0-9]+");
            by_mode[mode].push_back(
                std::string(a["label"].GetString()) + ": " + a["verdict"].GetString() + ": " +
                std::regex_replace(std::regex_replace(a["reason"].GetString(), value, "#"),
                                   whole_error, "error #"));
            if (a["iteration"].GetInt() == 0) continue;  // the initial kernel
            for (const auto& c : a["cases"].GetArray())
                for (const auto& o : c["outputs"].GetArray()) {
                    CHECK(std::string(o["checked_on"].GetString()) ==
                          (mode == "worker" ? "gpu" : "cpu"));
                    // A passing output checked by the harness was never written.
                    if (mode == "worker" && o["passed"].GetBool()) CHECK(o["file"].IsNull());
                    if (mode == "process") CHECK(o["file"].IsString());
                }
            // The oracle never lies in an attempt's folder, which a candidate's compile reads.
            const std::string source = a["candidate"]["source_file"].GetString();
            CHECK_FALSE(std::filesystem::exists((f.run() / source).parent_path() / "expected"));
        }
    }
    CHECK(by_mode["worker"] == by_mode["process"]);
    CHECK_THAT(by_mode["worker"][1] + by_mode["worker"][2] + by_mode["worker"][3],
               Catch::Contains("wrong_output") && Catch::Contains("unwritten_output") &&
                   Catch::Contains("valid"));
}

TEST_CASE("a worker reads an oracle file once, whatever name each attempt links it under") {
    test::scratch_folder dir;
    std::vector<float> values(1000, 2.5f);
    const auto file = dir.write_values("oracle.bin", values);
    std::filesystem::create_directories(dir / "a1");
    std::filesystem::create_directories(dir / "a2");
    std::filesystem::create_hard_link(file, dir / "a1/e.bin");
    std::filesystem::create_hard_link(file, dir / "a2/e.bin");
    kernel_arg arg;
    arg.name = "c";
    arg.type = dtype::f32;
    arg.is_buffer = true;
    arg.count = values.size();
    arg.output_file = dir / "a1/c.bin";
    const std::string sha = sha256_hex(values.data(), values.size() * 4);
    const auto before = expected_cache_size();
    for (const char* name : {"a1/e.bin", "a2/e.bin", "oracle.bin"}) {
        arg.check = output_check_spec{dir / name, sha, 0, 0, 0};
        CHECK(expected_values_for(arg).sha256 == sha);
    }
    CHECK(expected_cache_size().first == before.first + 1);
    CHECK(expected_cache_size().second == before.second + values.size() * 4);

    values[3] = 7;  // rewritten in place (same inode): read again, and refused by its digest
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(values.data()), values.size() * 4);
    std::filesystem::last_write_time(
        file, std::filesystem::last_write_time(file) + std::chrono::seconds(1));
    arg.check = output_check_spec{dir / "a2/e.bin", sha, 0, 0, 0};
    CHECK_THROWS_WITH(expected_values_for(arg),
                      Catch::Contains("a2/e.bin") && Catch::Contains("expected_sha256"));
    CHECK(expected_cache_size().first == before.first);  // a refused file is not kept
    arg.check->expected_sha256 = sha256_hex(values.data(), values.size() * 4);
    CHECK(expected_values_for(arg).bytes.size() == values.size() * 4);
    CHECK(expected_cache_size().first == before.first + 1);
    forget_expected_values();
    CHECK(expected_cache_size().first == 0);
}

TEST_CASE("a check's expected file may lie anywhere in the harness's root, never outside it") {
    test::scratch_folder dir;
    const std::vector<float> values(64, 1.0f);
    dir.write_values("run/reference/outputs/c.bin", values);
    dir.write_values("elsewhere/c.bin", values);
    const std::string sha = sha256_hex(values.data(), values.size() * 4);
    auto request_with = [&](const std::string& expected) {
        return dir.write("run/candidates/a1/request.json", R"({ "schema_version": 1,
          "kernel": { "source_file": "k.cu", "entry": "k" },
          "cases": [ { "name": "c", "launch": { "grid": [1], "block": [64] }, "args": [
            { "name": "c", "dtype": "f32", "count": 64, "output_file": "c.bin",
              "check": { "expected_file": ")" + expected + R"(", "expected_sha256": ")" +
                                                               sha + R"(" } } ] } ] })");
    };
    dir.write("run/candidates/a1/k.cu", "extern \"C\" __global__ void k(float* c) {}");
    const auto file = request_with("../../reference/outputs/c.bin");
    const request req = read_request(file, {}, dir / "run");
    REQUIRE(req.cases[0].args[0].check);
    CHECK(req.cases[0].args[0].check->expected_file ==
          std::filesystem::weakly_canonical(dir / "run/reference/outputs/c.bin"));
    // Without a root, the request's own folder is the limit; and no root lets a path leave it.
    CHECK_THROWS_WITH(read_request(file),
                      Catch::Contains("expected_file") && Catch::Contains("--root"));
    request_with("../../../elsewhere/c.bin");
    CHECK_THROWS_WITH(read_request(file, {}, dir / "run"),
                      Catch::Contains("expected_file") && Catch::Contains("leaves"));
}
