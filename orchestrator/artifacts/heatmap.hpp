#pragma once
/// The run at a glance, drawn with cairo onto an SVG and a PNG surface from the same data:
/// one row per attempt, one column per performance case, each cell coloured by its
/// speedup over the initial kernel (green faster, red slower, log scale), rejected
/// attempts grey with their reason class. heatmap_data also feeds the best-so-far chart
/// (progress_chart), which write_heatmap draws beside it.

#include <filesystem>
#include <string>
#include <vector>

#include "orchestrator/artifacts/chart_drawing.hpp"
#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

struct heatmap_data {
    std::vector<std::string> columns;              // performance case names
    std::vector<std::string> row_labels;           // "0.0 initial.cu", "3.2 TILE=32 ..."
    std::vector<std::vector<double>> ratio;        // median / initial median; NaN when not measured
    std::vector<std::optional<verdict>> rejected;  // nullopt for valid rows
    std::vector<bool> best;                        // the row that ended as best (declared winner)
    std::vector<double> speedup;    // geomean speedup over the initial kernel; NaN when none
    std::vector<bool> became_best;  // the search's best so far changed at this row
};

heatmap_data make_heatmap_data(const search_outcome& outcome, const manifest& m);

/// Writes heatmap.svg, heatmap.png, best-so-far.svg and best-so-far.png into `folder`;
/// throws std::runtime_error on a cairo failure.
void write_heatmap(const heatmap_data& data, const std::filesystem::path& folder);

/// The one-letter class drawn in a rejected cell, e.g. compile_error -> "C".
std::string reason_letter(verdict v);

/// Where the heatmap's parts go, from measured text: the label column as wide as the
/// widest label (labels beyond k_max_label_width lose their middle), each column as wide
/// as its header, the legend wrapped into lines that fit the canvas.
struct heatmap_layout {
    static constexpr double k_max_label_width = 560;
    double width = 0, height = 0;
    double label_width = 0;  // the row-label column, from the left margin
    double cell_width = 0;
    double legend_top = 0;
    std::vector<std::string> row_text;      // as drawn
    std::vector<std::string> column_text;   // as drawn
    std::vector<std::string> legend_lines;  // the reason classes and the notes, wrapped
};

heatmap_layout layout_heatmap(const heatmap_data& data);

}  // namespace cuopt
