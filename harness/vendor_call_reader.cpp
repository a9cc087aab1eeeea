// Reading a vendor request's vendor_call: its op against the request's library, and each operand
// (a, b, c and the scales) against the case's arguments.
#include <algorithm>

#include "common/message_text.hpp"
#include "harness/request_fields.hpp"

namespace cuopt::request_fields {

namespace {

// The buffer arg a vendor_call field names, checked for its role, dtype and element count.
void check_vendor_operand(const run_case& rc, const vendor_call& v, const char* key,
                          const std::string& name, std::uint64_t count, const char* shape,
                          const json_field& f) {
    const std::string op = k_vendor_ops.name(v.op);
    const bool is_c = std::string(key) == "c";
    const auto it = std::find_if(rc.args.begin(), rc.args.end(),
                                 [&](const kernel_arg& a) { return a.name == name; });
    if (it == rc.args.end())
        fail(f,
             quote_value(name) + " names no argument of this case; expected a buffer arg's name");
    if (!it->is_buffer) fail(f, quote_value(name) + " is a scalar; expected a buffer");
    const bool dtype_ok =
        is_c ? vendor_output_dtype_ok(v.op, it->type) : it->type == vendor_input_dtype(v.op);
    if (!dtype_ok)
        fail(f, quote_value(name) + " is " + std::string(dtype_name(it->type)) + " but " + op +
                    " needs " +
                    (is_c && v.op == vendor_op::e4m3_gemm
                         ? "a C of dtype " + vendor_output_dtypes(v.op)
                         : std::string(dtype_name(vendor_input_dtype(v.op))) + " buffers"));
    if (it->count != count)
        fail(f, quote_value(name) + " has count " + std::to_string(it->count) + " but " + op +
                    " with m=" + std::to_string(v.m) + ", n=" + std::to_string(v.n) + ", k=" +
                    std::to_string(v.k) + " needs " + shape + " = " + std::to_string(count));
    if (!is_c && !it->has_input())
        fail(f,
             quote_value(name) + " has no input; expected a buffer with input_file or generator");
    if (is_c && !it->output_file) fail(f, quote_value(name) + " has no output_file; C is written");
}

// What the library and the op ask of a call beyond its operands: the op is the request's
// library's, and e4m3_gemm takes row_major_bt only with m, n and k multiples of 16.
void check_vendor_op(const json_field& v, const vendor_call& call, vendor_library library) {
    if (const auto problem = check_vendor_pairing(call.op, library, call.layout))
        fail(v[problem->field], problem->message);
    for (const auto& [key, value] : {std::pair{"m", call.m}, {"n", call.n}, {"k", call.k}})
        if (const std::string problem = vendor_dimension_problem(call.op, value); !problem.empty())
            fail(v[key], problem);
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

}  // namespace

vendor_call read_vendor_call(const json_field& v, const run_case& rc, vendor_library library) {
    vendor_call call;
    call.op = v.word("op", k_vendor_ops);
    call.layout = v.word("layout", k_matrix_layouts);
    call.m = v.integer<int>("m");
    call.n = v.integer<int>("n");
    call.k = v.integer<int>("k");
    call.a = v.text("a");
    call.b = v.text("b");
    call.c = v.text("c");
    check_vendor_op(v, call, library);
    const std::uint64_t m = call.m, n = call.n, k = call.k;
    const bool bt = call.layout == matrix_layout::row_major_bt;
    check_vendor_operand(rc, call, "a", call.a, m * k, "m*k", v["a"]);
    check_vendor_operand(rc, call, "b", call.b, k * n, bt ? "n*k" : "k*n", v["b"]);
    check_vendor_operand(rc, call, "c", call.c, m * n, "m*n", v["c"]);
    if (call.c == call.a || call.c == call.b)
        fail(v["c"], quote_value(call.c) + " is also an input; C needs a buffer of its own");
    call.scale_a = read_vendor_scale(v, "scale_a", rc, call.op);
    call.scale_b = read_vendor_scale(v, "scale_b", rc, call.op);
    return call;
}

}  // namespace cuopt::request_fields
