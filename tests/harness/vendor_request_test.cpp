// Vendor-baseline requests ("vendor": {"library": "cublas"} or "cublaslt", a vendor_call per
// case) on the CPU: what the request reader accepts and refuses (by field), cuBLASLt's FP8
// e4m3_gemm included, the writer's round trip, loading cuBLAS and cuBLASLt (no GPU needed),
// the real harness without a GPU, and the fake harness's CPU matmuls read back through the
// orchestrator's response reader.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "common/dtype.hpp"
#include "common/json_document.hpp"
#include "harness/cublas_library.hpp"
#include "harness/cublaslt_library.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "request_fixture.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// m = 8, n = 4, k = 2: A (16 f32 from a file), B (8, generated), C (32, written).
std::string vendor_request(const std::string& call_extra = "", const std::string& top = "") {
    return R"({ "schema_version": 1, "vendor": { "library": "cublas" }, )" + top +
           R"("timing": { "warmup": 1, "iterations": 3 },
  "cases": [ { "name": "mm", "vendor_call": { "op": "sgemm", "layout": "row_major",
      "m": 8, "n": 4, "k": 2, "a": "a", "b": "b", "c": "c")" +
           call_extra + R"( }, "args": [
    { "name": "a", "dtype": "f32", "count": 16, "input_file": "a.bin" },
    { "name": "b", "dtype": "f32", "count": 8, "generator": {"kind": "uniform", "low": -1, "high": 1, "seed": 3} },
    { "name": "c", "dtype": "f32", "count": 32, "output_file": "c.bin" },
    { "name": "h", "dtype": "f16", "count": 16, "generator": {"kind": "constant", "value": 1} },
    { "name": "s", "dtype": "f32", "value": 2 } ] } ] })";
}

// e4m3_gemm, m = 32, n = 16, k = 48: A (1536 f8e4m3) and B (768, stored n x k) generated and
// dumped, C (512 bf16, written), f32 scales sa = 0.5 and sb = 3, a buffer f and an i32 i.
std::string e4m3_request(const std::string& call_extra = R"(, "scale_a": "sa", "scale_b": "sb")") {
    return R"({ "schema_version": 1, "vendor": { "library": "cublaslt" },
  "timing": { "warmup": 1, "iterations": 3 },
  "cases": [ { "name": "fp8", "vendor_call": { "op": "e4m3_gemm", "layout": "row_major_bt",
      "m": 32, "n": 16, "k": 48, "a": "a", "b": "b", "c": "c")" +
           call_extra + R"( }, "args": [
    { "name": "a", "dtype": "f8e4m3", "count": 1536, "generator": {"kind": "uniform", "low": -2, "high": 2, "seed": 5}, "input_dump_file": "ea.bin" },
    { "name": "b", "dtype": "f8e4m3", "count": 768, "generator": {"kind": "uniform", "low": -2, "high": 2, "seed": 6}, "input_dump_file": "eb.bin" },
    { "name": "c", "dtype": "bf16", "count": 512, "output_file": "ec.bin" },
    { "name": "f", "dtype": "f32", "count": 512, "generator": {"kind": "constant", "value": 0} },
    { "name": "sa", "dtype": "f32", "value": 0.5 },
    { "name": "sb", "dtype": "f32", "value": 3 },
    { "name": "i", "dtype": "i32", "value": 3 } ] } ] })";
}

using test::replaced;

struct fixture : test::request_folder {
    fixture() {
        std::vector<float> a(16);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * static_cast<float>(i) - 1.0f;
        dir.write_values("a.bin", a);
        dir.write("k.cu", "extern \"C\" __global__ void k() {}\n");
    }
};

}  // namespace

TEST_CASE("a vendor request is read with its library and each case's vendor_call") {
    fixture f;
    const request r = f.read(vendor_request());
    REQUIRE(r.vendor);
    CHECK(*r.vendor == vendor_library::cublas);
    CHECK(r.kernel.entry.empty());
    REQUIRE(r.cases[0].vendor);
    const vendor_call& v = *r.cases[0].vendor;
    CHECK(v.op == vendor_op::sgemm);
    CHECK(v.layout == matrix_layout::row_major);
    CHECK(v.m == 8);
    CHECK(v.n == 4);
    CHECK(v.k == 2);
    CHECK(v.a == "a");
    CHECK(v.b == "b");
    CHECK(v.c == "c");
}

TEST_CASE("a request needs exactly one of kernel and vendor") {
    fixture f;
    CHECK(
        f.error_of(vendor_request("", R"("kernel": { "source_file": "k.cu", "entry": "k" }, )")) ==
        "req.json: field vendor: a request has a 'kernel' or a 'vendor', not both");
    CHECK(f.error_of(replaced(vendor_request(), R"("vendor": { "library": "cublas" }, )", "")) ==
          "req.json: field kernel: missing; expected exactly one of 'kernel' (a kernel to "
          "compile) and 'vendor' (a library to call)");
    CHECK_THAT(f.error_of(replaced(vendor_request(), "\"cublas\"", "\"rocblas\"")),
               Catch::Contains("field vendor.library: expected one of "
                               "[\"cublas\",\"cublaslt\",\"cub\"]"));
}

TEST_CASE("a vendor_call naming a missing, scalar or mistyped arg is refused by field") {
    fixture f;
    CHECK(f.error_of(replaced(vendor_request(), R"("b": "b")", R"("b": "q")")) ==
          "req.json: field cases[0].vendor_call.b: 'q' names no argument of this case; expected "
          "a buffer arg's name");
    CHECK(f.error_of(replaced(vendor_request(), R"("a": "a")", R"("a": "s")")) ==
          "req.json: field cases[0].vendor_call.a: 's' is a scalar; expected a buffer");
    CHECK(f.error_of(replaced(vendor_request(), R"("a": "a")", R"("a": "h")")) ==
          "req.json: field cases[0].vendor_call.a: 'h' is f16 but sgemm needs f32 buffers");
    CHECK_THAT(f.error_of(replaced(vendor_request(), "\"sgemm\"", "\"dgemm\"")),
               Catch::Contains("field cases[0].vendor_call.a: 'a' is f32 but dgemm needs f64"));
}

TEST_CASE("a vendor_call whose shapes disagree with the args' counts is refused with both") {
    fixture f;
    CHECK(f.error_of(replaced(vendor_request(), R"("k": 2)", R"("k": 3)")) ==
          "req.json: field cases[0].vendor_call.a: 'a' has count 16 but sgemm with m=8, n=4, k=3 "
          "needs m*k = 24");
    CHECK(f.error_of(replaced(vendor_request(), R"("n": 4)", R"("n": 5)")) ==
          "req.json: field cases[0].vendor_call.b: 'b' has count 8 but sgemm with m=8, n=5, k=2 "
          "needs k*n = 10");
    CHECK_THAT(f.error_of(replaced(vendor_request(), R"("count": 32)", R"("count": 33)")),
               Catch::Contains("field cases[0].vendor_call.c: 'c' has count 33 but sgemm with "
                               "m=8, n=4, k=2 needs m*n = 32"));
}

TEST_CASE("a vendor_call's inputs need inputs and its output an output file of its own") {
    fixture f;
    CHECK_THAT(f.error_of(replaced(vendor_request(), R"("input_file": "a.bin")",
                                   R"("output_file": "a.out.bin")")),
               Catch::Contains("field cases[0].vendor_call.a: 'a' has no input; expected a "
                               "buffer with input_file or generator"));
    CHECK(f.error_of(replaced(vendor_request(), R"("output_file": "c.bin")",
                              R"("generator": {"kind": "constant", "value": 0})")) ==
          "req.json: field cases[0].vendor_call.c: 'c' has no output_file; C is written");
}

TEST_CASE("vendor cases have a vendor_call and no launch - kernel cases the reverse") {
    fixture f;
    CHECK(f.error_of(replaced(vendor_request(), R"("args": [)",
                              R"("launch": { "grid": [1], "block": [1] }, "args": [)")) ==
          "req.json: field cases[0].launch: a vendor request's cases have a vendor_call, not a "
          "launch");
    const std::string kernel_case =
        R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "k" },
  "cases": [ { "name": "c", )";
    CHECK(f.error_of(kernel_case + R"("args": [] } ] })") ==
          "req.json: field cases[0].launch: missing; a kernel request's cases need grid and block");
    CHECK(f.error_of(kernel_case +
                     R"("launch": { "grid": [1], "block": [1] }, "vendor_call": { "op": "sgemm",
      "layout": "row_major", "m": 1, "n": 1, "k": 1, "a": "x", "b": "x", "c": "y" }, "args": [] } ] })") ==
          "req.json: field cases[0].vendor_call: only a request with a 'vendor' can make a "
          "vendor_call");
    CHECK_THAT(f.error_of(replaced(vendor_request(), R"(, "a": "a", "b": "b", "c": "c")",
                                   R"(, "a": "a", "b": "b")")),
               Catch::Contains("field cases[0].vendor_call: missing required field 'c'"));
}

TEST_CASE("a vendor request survives the orchestrator's request writer and the harness's reader") {
    fixture f;
    request req = f.read(vendor_request());
    req.cases[0].vendor->layout = matrix_layout::col_major;
    const std::string text = write_request_json(req);
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    const auto doc = parse_json(text, "written");
    CHECK_FALSE(doc.HasMember("kernel"));
    CHECK_FALSE(doc["cases"][0].HasMember("launch"));
    const request back = f.read(text);
    REQUIRE(back.vendor);
    REQUIRE(back.cases[0].vendor);
    const vendor_call& v = *back.cases[0].vendor;
    CHECK(v.layout == matrix_layout::col_major);
    CHECK(v.op == vendor_op::sgemm);
    CHECK(v.m == 8);
    CHECK(v.n == 4);
    CHECK(v.k == 2);
    CHECK(v.c == "c");
}

TEST_CASE("cuBLAS loads at run time without a GPU, and a failure names every soname tried") {
    const cublas_api api = load_cublas();
    CHECK(api.file.rfind("libcublas.so", 0) == 0);
    CHECK(api.version.find('.') != std::string::npos);
    CHECK(api.sgemm);
    CHECK(api.gemm_ex);
    CHECK_THAT(describe_cublas_status(api, CUBLAS_STATUS_INVALID_VALUE),
               Catch::StartsWith("CUBLAS_STATUS_INVALID_VALUE ("));
    try {
        load_cublas({"libcublas-nope.so.99", "libcublas-nope.so"});
        FAIL("loaded a library that does not exist");
    } catch (const vendor_library_error& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("cuBLAS not found: tried libcublas-nope.so.99 (") &&
                                 Catch::Contains("), libcublas-nope.so ("));
    }
    CHECK(cublas_sonames() ==
          std::vector<std::string>{"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
}

TEST_CASE("the real harness takes a vendor request: compile-only needs nothing, a run a GPU",
          "[integration]") {
    fixture f;
    f.dir.write("req.json", vendor_request());
    auto r = test::run_harness({(f.dir / "req.json").string(), "--compile-only"});
    INFO(r.output);
    CHECK(r.exit_code == 0);
    auto doc = test::read_response(f.dir / "response.json");
    CHECK(doc["compile"].IsNull());
    CHECK(std::string(doc["mode"].GetString()) == "compile_only");
    if (!test::gpu_unavailable_reason().empty()) {
        r = test::run_harness({(f.dir / "req.json").string()});
        CHECK(r.exit_code == 14);
        CHECK(read_response(f.dir / "response.json").status == response_status::no_driver);
    }
}

TEST_CASE("the fake harness computes a vendor sgemm on the CPU at 0.5 ms per 256^3",
          "[integration]") {
    fixture f;
    f.dir.write("req.json", replaced(vendor_request(), R"("seed": 3} },)",
                                     R"("seed": 3}, "input_dump_file": "b.bin" },)"));
    const auto r = test::run_program(CUOPT_FAKE_HARNESS_BINARY, {(f.dir / "req.json").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const harness_response resp = read_response(f.dir / "response.json");
    CHECK_FALSE(resp.compile);
    REQUIRE(resp.vendor);
    CHECK(resp.vendor->library == "cublas");
    CHECK(resp.vendor->math_mode == "CUBLAS_DEFAULT_MATH");
    REQUIRE(resp.cases.size() == 1);
    CHECK(resp.cases[0].entry == "cublas:sgemm");
    REQUIRE(resp.cases[0].timing);
    CHECK(resp.cases[0].timing->median_ms == Approx(0.5 * 8 * 4 * 2 / (256.0 * 256 * 256)));
    const auto a = test::read_values<float>(f.dir / "a.bin");
    const auto b = test::read_values<float>(f.dir / "b.bin");
    const auto c = test::read_values<float>(f.dir / "c.bin");
    REQUIRE(c.size() == 32);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j)
            CHECK(c[i * 4 + j] == Approx(a[i * 2] * b[j] + a[i * 2 + 1] * b[4 + j]));
}

TEST_CASE("the vendor vocabularies are exactly the words the request schema allows") {
    const rapidjson::Document d = parse_json(std::string(embedded_schema("request")), "request");
    auto words = [](const rapidjson::Value& e) {
        std::set<std::string> out;
        for (const auto& w : e.GetArray()) out.insert(w.GetString());
        return out;
    };
    auto names = [](const auto& table) {
        std::set<std::string> out;
        for (const auto& e : table.entries) {
            out.insert(e.name);
            CHECK(table.parse(e.name) == e.value);
        }
        return out;
    };
    const auto& call = d["properties"]["cases"]["items"]["properties"]["vendor_call"]["properties"];
    CHECK(names(k_vendor_ops) == words(call["op"]["enum"]));
    CHECK(names(k_matrix_layouts) == words(call["layout"]["enum"]));
    CHECK(names(k_vendor_libraries) ==
          words(d["properties"]["vendor"]["properties"]["library"]["enum"]));
    const rapidjson::Document r = parse_json(std::string(embedded_schema("response")), "response");
    CHECK(names(k_vendor_libraries) ==
          words(r["properties"]["vendor"]["properties"]["library"]["enum"]));
    const rapidjson::Document m = parse_json(std::string(embedded_schema("manifest")), "manifest");
    const auto& baseline = m["definitions"]["vendor_baseline"]["properties"];
    CHECK(names(k_vendor_ops) == words(baseline["op"]["enum"]));
    CHECK(names(k_matrix_layouts) == words(baseline["layout"]["enum"]));
    CHECK(names(k_vendor_libraries) == words(baseline["library"]["enum"]));
    for (const rapidjson::Value* fields : {&call, &baseline}) {  // both contracts' scales
        CHECK(fields->HasMember("scale_a"));
        CHECK(fields->HasMember("scale_b"));
    }
}

TEST_CASE("an e4m3_gemm request is read with library cublaslt, layout row_major_bt and scales") {
    fixture f;
    const request r = f.read(e4m3_request());
    REQUIRE(r.vendor);
    CHECK(*r.vendor == vendor_library::cublaslt);
    const vendor_call& v = *r.cases[0].vendor;
    CHECK(v.op == vendor_op::e4m3_gemm);
    CHECK(v.layout == matrix_layout::row_major_bt);
    CHECK(v.m == 32);
    CHECK(v.n == 16);
    CHECK(v.k == 48);
    CHECK(v.scale_a == "sa");
    CHECK(v.scale_b == "sb");
    CHECK(f.read(e4m3_request("")).cases[0].vendor->scale_a.empty());  // no scale: 1.0
    // C may be f32 too.
    const request f32 =
        f.read(replaced(e4m3_request(), R"("c", "dtype": "bf16")", R"("c", "dtype": "f32")"));
    CHECK(f32.cases[0].vendor->c == "c");
}

TEST_CASE("an e4m3_gemm vendor_call with a wrong dtype, count or layout is refused by field") {
    fixture f;
    const std::string prefix = "req.json: field cases[0].vendor_call.";
    CHECK(f.error_of(
              replaced(e4m3_request(), R"("a", "dtype": "f8e4m3")", R"("a", "dtype": "f16")")) ==
          prefix + "a: 'a' is f16 but e4m3_gemm needs f8e4m3 buffers");
    CHECK(f.error_of(
              replaced(e4m3_request(), R"("b", "dtype": "f8e4m3")", R"("b", "dtype": "f8e5m2")")) ==
          prefix + "b: 'b' is f8e5m2 but e4m3_gemm needs f8e4m3 buffers");
    CHECK(
        f.error_of(replaced(e4m3_request(), R"("c", "dtype": "bf16")", R"("c", "dtype": "f16")")) ==
        prefix + "c: 'c' is f16 but e4m3_gemm needs a C of dtype bf16 or f32");
    CHECK(f.error_of(replaced(e4m3_request(), R"("count": 768)", R"("count": 784)")) ==
          prefix + "b: 'b' has count 784 but e4m3_gemm with m=32, n=16, k=48 needs n*k = 768");
    CHECK(f.error_of(replaced(e4m3_request(), R"("count": 512, "output_file")",
                              R"("count": 528, "output_file")")) ==
          prefix + "c: 'c' has count 528 but e4m3_gemm with m=32, n=16, k=48 needs m*n = 512");
    CHECK(f.error_of(replaced(e4m3_request(), R"("row_major_bt")", R"("row_major")")) ==
          prefix +
              "layout: e4m3_gemm takes only row_major_bt (A row-major m x k, B row-major n x k, "
              "C row-major m x n: the TN form cuBLASLt's FP8 needs); got row_major");
}

TEST_CASE("e4m3_gemm is cuBLASLt's only op, and its m, n and k are multiples of 16") {
    fixture f;
    CHECK(f.error_of(replaced(e4m3_request(), R"("cublaslt")", R"("cublas")")) ==
          "req.json: field cases[0].vendor_call.op: e4m3_gemm is a cublaslt op but the library "
          "is cublas; expected one of sgemm, dgemm, hgemm");
    CHECK(f.error_of(replaced(vendor_request(), R"("cublas")", R"("cublaslt")")) ==
          "req.json: field cases[0].vendor_call.op: sgemm is a cublas op but the library is "
          "cublaslt; expected one of e4m3_gemm");
    for (const auto& [from, to, field] : {std::tuple{R"("m": 32)", R"("m": 40)", "m"},
                                          {R"("n": 16)", R"("n": 8)", "n"},
                                          {R"("k": 48)", R"("k": 50)", "k"}}) {
        const std::string value = std::string(to).substr(5);
        CHECK(f.error_of(replaced(e4m3_request(), from, to)) ==
              "req.json: field cases[0].vendor_call." + std::string(field) + ": " + value +
                  " is not a multiple of 16; cuBLASLt's FP8 e4m3_gemm needs m, n and k "
                  "multiples of 16");
    }
}

TEST_CASE("an e4m3_gemm scale names an f32 scalar arg, and only e4m3_gemm takes scales") {
    fixture f;
    const std::string prefix = "req.json: field cases[0].vendor_call.";
    CHECK(f.error_of(e4m3_request(R"(, "scale_a": "f")")) ==
          prefix + "scale_a: 'f' is a buffer; expected an f32 scalar arg");
    CHECK(f.error_of(e4m3_request(R"(, "scale_b": "i")")) ==
          prefix +
              "scale_b: 'i' is i32; expected an f32 scalar arg (cuBLASLt's scale type is "
              "CUDA_R_32F)");
    CHECK(f.error_of(e4m3_request(R"(, "scale_a": "q")")) ==
          prefix +
              "scale_a: 'q' names no argument of this case; expected an f32 scalar arg's "
              "name");
    CHECK(f.error_of(vendor_request(R"(, "scale_a": "s")")) ==
          prefix + "scale_a: sgemm takes no scales; only e4m3_gemm scales its product");
    CHECK_THAT(f.error_of(e4m3_request(R"(, "scale_a": "")")),
               Catch::Contains("field cases[0].vendor_call.scale_a"));
}

TEST_CASE("an e4m3_gemm request's scales survive the request writer") {
    fixture f;
    const request req = f.read(e4m3_request());
    const std::string text = write_request_json(req);
    validate_json(parse_json(text, "written"), embedded_schema("request"), "written");
    const request back = f.read(text);
    REQUIRE(back.vendor);
    CHECK(*back.vendor == vendor_library::cublaslt);
    const vendor_call& v = *back.cases[0].vendor;
    CHECK(v.layout == matrix_layout::row_major_bt);
    CHECK(v.scale_a == "sa");
    CHECK(v.scale_b == "sb");
    CHECK_FALSE(parse_json(write_request_json(f.read(e4m3_request(""))),
                           "written")["cases"][0]["vendor_call"]
                    .HasMember("scale_a"));
}

TEST_CASE("cuBLASLt loads at run time without a GPU, and a failure names every soname tried") {
    const cublaslt_api api = load_cublaslt();
    CHECK(api.file.rfind("libcublasLt.so", 0) == 0);
    CHECK(api.version.find('.') != std::string::npos);
    CHECK(api.matmul);
    CHECK(api.algo_get_heuristic);
    CHECK_THAT(describe_cublaslt_status(api, CUBLAS_STATUS_NOT_SUPPORTED),
               Catch::StartsWith("CUBLAS_STATUS_NOT_SUPPORTED ("));
    try {
        load_cublaslt({"libcublasLt-nope.so.99", "libcublasLt-nope.so"});
        FAIL("loaded a library that does not exist");
    } catch (const vendor_library_error& e) {
        CHECK_THAT(e.what(),
                   Catch::StartsWith("cuBLASLt not found: tried libcublasLt-nope.so.99 (") &&
                       Catch::Contains("), libcublasLt-nope.so ("));
    }
    CHECK(cublaslt_sonames() ==
          std::vector<std::string>{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
}

TEST_CASE("a library that loads without an entry point the harness needs is named with it") {
    const std::string file = load_cublaslt().file;  // one that opens here
    void (*missing)() = nullptr;
    try {
        load_first_library("cuBLASLt", {"libcublasLt-nope.so", file},
                           [&](symbol_resolver& lib) { lib.get(missing, "cublasLtNoSuchCall"); });
        FAIL("loaded a library without its entry point");
    } catch (const vendor_library_error& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("cuBLASLt not found: tried libcublasLt-nope.so (") &&
                                 Catch::EndsWith(", " + file + " (it has no cublasLtNoSuchCall)"));
    }
    // An optional entry point may be missing: the library loads.
    CHECK(load_first_library("cuBLASLt", {file}, [&](symbol_resolver& lib) {
              lib.get_optional(missing, "cublasLtNoSuchCall");
          }) == file);
    CHECK(missing == nullptr);
}

TEST_CASE("the fake harness computes e4m3_gemm from the fp8 inputs times both scales in bf16",
          "[integration]") {
    fixture f;
    f.dir.write("req.json", e4m3_request());
    const auto r = test::run_program(CUOPT_FAKE_HARNESS_BINARY, {(f.dir / "req.json").string()});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const harness_response resp = read_response(f.dir / "response.json");
    REQUIRE(resp.vendor);
    CHECK(resp.vendor->library == "cublaslt");
    CHECK(resp.vendor->math_mode == "CUBLAS_COMPUTE_32F, FAST_ACCUM off");
    REQUIRE(resp.cases.size() == 1);
    CHECK(resp.cases[0].entry == "cublaslt:e4m3_gemm");
    const std::string a = test::read_text(f.dir / "ea.bin"), b = test::read_text(f.dir / "eb.bin"),
                      c = test::read_text(f.dir / "ec.bin");
    REQUIRE(a.size() == 1536);
    REQUIRE(b.size() == 768);
    REQUIRE(c.size() == 512 * 2);
    int nonzero = 0;
    for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 16; ++j) {
            double sum = 0;  // B stored n x k: C[i][j] = sum_p A[i][p] B[j][p]
            for (int p = 0; p < 48; ++p)
                sum += element_as_double(dtype::f8e4m3, a.data(), i * 48 + p) *
                       element_as_double(dtype::f8e4m3, b.data(), j * 48 + p);
            const auto want = encode_scalar(dtype::bf16, 0.5 * 3 * sum);
            INFO("C[" << i << "][" << j << "]");
            CHECK(std::memcmp(want.data(), c.data() + 2 * (i * 16 + j), 2) == 0);
            nonzero += sum != 0;
        }
    CHECK(nonzero > 400);
}
