#include "orchestrator/artifacts/heatmap.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "orchestrator/artifacts/progress_chart.hpp"

namespace cuopt {

namespace {

constexpr double k_cell_h = 20, k_top = 70;
constexpr double k_swatch_ratios[] = {2.0, 1.41, 1.0, 0.71, 0.5};
constexpr double k_swatch_w = 70, k_max_column_width = 320;
const char* const k_heatmap_title =
    "speedup over the initial kernel, per attempt (rows) and performance case (columns)";

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
        case verdict::impossible_time:
            return {"L", "faster than the speed-of-light floor"};
        case verdict::invalid_timing:
            return {"M", "mistimed (another kernel in a sample)"};
        case verdict::mutates_inputs:
            return {"A", "wrote into an input"};
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

std::string row_label(const heatmap_data& d, std::size_t r) {
    return (d.best[r] ? "* " : "  ") + d.row_labels[r];
}

// The legend's words: every reason class, then what the star and the cells mean.
std::vector<std::string> legend_lines(double max_width) {
    std::vector<std::string> items{"rejected (grey):"};
    for (const auto& entry : k_verdicts.entries)
        if (entry.value != verdict::valid)
            items.push_back(std::string(reason_class(entry.value).first) + " " +
                            reason_class(entry.value).second);
    std::vector<std::string> lines = wrap_items(items, max_width, k_note);
    std::vector<std::string> words;
    std::istringstream note(
        "* the declared winner. Each cell is the initial kernel's median over the attempt's "
        "(above 1x is faster); best-so-far.png shows the run's progress.");
    for (std::string w; note >> w;) words.push_back(w);
    for (const std::string& line : wrap_items(words, max_width, k_note, " ")) lines.push_back(line);
    return lines;
}

double swatch_row_width() {
    return text_width("speedup vs initial:", k_bold) + 10 + 5 * k_swatch_w;
}

void draw_cell(cairo_t* cr, const heatmap_data& d, std::size_t r, std::size_t c, double x, double y,
               double w) {
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
    cairo_rectangle(cr, x, y, w - 2, k_cell_h - 2);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, x + 6, y + 14, label, k_text);
}

void draw_legend(cairo_t* cr, const heatmap_layout& l) {
    const double y = l.legend_top + 14;
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, k_margin, y, "speedup vs initial:", k_bold);
    const double x0 = k_margin + text_width("speedup vs initial:", k_bold) + 10;
    for (int i = 0; i < 5; ++i) {
        ratio_colour(cr, k_swatch_ratios[i]);
        cairo_rectangle(cr, x0 + i * k_swatch_w, y - 13, k_swatch_w - 4, 18);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        char buf[32];  // the ends of the scale stand for everything beyond them
        std::snprintf(buf, sizeof buf, "%s%.2fx",
                      i == 0   ? "\u2264"
                      : i == 4 ? "\u2265"
                               : "",
                      1.0 / k_swatch_ratios[i]);
        text_at(cr, x0 + i * k_swatch_w + 8, y, buf, k_text);
    }
    for (std::size_t i = 0; i < l.legend_lines.size(); ++i)
        text_at(cr, k_margin, y + 24 + i * k_line, l.legend_lines[i], k_note);
}

void draw_heatmap(cairo_t* cr, const heatmap_data& d, const heatmap_layout& l) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, k_margin, 26, k_heatmap_title, k_title);
    const double x0 = k_margin + l.label_width;
    for (std::size_t c = 0; c < l.column_text.size(); ++c)
        text_at(cr, x0 + c * l.cell_width + 4, k_top - 8, l.column_text[c], k_bold);
    for (std::size_t r = 0; r < l.row_text.size(); ++r) {
        const double y = k_top + r * k_cell_h;
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, k_margin, y + 14, l.row_text[r], d.best[r] ? k_bold : k_text);
        for (std::size_t c = 0; c < d.columns.size(); ++c)
            draw_cell(cr, d, r, c, x0 + c * l.cell_width, y, l.cell_width);
    }
    draw_legend(cr, l);
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
        d.row_labels.push_back(r.id() + " " + r.cand.label);
        d.rejected.push_back(r.verdict == verdict::valid ? std::nullopt
                                                         : std::optional<verdict>(r.verdict));
        d.best.push_back(o.best && *o.best == i);
        d.speedup.push_back(r.verdict == verdict::valid && r.speedup_vs_initial
                                ? *r.speedup_vs_initial
                                : std::nan(""));
        d.became_best.push_back(r.became_best);
        std::vector<double> row;
        for (const auto& col : d.columns) row.push_back(median(i, col) / median(o.initial, col));
        d.ratio.push_back(row);
    }
    return d;
}

heatmap_layout layout_heatmap(const heatmap_data& d) {
    heatmap_layout l;
    double widest = 0;
    for (std::size_t r = 0; r < d.row_labels.size(); ++r)
        widest = std::max(widest, text_width(row_label(d, r), d.best[r] ? k_bold : k_text));
    const double label_max = std::min(widest, heatmap_layout::k_max_label_width);
    l.label_width = label_max + 16;
    for (std::size_t r = 0; r < d.row_labels.size(); ++r)
        l.row_text.push_back(fit_text(row_label(d, r), label_max, d.best[r] ? k_bold : k_text));
    l.cell_width = std::max(90.0, text_width("0.000x", k_text) + 16);
    for (const std::string& c : d.columns) {
        l.column_text.push_back(fit_text(c, k_max_column_width, k_bold));
        l.cell_width = std::max(l.cell_width, text_width(l.column_text.back(), k_bold) + 14);
    }
    l.width = std::ceil(std::max({k_margin + l.label_width + d.columns.size() * l.cell_width,
                                  text_width(k_heatmap_title, k_title), swatch_row_width()}) +
                        2 * k_margin);
    l.legend_lines = legend_lines(l.width - 2 * k_margin);
    l.legend_top = k_top + d.row_labels.size() * k_cell_h + 10;
    l.height = std::ceil(l.legend_top + 14 + 24 + l.legend_lines.size() * k_line + k_margin);
    return l;
}

void write_heatmap(const heatmap_data& d, const std::filesystem::path& folder) {
    const heatmap_layout l = layout_heatmap(d);
    write_svg_and_png(folder, "heatmap", l.width, l.height, k_heatmap_title,
                      [&](cairo_t* cr) { draw_heatmap(cr, d, l); });
    write_progress_chart(d, folder);
}

}  // namespace cuopt
