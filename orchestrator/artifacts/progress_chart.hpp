#pragma once
/// best-so-far: the run's progress in one picture, drawn from the heatmap's data. The
/// geomean speedup of every valid attempt against attempt number (log scale), the
/// search's best so far as a step line, the declared winner ringed and the rejected
/// attempts marked along the bottom with their reason class, so a reader sees at once
/// whether the search was still improving when it stopped.

#include <filesystem>

#include "orchestrator/artifacts/heatmap.hpp"

namespace cuopt {

/// Writes best-so-far.svg and best-so-far.png into `folder`; throws std::runtime_error on a
/// cairo failure.
void write_progress_chart(const heatmap_data& data, const std::filesystem::path& folder);

}  // namespace cuopt
