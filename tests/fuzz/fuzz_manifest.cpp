// libFuzzer target: the orchestrator's manifest reader (schema, fields, every expression
// evaluated for every case, file sizes).
#include "common/json_document.hpp"
#include "fuzz_support.hpp"
#include "orchestrator/contract/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = cuopt::fuzz::write_input("input_cases.json", data, size);
    try {
        cuopt::read_manifest(file);
    } catch (const cuopt::json_error&) {
    }
    return 0;
}
