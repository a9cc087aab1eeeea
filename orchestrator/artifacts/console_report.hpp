#pragma once
/// What a run prints on stderr while it works: one progress line per attempt and the
/// closing table of per-case latencies. Reads results, never decides anything.

#include <map>
#include <optional>
#include <string>

#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// "0.0123 ms", or "-" when there is no figure.
std::string format_ms(std::optional<double> ms);

/// "[iter 3.1] autotune BLOCK=64  valid  geomean 0.0123 ms  1.20x  NEW BEST".
std::string progress_line(const attempt_result& r, const search_outcome& o);

/// Per case: the initial kernel's median, the best's and the speedup.
/// With vendor medians (by case), two more columns: the vendor's time and vendor / best (above
/// 1: the best beats the library).
std::string closing_table(const search_outcome& o, const manifest& m,
                          const std::map<std::string, double>& vendor_ms = {});

}  // namespace cuopt
