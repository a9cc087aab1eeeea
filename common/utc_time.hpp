#pragma once
/// The time as the records write it: UTC, ISO 8601, to the second ("2026-12-02T01:05:00Z").

#include <string>

namespace cuopt {

/// Now, in UTC: "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace cuopt
