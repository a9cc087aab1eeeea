#pragma once
/// --devices: the GPUs a search measures on, "0,1" (indices in the order given, no repeats).
/// The first is the device everything outside the batches runs on (iteration 0, the oracle,
/// the vendor library, the evidence gates); --devices sets --device to it. And how many CPU
/// threads compile ahead for them.

#include <string>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// The comma-separated items, spaces around each trimmed (an empty item kept as "").
std::vector<std::string> comma_items(const std::string& text);

/// "" when the text is a list of GPU indices, else what is wrong with it.
std::string device_list_problem(const std::string& text);

/// The indices of a valid list, in order.
std::vector<int> parse_device_list(const std::string& text);

/// o.devices when given, else o.device alone.
std::vector<int> devices_of(const optimizer_options& o);

/// 0 with --no-compile-ahead, else --compile-threads, else the hardware threads minus the
/// devices (at least 1).
int compile_threads_of(const optimizer_options& o);

}  // namespace cuopt
