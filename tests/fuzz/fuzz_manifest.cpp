// libFuzzer target: the orchestrator's manifest reader (schema, fields, every expression
// evaluated for every case, file sizes). Invariants: an accepted manifest's names are text, a
// refusal's message stays short, and what check accepts the harness accepts: the attempt
// folder the optimizer writes for the initial kernel (kernel.cu, inputs/, request.json, through
// attempt_evaluator::compile_only) holds a request the harness's reader takes.
#include <chrono>
#include <filesystem>
#include <optional>

#include "common/json_document.hpp"
#include "common/temporary_folder.hpp"
#include "fuzz_support.hpp"
#include "harness/request_reader.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace {

namespace fs = std::filesystem;
using cuopt::fuzz::check_text;

// Stands in for cuda-harness: reads the request as the harness does (the response beside it,
// which no output may name); a refusal is a finding.
class request_reading_runner : public cuopt::process_runner {
  public:
    using cuopt::process_runner::run;
    bool ran = false;
    cuopt::process_result run(const std::vector<std::string>& argv,
                              std::chrono::milliseconds) override {
        ran = true;
        const fs::path request = argv.at(1);
        try {
            cuopt::read_request(request, {request.parent_path() / "response.json"});
        } catch (const cuopt::json_error& e) {
            cuopt::fuzz::fail("the manifest is accepted but the harness refuses its request",
                              e.what());
        }
        return {};
    }
};

void check_names(const cuopt::manifest& m) {
    for (const cuopt::manifest_arg& a : m.args) check_text("args[].name", a.name);
    for (const cuopt::manifest_case& c : m.cases) {
        check_text("cases[].name", c.name);
        for (const auto& [name, value] : c.params) check_text("cases[].params name", name);
    }
    for (const auto& [name, values] : m.tunables) check_text("tunables name", name);
}

// The initial kernel's attempt folder, as optimize makes it, read back by the harness's reader.
// Only for manifests of at most 4096 case arguments: that many already make a 1 MB request.
void check_request_of(const cuopt::manifest& m) {
    if (m.cases.size() * m.args.size() > 4096) return;
    static const cuopt::temporary_folder attempts("cuopt-fuzz-attempt");  // mkdtemp
    const fs::path folder = attempts / "attempt";
    fs::remove_all(folder);  // nothing of the previous input's folder may help this one
    cuopt::candidate c;
    c.source = "extern \"C\" __global__ void twice() {}\n";
    c.entry = "twice";
    c.proposer = cuopt::proposer_kind::initial;
    c.label = "initial.cu";
    c.tunables = m.default_tunables();
    cuopt::evaluator_settings settings;
    settings.harness = "cuda-harness";
    request_reading_runner harness;
    const cuopt::attempt_evaluator evaluator(m, settings, harness);
    const cuopt::compile_summary out = evaluator.compile_only(c, folder);
    if (!harness.ran)
        cuopt::fuzz::fail("the manifest is accepted but the optimizer makes no request of it",
                          out.log);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = cuopt::fuzz::write_input("input_cases.json", data, size);
    std::optional<cuopt::manifest> m;
    try {
        m = cuopt::read_manifest(file);
    } catch (const cuopt::json_error& e) {
        cuopt::fuzz::check_message(e);
        return 0;
    }
    check_names(*m);
    check_request_of(*m);
    return 0;
}
