// libFuzzer target: a candidate given as JSON (the files proposer's side file and the
// model's submit_candidate arguments) applied over the pilot manifest.
#include "common/json_document.hpp"
#include "orchestrator/proposers/candidate_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const cuopt::manifest m =
        cuopt::read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    rapidjson::Document d;
    if (!cuopt::try_parse_json(d, std::string_view(reinterpret_cast<const char*>(data), size))
             .empty())
        return 0;
    for (const char* schema : {"candidate-file", "candidate"}) {
        cuopt::candidate c;
        try {
            cuopt::apply_candidate_json(c, d, m, cuopt::embedded_schema(schema), "fuzz.json");
        } catch (const cuopt::json_error&) {
        }
    }
    return 0;
}
