#include "orchestrator/commands/device_list.hpp"

#include <algorithm>
#include <cctype>

#include "orchestrator/search/batch_evaluation.hpp"

namespace cuopt {

std::vector<int> devices_of(const optimizer_options& o) {
    if (o.devices.empty() || !device_list_problem(o.devices).empty()) return {o.device};
    return parse_device_list(o.devices);
}

int compile_threads_of(const optimizer_options& o) {
    if (o.no_compile_ahead) return 0;
    if (o.compile_threads > 0) return o.compile_threads;
    return default_compile_threads(static_cast<int>(devices_of(o).size()));
}

}  // namespace cuopt
