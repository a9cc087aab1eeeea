// Reading a vendor request's vendor_call: its op against the request's library, the fields the op
// takes (a gemm's m, n, k, a, b, c and scales; segmented_sum's rows, cols, x, y), and each operand
// against the case's arguments.
#include <algorithm>
#include <vector>

#include "common/message_text.hpp"
#include "harness/request_fields.hpp"

namespace cuopt::request_fields {

namespace {

// What one operand field must name: a buffer of `count` elements (`shape`, e.g. "m*k"), the
// op's output (written) or one of its inputs.
struct operand_need {
    const char* key;
    const std::string& name;
    std::uint64_t count;
    std::string shape;
    bool output;
};

// The sizes of a call as its messages give them: "m=8, n=4, k=2" or "rows=8, cols=4".
std::string sizes_of(const vendor_call& v) {
    if (is_row_sum(v.op))
        return "rows=" + std::to_string(v.rows) + ", cols=" + std::to_string(v.cols);
    return "m=" + std::to_string(v.m) + ", n=" + std::to_string(v.n) + ", k=" + std::to_string(v.k);
}

// The buffer arg a vendor_call field names, checked for its role, dtype and element count.
void check_vendor_operand(const run_case& rc, const vendor_call& v, const operand_need& need,
                          const json_field& f) {
    const std::string op = k_vendor_ops.name(v.op), &name = need.name;
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        fail(f,
             quote_value(name) + " names no argument of this case; expected a buffer arg's name");
    if (!it->is_buffer) fail(f, quote_value(name) + " is a scalar; expected a buffer");
    const bool dtype_ok =
        need.output ? vendor_output_dtype_ok(v.op, it->type) : it->type == vendor_input_dtype(v.op);
    if (!dtype_ok)
        fail(f, quote_value(name) + " is " + std::string(dtype_name(it->type)) + " but " + op +
                    " needs " +
                    (need.output && v.op == vendor_op::e4m3_gemm
                         ? "a C of dtype " + vendor_output_dtypes(v.op)
                         : std::string(dtype_name(vendor_input_dtype(v.op))) + " buffers"));
    if (it->count != need.count)
        fail(f, quote_value(name) + " has count " + std::to_string(it->count) + " but " + op +
                    " with " + sizes_of(v) + " needs " + need.shape + " = " +
                    std::to_string(need.count));
    if (!need.output && !it->has_input())
        fail(f,
             quote_value(name) + " has no input; expected a buffer with input_file or generator");
    if (need.output && !it->output_file)
        fail(f, quote_value(name) + " has no output_file; " + (is_row_sum(v.op) ? "y" : "C") +
                    " is written");
}

// The fields `op` takes are all there, and none of the other kind of op's.
void check_call_fields(const json_field& v, vendor_op op) {
    const std::vector<const char*> gemm = {"m", "n", "k", "a", "b", "c"},
                                   sum = {"rows", "cols", "x", "y"};
    const bool sums = is_row_sum(op);
    const std::string takes = std::string(k_vendor_ops.name(op)) +
                              (sums ? " takes rows, cols, x and y" : " takes m, n, k, a, b and c");
    for (const char* key : sums ? sum : gemm)
        if (!v.has(key)) fail(v, "missing required field '" + std::string(key) + "'; " + takes);
    for (const char* key : sums ? gemm : sum)
        if (v.has(key)) fail(v[key], takes + ", not " + key);
}

// What the library and the op ask of a call before its sizes and operands: the op is the
// request's library's, its layout its own, and its fields the op's.
void check_vendor_op(const json_field& v, const vendor_call& call, vendor_library library) {
    if (const auto problem = check_vendor_pairing(call.op, library, call.layout))
        fail(v[problem->field], problem->message);
    check_call_fields(v, call.op);
}

// A vendor_call's scale_a or scale_b: the name of an f32 scalar arg of the case; "" for none.
std::string read_vendor_scale(const json_field& v, const char* key, const run_case& rc,
                              vendor_op op) {
    const auto f = v.find(key);
    if (!f) return "";
    const std::string name = f->text();
    if (op != vendor_op::e4m3_gemm)
        fail(*f, std::string(k_vendor_ops.name(op)) +
                     " takes no scales; only e4m3_gemm scales its product");
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        fail(*f, quote_value(name) +
                     " names no argument of this case; expected an f32 scalar arg's name");
    if (it->is_buffer) fail(*f, quote_value(name) + " is a buffer; expected an f32 scalar arg");
    if (it->type != dtype::f32)
        fail(*f, quote_value(name) + " is " + std::string(dtype_name(it->type)) +
                     "; expected an f32 scalar arg (cuBLASLt's scale type is CUDA_R_32F)");
    return name;
}

// A gemm's sizes, A, B and C.
void read_gemm_call(const json_field& v, const run_case& rc, vendor_call& call) {
    call.m = v.integer<int>("m");
    call.n = v.integer<int>("n");
    call.k = v.integer<int>("k");
    call.a = v.text("a");
    call.b = v.text("b");
    call.c = v.text("c");
    for (const auto& [key, value] : {std::pair{"m", call.m}, {"n", call.n}, {"k", call.k}})
        if (const std::string problem = vendor_dimension_problem(call.op, value); !problem.empty())
            fail(v[key], problem);  // e4m3_gemm's m, n and k are multiples of 16
    const std::uint64_t m = call.m, n = call.n, k = call.k;
    const bool bt = call.layout == matrix_layout::row_major_bt;
    check_vendor_operand(rc, call, {"a", call.a, m * k, "m*k", false}, v["a"]);
    check_vendor_operand(rc, call, {"b", call.b, k * n, bt ? "n*k" : "k*n", false}, v["b"]);
    check_vendor_operand(rc, call, {"c", call.c, m * n, "m*n", true}, v["c"]);
    if (call.c == call.a || call.c == call.b)
        fail(v["c"], quote_value(call.c) + " is also an input; C needs a buffer of its own");
}

// segmented_sum's sizes, x (rows x cols) and y (rows).
void read_row_sum_call(const json_field& v, const run_case& rc, vendor_call& call) {
    call.rows = v.integer<int>("rows");
    call.cols = v.integer<int>("cols");
    call.x = v.text("x");
    call.y = v.text("y");
    const std::uint64_t rows = call.rows, cols = call.cols;
    check_vendor_operand(rc, call, {"x", call.x, rows * cols, "rows*cols", false}, v["x"]);
    check_vendor_operand(rc, call, {"y", call.y, rows, "rows", true}, v["y"]);
    if (call.y == call.x)
        fail(v["y"], quote_value(call.y) + " is also the input; y needs a buffer of its own");
}

}  // namespace

vendor_call read_vendor_call(const json_field& v, const run_case& rc, vendor_library library) {
    vendor_call call;
    call.op = v.word("op", k_vendor_ops);
    call.layout = v.word("layout", k_matrix_layouts);
    check_vendor_op(v, call, library);
    if (is_row_sum(call.op))
        read_row_sum_call(v, rc, call);
    else
        read_gemm_call(v, rc, call);
    call.scale_a = read_vendor_scale(v, "scale_a", rc, call.op);
    call.scale_b = read_vendor_scale(v, "scale_b", rc, call.op);
    return call;
}

}  // namespace cuopt::request_fields
