#include "orchestrator/artifacts/heatmap.hpp"

#include <cairo-svg.h>
#include <cairo.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace cuopt {

namespace {

constexpr double k_cell_w = 110, k_cell_h = 20, k_left = 300, k_top = 70, k_legend_h = 90;

// How a rejected cell is drawn: a letter and, for the legend, what it stands for. The
// switch names every verdict, so the compiler (-Wswitch) flags one added without a class.
std::pair<const char*, const char*> reason_class(verdict v) {
    switch (v) {
        case verdict::valid:
            return {"", "valid"};
        case verdict::compile_error:
            return {"C", "compile error"};
        case verdict::invalid_request:
            return {"I", "invalid launch/request"};
        case verdict::invalid_submission:
            return {"S", "invalid submission"};
        case verdict::cuda_error:
            return {"E", "CUDA error"};
        case verdict::crash:
            return {"X", "crash"};
        case verdict::timeout:
            return {"T", "timeout"};
        case verdict::wrong_output:
            return {"W", "wrong output"};
        case verdict::unwritten_output:
            return {"U", "unwritten output"};
        case verdict::nan_output:
            return {"N", "NaN/Inf output"};
        case verdict::harness_error:
            return {"H", "harness error"};
    }
    return {"?", "unknown"};
}

// Log-scale colour: ratio 0.5 (2x faster) deep green, 1 white, 2 (2x slower) deep red.
void ratio_colour(cairo_t* cr, double ratio) {
    const double t = std::max(-1.0, std::min(1.0, std::log2(ratio)));
    if (t < 0)
        cairo_set_source_rgb(cr, 1 + 0.85 * t, 1 + 0.25 * t, 1 + 0.85 * t);
    else
        cairo_set_source_rgb(cr, 1 - 0.1 * t, 1 - 0.85 * t, 1 - 0.85 * t);
}

void text_at(cairo_t* cr, double x, double y, const std::string& s, double size,
             bool bold = false) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s.c_str());
}

void draw(cairo_t* cr, const heatmap_data& d, double height) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(
        cr, 10, 24,
        "latency relative to the initial kernel, per attempt (rows) and performance case (columns)",
        14, true);
    for (std::size_t c = 0; c < d.columns.size(); ++c) {
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, k_left + c * k_cell_w + 4, k_top - 8, d.columns[c].substr(0, 16), 11, true);
    }
    for (std::size_t r = 0; r < d.row_labels.size(); ++r) {
        const double y = k_top + r * k_cell_h;
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, 10, y + 14, (d.best[r] ? "* " : "  ") + d.row_labels[r].substr(0, 40), 11,
                d.best[r]);
        for (std::size_t c = 0; c < d.columns.size(); ++c) {
            const double x = k_left + c * k_cell_w;
            std::string label;
            if (d.rejected[r]) {
                cairo_set_source_rgb(cr, 0.78, 0.78, 0.78);
                label = reason_letter(*d.rejected[r]);
            } else if (std::isnan(d.ratio[r][c])) {
                cairo_set_source_rgb(cr, 0.93, 0.93, 0.93);
                label = "-";
            } else {
                ratio_colour(cr, d.ratio[r][c]);
                char buf[32];
                std::snprintf(buf, sizeof buf, "%.3fx", 1.0 / d.ratio[r][c]);
                label = buf;
            }
            cairo_rectangle(cr, x, y, k_cell_w - 2, k_cell_h - 2);
            cairo_fill(cr);
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            text_at(cr, x + 6, y + 14, label, 11);
        }
    }
    // Legend: the colour scale (as speedups) and the reason letters.
    const double ly = height - k_legend_h + 20;
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, 10, ly, "speedup vs initial:", 11, true);
    const double ratios[] = {2.0, 1.41, 1.0, 0.71, 0.5};
    for (int i = 0; i < 5; ++i) {
        ratio_colour(cr, ratios[i]);
        cairo_rectangle(cr, 140 + i * 70, ly - 13, 66, 18);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2fx", 1.0 / ratios[i]);
        text_at(cr, 148 + i * 70, ly, buf, 11);
    }
    std::string reasons = "rejected (grey): ";
    for (const auto& entry : k_verdicts.entries)
        if (entry.value != verdict::valid)
            reasons += std::string(reason_class(entry.value).first) + " " +
                       reason_class(entry.value).second + "   ";
    text_at(cr, 10, ly + 28, reasons, 10);
    text_at(
        cr, 10, ly + 48,
        "* the attempt that ended as best; cells show speedup (initial median / attempt median)",
        10);
}

}  // namespace

std::string reason_letter(verdict v) {
    return reason_class(v).first;
}

heatmap_data make_heatmap_data(const search_outcome& o, const manifest& m) {
    heatmap_data d;
    for (const auto& mc : m.cases)
        if (mc.kind == case_kind::performance) d.columns.push_back(mc.name);
    auto median = [&o](std::optional<std::size_t> attempt, const std::string& name) {
        return o.median_ms(attempt, name).value_or(std::nan(""));
    };
    for (std::size_t i = 0; i < o.history.size(); ++i) {
        const attempt_result& r = o.history[i];
        d.row_labels.push_back(std::to_string(r.iteration) + "." + std::to_string(r.attempt) + " " +
                               r.cand.label);
        d.rejected.push_back(r.verdict == verdict::valid ? std::nullopt
                                                         : std::optional<verdict>(r.verdict));
        d.best.push_back(o.best && *o.best == i);
        std::vector<double> row;
        for (const auto& col : d.columns) row.push_back(median(i, col) / median(o.initial, col));
        d.ratio.push_back(row);
    }
    return d;
}

void write_heatmap(const heatmap_data& d, const std::filesystem::path& folder) {
    const double width = std::max(900.0, k_left + d.columns.size() * k_cell_w + 20);
    const double height = k_top + d.row_labels.size() * k_cell_h + k_legend_h;
    const std::string svg = (folder / "heatmap.svg").string(),
                      png = (folder / "heatmap.png").string();
    cairo_surface_t* s = cairo_svg_surface_create(svg.c_str(), width, height);
    cairo_t* cr = cairo_create(s);
    draw(cr, d, height);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    const cairo_status_t svg_status = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (svg_status != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error(svg + ": " + cairo_status_to_string(svg_status));
    s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(width),
                                   static_cast<int>(height));
    cr = cairo_create(s);
    draw(cr, d, height);
    cairo_destroy(cr);
    const cairo_status_t png_status = cairo_surface_write_to_png(s, png.c_str());
    cairo_surface_destroy(s);
    if (png_status != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error(png + ": " + cairo_status_to_string(png_status));
}

}  // namespace cuopt
