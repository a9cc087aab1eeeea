// The --device-info block read once into device_facts, each field with its default.
#include "common/device_facts.hpp"

#include <climits>
#include <regex>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

device_facts read_device_facts(const rapidjson::Value& block) {
    device_facts f;
    if (!block.IsObject()) return f;
    f.json = to_compact_json(block);
    f.index = integer_of(block, "index").value_or(-1);
    f.name = text_of(block, "name");
    f.uuid = text_of(block, "uuid");
    f.arch = text_of(block, "arch");
    f.compute_capability = text_of(block, "compute_capability");
    f.simulated = bool_of(block, "simulated").value_or(false);
    const long long threads = integer_of(block, "max_threads_per_block").value_or(0);
    f.max_threads_per_block = threads >= 0 && threads <= INT_MAX ? static_cast<int>(threads) : 0;
    f.l2_bytes = number_of(block, "l2_bytes").value_or(0);
    f.copy_bandwidth_gbps =
        number_of(object_or_empty(block, "measured"), "copy_bandwidth_gbps").value_or(0);
    for (const auto& p : object_or_empty(block, "peak_tflops").GetObject())
        if (const auto tflops = number_of(p.value)) f.peak_tflops[name_of(p)] = *tflops;
    return f;
}

device_facts read_device_facts(const std::string& text) {
    rapidjson::Document d;
    if (!try_parse_json(d, text).empty()) return {};
    device_facts f = read_device_facts(static_cast<const rapidjson::Value&>(d));
    if (d.IsObject()) f.json = text;  // verbatim, as the harness printed it
    return f;
}

std::string arch_specific_target(const std::string& arch) {
    std::smatch m;
    if (std::regex_match(arch, m, std::regex(R"(sm_([0-9]{2,3}))")) && std::stoi(m[1]) >= 90)
        return arch + "a";
    return arch;
}

}  // namespace cuopt
