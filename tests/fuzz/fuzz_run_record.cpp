// libFuzzer target: what optimize --resume reads back from a run folder, history.json and
// candidates/iter-NN/candidates.json, over the pilot manifest.
#include "common/json_document.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/history_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const cuopt::manifest m =
        cuopt::read_manifest(std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/input_cases.json");
    rapidjson::Document d;
    if (!cuopt::try_parse_json(d, std::string_view(reinterpret_cast<const char*>(data), size))
             .empty())
        return 0;
    try {
        (void)cuopt::history_from_json(d, "/tmp/cuopt-fuzz-run");
    } catch (const cuopt::history_read_error&) {
    }
    try {
        (void)cuopt::iteration_record_from_json(d, m, "candidates.json");
    } catch (const cuopt::candidates_file_error&) {
    }
    return 0;
}
