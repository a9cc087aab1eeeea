#pragma once
/// The run at a glance: one row per attempt, one column per performance case, each
/// cell coloured by latency relative to the initial kernel (green faster, red slower,
/// log scale), rejected attempts grey with their reason class. Drawn once with cairo
/// onto an SVG and a PNG surface from the same data.

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

struct heatmap_data {
    std::vector<std::string> columns;              // performance case names
    std::vector<std::string> row_labels;           // "0.0 initial.cu", "3.2 TILE=32 ..."
    std::vector<std::vector<double>> ratio;        // median / initial median; NaN when not measured
    std::vector<std::optional<verdict>> rejected;  // nullopt for valid rows
    std::vector<bool> best;                        // the row that ended as best
};

heatmap_data make_heatmap_data(const search_outcome& outcome, const manifest& m);

/// Writes heatmap.svg and heatmap.png into `folder`; throws std::runtime_error on a cairo failure.
void write_heatmap(const heatmap_data& data, const std::filesystem::path& folder);

/// The one-letter class drawn in a rejected cell, e.g. compile_error -> "C".
std::string reason_letter(verdict v);

}  // namespace cuopt
