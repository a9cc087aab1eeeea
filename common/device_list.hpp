#pragma once
/// A list of GPU indices as the command lines give it ("0,1": indices in the order given, no
/// repeats): optimize's --devices and serve's.

#include <string>
#include <vector>

namespace cuopt {

/// The comma-separated items, spaces around each trimmed (an empty item kept as "").
std::vector<std::string> comma_items(const std::string& text);

/// "" when the text is a list of GPU indices, else what is wrong with it.
std::string device_list_problem(const std::string& text);

/// The highest GPU index a list (or --device) may name.
inline constexpr int k_max_device_index = 1023;

/// The indices of a valid list, in order.
std::vector<int> parse_device_list(const std::string& text);

}  // namespace cuopt
