// The fields optimize reads from cuda-harness --device-info, each with its default.
#include "orchestrator/commands/device_info_fields.hpp"

#include <climits>
#include <optional>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

std::string device_arch(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    return text_of(d, "arch");
}

std::string device_name(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    const std::string name = text_of(d, "name");
    return name.empty() ? "unknown" : name;
}

bool device_simulated(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    return bool_of(d, "simulated").value_or(false);
}

int max_threads_per_block(const std::string& device_json) {
    rapidjson::Document d;
    try_parse_json(d, device_json);
    const std::optional<long long> n = integer_of(d, "max_threads_per_block");
    return n && *n >= INT_MIN && *n <= INT_MAX ? static_cast<int>(*n) : 0;
}

}  // namespace cuopt
