// CUB's segmented_sum vendor requests ("vendor": {"library": "cub"}) on the CPU: what the
// request reader accepts and refuses (by field), the writer's round trip, loading the bundled
// launcher libcuopt_cub.so (no GPU needed) and the confined harness's leave to read it, the
// launcher's buffer checks against a stand-in entry point, and the fake harness's CPU row sums
// read back through the response reader.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "common/json_document.hpp"
#include "harness/cub_launcher.hpp"
#include "harness/cub_library.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;
using test::replaced;

namespace {

// rows = 4, cols = 8: x (32 f32 from a file), y (4, written), an f16 h, an f32 scalar s.
std::string sum_request(const std::string& call_extra = "") {
    return R"({ "schema_version": 1, "vendor": { "library": "cub" },
  "timing": { "warmup": 1, "iterations": 3 },
  "cases": [ { "name": "rows", "vendor_call": { "op": "segmented_sum", "layout": "row_major",
      "rows": 4, "cols": 8, "x": "x", "y": "y")" +
           call_extra + R"( }, "args": [
    { "name": "x", "dtype": "f32", "count": 32, "input_file": "x.bin" },
    { "name": "y", "dtype": "f32", "count": 4, "output_file": "y.bin" },
    { "name": "h", "dtype": "f16", "count": 32, "generator": {"kind": "constant", "value": 1} },
    { "name": "s", "dtype": "f32", "value": 2 } ] } ] })";
}

struct fixture : test::request_folder {
    fixture() {
        std::vector<float> x(32);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 3.0f;
        dir.write_values("x.bin", x);
    }
};

const std::string k_field = "req.json: field cases[0].vendor_call";

}  // namespace

TEST_CASE("a segmented_sum request is read with library cub, its rows, cols, x and y") {
    fixture f;
    const request r = f.read(sum_request());
    REQUIRE(r.vendor);
    CHECK(*r.vendor == vendor_library::cub);
    const vendor_call& v = *r.cases[0].vendor;
    CHECK(v.op == vendor_op::segmented_sum);
    CHECK(v.layout == matrix_layout::row_major);
    CHECK(v.rows == 4);
    CHECK(v.cols == 8);
    CHECK(v.x == "x");
    CHECK(v.y == "y");
    CHECK(v.a.empty());
    CHECK(v.m == 0);
}

TEST_CASE("a segmented_sum vendor_call whose buffers do not suit it is refused by field") {
    fixture f;
    CHECK(f.error_of(replaced(sum_request(), R"("x": "x")", R"("x": "q")")) ==
          k_field + ".x: 'q' names no argument of this case; expected a buffer arg's name");
    CHECK(f.error_of(replaced(sum_request(), R"("x": "x")", R"("x": "s")")) ==
          k_field + ".x: 's' is a scalar; expected a buffer");
    CHECK(f.error_of(replaced(sum_request(), R"("x": "x")", R"("x": "h")")) ==
          k_field + ".x: 'h' is f16 but segmented_sum needs f32 buffers");
    CHECK(f.error_of(replaced(sum_request(), R"("cols": 8)", R"("cols": 9)")) ==
          k_field + ".x: 'x' has count 32 but segmented_sum with rows=4, cols=9 needs " +
              "rows*cols = 36");
    CHECK(f.error_of(replaced(sum_request(), R"("count": 4)", R"("count": 5)")) ==
          k_field + ".y: 'y' has count 5 but segmented_sum with rows=4, cols=8 needs rows = 4");
    CHECK(f.error_of(replaced(sum_request(), R"("output_file": "y.bin")",
                              R"("generator": {"kind": "constant", "value": 0})")) ==
          k_field + ".y: 'y' has no output_file; y is written");
    // In place (cols 1, so x's count is y's): y needs a buffer of its own.
    const std::string in_place =
        replaced(replaced(replaced(sum_request(), R"("cols": 8, "x": "x", "y": "y")",
                                   R"("cols": 1, "x": "y", "y": "y")"),
                          R"("count": 4, "output_file": "y.bin")",
                          R"("count": 4, "input_file": "x.bin", "output_file": "y.bin")"),
                 R"("name": "x", "dtype": "f32", "count": 32)",
                 R"("name": "x", "dtype": "f32", "count": 4)");
    f.dir.write_values("x.bin", std::vector<float>(4, 1.0f));
    CHECK(f.error_of(in_place) ==
          k_field + ".y: 'y' is also the input; y needs a buffer of its own");
}

TEST_CASE("segmented_sum takes rows, cols, x and y, CUB's library and row_major only") {
    fixture f;
    CHECK(f.error_of(replaced(sum_request(), R"("cols": 8, )", "")) ==
          k_field + ": missing required field 'cols'; segmented_sum takes rows, cols, x and y");
    CHECK(f.error_of(sum_request(R"(, "m": 4)")) ==
          k_field + ".m: segmented_sum takes rows, cols, x and y, not m");
    CHECK(f.error_of(sum_request(R"(, "scale_a": "s")")) ==
          k_field + ".scale_a: segmented_sum takes no scales; only e4m3_gemm scales its product");
    CHECK(f.error_of(replaced(sum_request(), R"("cub")", R"("cublas")")) ==
          k_field +
              ".op: segmented_sum is a cub op but the library is cublas; expected one of sgemm, "
              "dgemm, hgemm");
    CHECK(f.error_of(replaced(sum_request(), R"("row_major")", R"("col_major")")) ==
          k_field +
              ".layout: segmented_sum takes only row_major (x row-major rows x cols, one sum per "
              "row into y); got col_major");
    // A gemm takes none of segmented_sum's fields, and cub no gemm.
    const std::string gemm =
        replaced(replaced(sum_request(), R"("op": "segmented_sum")", R"("op": "sgemm")"),
                 R"("rows": 4, "cols": 8, "x": "x", "y": "y")",
                 R"("m": 4, "n": 1, "k": 8, "a": "x", "b": "x", "c": "y", "rows": 4)");
    CHECK(f.error_of(replaced(gemm, R"("cub")", R"("cublas")")) ==
          k_field + ".rows: sgemm takes m, n, k, a, b and c, not rows");
    CHECK(f.error_of(gemm) ==
          k_field +
              ".op: sgemm is a cublas op but the library is cub; expected one of "
              "segmented_sum");
}

TEST_CASE("a segmented_sum request survives the orchestrator's request writer") {
    fixture f;
    const std::string text = write_request_json(f.read(sum_request()));
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    const auto doc = parse_json(text, "written");
    const auto& call = doc["cases"][0]["vendor_call"];
    CHECK_FALSE(call.HasMember("m"));
    CHECK_FALSE(call.HasMember("a"));
    CHECK(call["rows"].GetInt() == 4);
    const request back = f.read(text);
    REQUIRE(back.vendor);
    CHECK(*back.vendor == vendor_library::cub);
    const vendor_call& v = *back.cases[0].vendor;
    CHECK(v.op == vendor_op::segmented_sum);
    CHECK(v.cols == 8);
    CHECK(v.x == "x");
    CHECK(v.y == "y");
}

TEST_CASE("the CUB launcher loads without a GPU, and a failure names every path tried") {
    const cub_api api = load_cub({CUOPT_CUB_LIBRARY});
    CHECK(api.file == CUOPT_CUB_LIBRARY);
    CHECK_THAT(api.version, Catch::Matches("[1-9][0-9]*\\.[0-9]+\\.[0-9]+"));
    CHECK(cub_version_text(300001) == "3.0.1");
    CHECK(cub_version_text(201100) == "2.11.0");
    CHECK_THAT(describe_cub_status(api, 1), Catch::StartsWith("cudaErrorInvalidValue ("));
    // Sizes below 1 are refused before CUB (or the runtime) is asked anything.
    std::size_t bytes = 0;
    CHECK(api.row_sum_f32(nullptr, nullptr, 0, 8, nullptr, &bytes, nullptr) == 1);
    CHECK(api.row_sum_f32(nullptr, nullptr, 4, 8, nullptr, nullptr, nullptr) == 1);
    try {
        load_cub({"/nonexistent/libcuopt_cub.so", "libcuopt_cub-nope.so"});
        FAIL("loaded a library that does not exist");
    } catch (const vendor_library_error& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("CUB launcher (libcuopt_cub.so) not found: tried "
                                               "/nonexistent/libcuopt_cub.so (") &&
                                 Catch::Contains("), libcuopt_cub-nope.so ("));
    }
    // Beside the running binary, and nowhere else (never the loader's search path).
    REQUIRE(cub_library_paths().size() == 1);
    CHECK(std::filesystem::path(cub_library_paths()[0]).filename() == "libcuopt_cub.so");
    CHECK(std::filesystem::path(cub_library_paths()[0]).is_absolute());
}

TEST_CASE("the confined harness may read the CUB launcher beside it: that one file") {
    const auto rules = harness_rules(std::filesystem::temp_directory_path(), {}, true);
    const std::string beside = cub_library_paths()[0];
    const auto rule = std::find_if(rules.begin(), rules.end(),
                                   [&](const landlock_rule& r) { return r.path == beside; });
    REQUIRE(rule != rules.end());
    CHECK(rule->access == landlock_access::read);
    // Not its folder: the harness's own folder stays closed but for that file.
    CHECK(std::none_of(rules.begin(), rules.end(), [&](const landlock_rule& r) {
        return r.path == std::filesystem::path(beside).parent_path();
    }));
}

namespace {

// A stand-in for the launcher's entry point: records each call; the size query asks for no
// storage (so nothing is allocated without a GPU); `g_status` is what every call returns.
struct row_sum_call {
    const float* x;
    float* y;
    long long rows, cols;
    bool query;
    CUstream stream;
};
std::vector<row_sum_call> g_calls;
int g_status = 0;
int fake_row_sum(const float* x, float* y, long long rows, long long cols, void* temp,
                 std::size_t* temp_bytes, CUstream_st* stream) {
    g_calls.push_back({x, y, rows, cols, temp == nullptr && *temp_bytes == 0, stream});
    if (!temp) *temp_bytes = 0;
    return g_status;
}
const char* fake_name(int) {
    return "cudaErrorLaunchOutOfResources";
}
const char* fake_text(int) {
    return "too many resources requested for launch";
}

// x (f32, 32 with an input), y (f32, 4, written), z (f64, 4, written) as the case runner holds
// them (no device memory).
struct live_case {
    std::vector<kernel_arg> args;
    std::vector<live_buffer> buffers;
    run_case rc;
    live_case() {
        auto buffer = [](const char* name, dtype t, std::uint64_t count, bool output) {
            kernel_arg a;
            a.name = name, a.type = t, a.is_buffer = true, a.count = count;
            if (output)
                a.output_file = std::string(name) + ".bin";
            else
                a.input_file = std::string(name) + ".bin";
            return a;
        };
        args = {buffer("x", dtype::f32, 32, false), buffer("y", dtype::f32, 4, true),
                buffer("z", dtype::f64, 4, true)};
        for (const kernel_arg& a : args) buffers.emplace_back().arg = &a;
        vendor_call v;
        v.op = vendor_op::segmented_sum;
        v.rows = 4, v.cols = 8, v.x = "x", v.y = "y";
        rc.name = "rows";
        rc.vendor = v;
    }
    vendor_call& call() { return *rc.vendor; }
};

}  // namespace

TEST_CASE("the CUB launcher's bind checks x and y before it calls CUB, by name and count") {
    live_case c;
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) == "");
    c.call().cols = 9;
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) ==
          "x 'x' has 32 elements; expected rows*cols = 36");
    c.call().cols = 8;
    c.call().y = "z";
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) == "y 'z' is f64; expected f32");
    c.call().y = "x";
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) ==
          "y 'x' has 32 elements; expected rows = 4");
    c.call().y = "q";
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) == "y 'q' names no buffer of this case");
    c.call().y = "y";
    c.call().x = "y";
    c.call().cols = 1;
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) == "x 'y' has no input; x is read");
    c.call().x = "x";
    c.call().rows = 0;
    CHECK(row_sum_buffer_problem(c.call(), c.buffers) ==
          "rows=0, cols=1; expected both at least 1");

    cub_api api;
    api.row_sum_f32 = fake_row_sum;
    api.error_name = fake_name;
    api.error_string = fake_text;
    cub_launcher launcher(api);
    g_calls.clear();
    try {
        launcher.bind(c.rc, c.buffers, nullptr);
        FAIL("bound a call with 0 rows");
    } catch (const cuda_error& e) {
        CHECK(std::string(e.what()) ==
              "cub:segmented_sum: rows=0, cols=1; expected both at least 1");
        CHECK_FALSE(e.sticky());
    }
    CHECK(g_calls.empty());  // CUB was never asked
}

TEST_CASE("the CUB launcher sizes CUB's storage once in bind, then each launch is one call") {
    live_case c;
    cub_api api;
    api.row_sum_f32 = fake_row_sum;
    api.error_name = fake_name;
    api.error_string = fake_text;
    cub_launcher launcher(api);
    CHECK(launcher.entry(c.rc) == "cub:segmented_sum");
    CHECK(launcher.single_kernel());
    g_calls.clear();
    g_status = 0;
    CUstream stream = reinterpret_cast<CUstream>(std::uintptr_t{0x1000});
    const std::function<void()> launch = launcher.bind(c.rc, c.buffers, stream);
    REQUIRE(g_calls.size() == 1);
    CHECK(g_calls[0].query);
    launch();
    launch();
    REQUIRE(g_calls.size() == 3);
    CHECK(g_calls[2].rows == 4);
    CHECK(g_calls[2].cols == 8);
    CHECK(g_calls[2].stream == stream);
    g_status = 7;  // cudaErrorLaunchOutOfResources
    try {
        launch();
        FAIL("a failed CUB call went unnoticed");
    } catch (const cuda_error& e) {
        CHECK(std::string(e.what()) ==
              "cub::DeviceSegmentedReduce::Sum failed: cudaErrorLaunchOutOfResources (too many "
              "resources requested for launch)");
    }
    g_status = 0;
}

TEST_CASE("the fake harness sums a vendor segmented_sum's rows on the CPU", "[integration]") {
    fixture f;
    f.dir.write("req.json", sum_request());
    const auto r = test::run_program(CUOPT_FAKE_HARNESS_BINARY, {(f.dir / "req.json").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const harness_response resp = read_response(f.dir / "response.json");
    REQUIRE(resp.vendor);
    CHECK(resp.vendor->library == "cub");
    REQUIRE(resp.cases.size() == 1);
    CHECK(resp.cases[0].entry == "cub:segmented_sum");
    const auto x = test::read_values<float>(f.dir / "x.bin");
    const auto y = test::read_values<float>(f.dir / "y.bin");
    REQUIRE(y.size() == 4);
    for (int row = 0; row < 4; ++row) {
        double sum = 0;
        for (int j = 0; j < 8; ++j) sum += x[row * 8 + j];
        CHECK(y[row] == static_cast<float>(sum));
    }
    CHECK(y[3] != y[0]);  // the rows differ: a sum of the wrong row shows
}
