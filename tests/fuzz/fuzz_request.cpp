// libFuzzer target: the harness's request reader, native and v0.0 layouts (and the
// shape checks, generator checks and path resolution behind it). Invariants: every name and
// path of an accepted request is text (no U+0000, no lone surrogate), and a refusal's message
// stays short however long the value it is about.
#include "common/json_document.hpp"
#include "fuzz_support.hpp"
#include "harness/request_reader.hpp"

namespace {

using cuopt::fuzz::check_text;

void check_names(const cuopt::request& req) {
    const cuopt::kernel_spec& k = req.kernel;
    check_text("kernel.entry", k.entry);
    check_text("kernel.source_name", k.source_name);
    check_text("kernel.display_name", k.display_name);
    check_text("kernel.source_path", k.source_path.string());
    for (const std::string& o : k.compile_options) check_text("kernel.compile_options[]", o);
    for (const auto& [name, value] : k.defines) {
        check_text("kernel.defines name", name);
        check_text("kernel.defines value", value);
    }
    for (const cuopt::run_case& c : req.cases) {
        check_text("cases[].name", c.name);
        if (c.vendor)
            for (const std::string* s :
                 {&c.vendor->a, &c.vendor->b, &c.vendor->c, &c.vendor->scale_a, &c.vendor->scale_b,
                  &c.vendor->x, &c.vendor->y})
                check_text("cases[].vendor_call buffer", *s);
        for (const cuopt::kernel_arg& a : c.args) {
            check_text("cases[].args[].name", a.name);
            for (const auto* file : {&a.input_file, &a.output_file, &a.input_dump_file})
                if (*file) check_text("cases[].args[] file", (*file)->string());
            if (a.check) check_text("cases[].args[].check", a.check->expected_file.string());
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = cuopt::fuzz::write_input("request.json", data, size);
    try {
        check_names(cuopt::read_request(file));
    } catch (const cuopt::json_error& e) {
        cuopt::fuzz::check_message(e);
    }
    return 0;
}
