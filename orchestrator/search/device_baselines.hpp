#pragma once
/// GPUs of one model still differ by a few percent, so a search on several GPUs scores each
/// attempt against the initial kernel measured on the same device: its speedup is
/// initial(its device) / its geomean, and it is ranked by its geomean on the first device's
/// scale, geomean x initial(first device) / initial(its device). With one device both are
/// exactly what they were (the factor is 1).

#include <optional>
#include <string>

#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// The initial kernel's measurement on `device`: iteration 0 on its own device, an extra
/// baseline elsewhere; nullptr when that device has none.
const attempt_result* initial_on(const search_outcome& o, int device);

/// The initial kernel's geomean on `device`, where measured and valid.
std::optional<double> initial_geomean_ms(const search_outcome& o, int device);

/// An attempt's geomean on the first device's scale (its own where no initial is known yet).
std::optional<double> normalised_geomean_ms(const search_outcome& o, const attempt_result& r);

/// The initial kernel's median of one case on `device`.
std::optional<double> initial_median_ms(const search_outcome& o, int device,
                                        const std::string& case_name);

}  // namespace cuopt
