// Reading one argument of a request's case: a scalar's exact value, or a buffer with its input
// (a file of the right size or a generator), its output, input dump, timing_inputs and check.
#include <cmath>
#include <filesystem>

#include "common/message_text.hpp"
#include "harness/request_fields.hpp"

namespace cuopt::request_fields {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

generator_spec read_checked_generator(const json_field& g, dtype type, std::uint64_t count) {
    const generator_spec spec = read_generator(g);
    if (const auto problem = check_generator(spec, type, count))
        fail(problem->field.empty() ? g : member_at(g, problem->field), problem->message);
    return spec;
}

// A scalar's value, exact: integer literals stay integers over the whole 64-bit range.
void read_scalar_value(kernel_arg& arg, const json_field& f) {
    const Value& v = f.value();
    if (!is_float(arg.type) && !v.IsInt64() && !v.IsUint64() && !v.IsBool() &&
        std::fabs(v.GetDouble()) > 9007199254740992.0)
        fail(f, "a " + std::string(dtype_name(arg.type)) +
                    " beyond 2^53 must be written as an integer literal to be exact");
    try {
        if (v.IsInt64()) {
            arg.scalar = v.GetInt64();
            arg.scalar_bytes = encode_integer_scalar(arg.type, v.GetInt64());
        } else if (v.IsUint64()) {
            arg.scalar = v.GetUint64();
            arg.scalar_bytes = encode_integer_scalar(arg.type, v.GetUint64());
        } else {
            arg.scalar = v.IsBool() ? (v.GetBool() ? 1.0 : 0.0) : v.GetDouble();
            arg.scalar_bytes = encode_scalar(arg.type, std::get<double>(arg.scalar));
        }
    } catch (const std::invalid_argument& e) {
        fail(f, e.what());
    }
    const double as_double = std::visit([](auto n) { return static_cast<double>(n); }, arg.scalar);
    if (is_float(arg.type))
        if (std::string why = value_fit_problem(arg.type, as_double); !why.empty()) fail(f, why);
}

void read_input_file(const request& req, kernel_arg& arg, const json_field& f) {
    arg.input_file = resolve_file(req, f);
    std::error_code ec;
    const auto size = fs::file_size(*arg.input_file, ec);
    if (ec)
        fail(f, "cannot read " + quote_value(arg.input_file->string()) + " (" + ec.message() + ")");
    if (size != arg.bytes())
        fail(f, quote_value(arg.input_file->filename().string()) + " holds " +
                    std::to_string(size) + " bytes but count " + std::to_string(arg.count) + " x " +
                    std::string(dtype_name(arg.type)) + " (" +
                    std::to_string(dtype_size(arg.type)) + " bytes) needs " +
                    std::to_string(arg.bytes()));
}

// The expected file of a check: in the harness's root, exactly count x dtype.
fs::path read_expected_file(const request& req, const kernel_arg& arg, const json_field& f) {
    const fs::path file = resolve_in_root(req, f);
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) fail(f, "cannot read " + quote_value(file.string()) + " (" + ec.message() + ")");
    if (size != arg.bytes())
        fail(f, quote_value(file.filename().string()) + " holds " + std::to_string(size) +
                    " bytes but the " + std::to_string(arg.count) + " " +
                    std::string(dtype_name(arg.type)) + " elements of " + quote_value(arg.name) +
                    " need " + std::to_string(arg.bytes()));
    return file;
}

output_check_spec read_output_check(const request& req, const kernel_arg& arg,
                                    const json_field& c) {
    if (!arg.output_file)
        fail(c, "only an output (a buffer with 'output_file') can be checked; expected no check");
    output_check_spec spec;
    spec.expected_file = read_expected_file(req, arg, c["expected_file"]);
    spec.expected_sha256 = c.text("expected_sha256");  // the schema's pattern: 64 hex digits
    for (auto [field, key] : {std::pair{&spec.atol, "atol"}, std::pair{&spec.rtol, "rtol"},
                              std::pair{&spec.rms_atol, "rms_atol"}}) {
        *field = c.optional_number(key).value_or(0);
        if (*field < 0) fail(c[key], "is negative; expected a tolerance >= 0");
        // The check compares integers bit for bit: a tolerance would be ignored, not applied.
        if (*field != 0 && !is_float(arg.type))
            fail(c[key], std::string(dtype_name(arg.type)) +
                             " outputs are compared exactly (equal bits); expected 0 or no " + key);
    }
    return spec;
}

void read_buffer(const request& req, kernel_arg& arg, const json_field& a) {
    if (!a.has("count")) fail(a, "expected 'count' (a buffer) or 'value' (a scalar)");
    arg.is_buffer = true;
    arg.count = a.integer<std::uint64_t>("count");
    if (a.has("input_file") && a.has("generator"))
        fail(a, "has both 'input_file' and 'generator'; expected at most one input source");
    if (a.has("input_file")) read_input_file(req, arg, a["input_file"]);
    if (a.has("generator"))
        arg.generator = read_checked_generator(a["generator"], arg.type, arg.count);
    if (a.has("output_file")) arg.output_file = resolve_file(req, a["output_file"]);
    if (const auto check = a.find("check")) arg.check = read_output_check(req, arg, *check);
    if (const auto dump = a.find("input_dump_file")) {
        if (!arg.generator) fail(*dump, "only a buffer with a 'generator' can dump its inputs");
        arg.input_dump_file = resolve_file(req, *dump);
    }
    if (const auto mode = a.find("timing_inputs")) {
        if (!arg.has_input())
            fail(*mode,
                 "only a buffer with an input ('input_file' or 'generator') can say what "
                 "its timed launches see; expected no timing_inputs here");
        arg.timing_inputs_mode = mode->word(k_timing_inputs);
    }
}

}  // namespace

kernel_arg read_arg(const request& req, const json_field& a) {
    kernel_arg arg;
    arg.name = a.text("name");
    arg.type = *parse_dtype(a.text("dtype"));  // the schema's enum guarantees it
    const bool buffer_fields = a.has("count") || a.has("input_file") || a.has("output_file") ||
                               a.has("generator") || a.has("input_dump_file") ||
                               a.has("timing_inputs") || a.has("check");
    if (!a.has("value")) {
        read_buffer(req, arg, a);
        return arg;
    }
    if (buffer_fields)
        fail(a,
             "has 'value' (a scalar) and buffer fields "
             "(count/input_file/output_file/generator/input_dump_file/timing_inputs/check); "
             "expected one or the other");
    read_scalar_value(arg, a["value"]);
    return arg;
}

}  // namespace cuopt::request_fields
