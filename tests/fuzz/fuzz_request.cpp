// libFuzzer target: the harness's request reader, native and v0.0 layouts (and the
// shape checks, generator checks and path resolution behind it).
#include "common/json_document.hpp"
#include "fuzz_support.hpp"
#include "harness/request_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = cuopt::fuzz::write_input("request.json", data, size);
    try {
        cuopt::read_request(file);
    } catch (const cuopt::json_error&) {
    }
    return 0;
}
