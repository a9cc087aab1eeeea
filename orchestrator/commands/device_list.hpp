#pragma once
/// --devices: the GPUs a search measures on, "0,1" (indices in the order given, no repeats).
/// The first is the device everything outside the batches runs on (iteration 0, the oracle,
/// the vendor library, the evidence gates); --devices sets --device to it. And how many CPU
/// threads compile ahead for them.

#include <string>
#include <vector>

#include "common/device_list.hpp"
#include "orchestrator/commands/optimizer_options.hpp"

namespace cuopt {

/// o.devices when given, else o.device alone.
std::vector<int> devices_of(const optimizer_options& o);

/// 0 with --no-compile-ahead, else --compile-threads, else the hardware threads minus the
/// devices (at least 1).
int compile_threads_of(const optimizer_options& o);

}  // namespace cuopt
