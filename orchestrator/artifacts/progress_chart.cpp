#include "orchestrator/artifacts/progress_chart.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/artifacts/chart_drawing.hpp"

namespace cuopt {

namespace {

const char* const k_chart_title = "best-so-far speedup over the initial kernel, by attempt";

// The plot's frame and scales: x is the attempt's index (0 = the initial kernel), y the
// speedup on a log scale between lo and hi.
struct chart_frame {
    double width = 0, height = 0;
    double left = 0, right = 0, top = 0, bottom = 0;
    double lo = 0.5, hi = 2;
    std::size_t attempts = 0;

    double x(std::size_t i) const {
        return left + (static_cast<double>(i) + 0.5) * (right - left) /
                          static_cast<double>(std::max<std::size_t>(attempts, 1));
    }
    double y(double speedup) const {
        return bottom -
               (std::log(speedup) - std::log(lo)) / (std::log(hi) - std::log(lo)) * (bottom - top);
    }
};

// Speedup ticks within [lo, hi], at most ten: over less than a decade evenly spaced round
// values (0.1, 0.2, 0.5, 1, ... apart); over more, 1-2-5 per decade, else decades.
std::vector<double> speedup_ticks(double lo, double hi) {
    std::vector<double> ticks;
    if (hi / lo < 10) {
        for (double scale = std::pow(10.0, std::floor(std::log10(hi - lo)) - 1);; scale *= 10)
            for (double m : {1.0, 2.0, 5.0}) {
                const double step = m * scale;
                const double first = std::ceil(lo / step), last = std::floor(hi / step);
                if (last - first + 1 > 10) continue;
                for (double k = first; k <= last; ++k) ticks.push_back(k * step);
                return ticks;
            }
    }
    for (const std::vector<double>& set : {std::vector<double>{1, 2, 5}, {1}}) {
        ticks.clear();
        for (int e = static_cast<int>(std::floor(std::log10(lo)));
             e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
            for (double m : set)
                if (const double v = m * std::pow(10.0, e); v >= lo && v <= hi) ticks.push_back(v);
        if (ticks.size() <= 10) return ticks;
    }
    std::vector<double> kept;  // more than ten decades
    for (std::size_t i = 0; i < ticks.size(); i += (ticks.size() + 9) / 10)
        kept.push_back(ticks[i]);
    return kept;
}

std::string speedup_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3gx", v);
    return buf;
}

chart_frame chart_layout(const heatmap_data& d) {
    chart_frame f;
    f.attempts = d.row_labels.size();
    double lo = 1, hi = 1;
    for (double s : d.speedup)
        if (std::isfinite(s) && s > 0) lo = std::min(lo, s), hi = std::max(hi, s);
    // At least a factor 1.3 tall, and a tenth of the span free above and below the points.
    const double span = std::max(std::log(hi / lo), std::log(1.3)), mid = std::log(lo * hi) / 2;
    f.lo = std::exp(mid - span * 0.6);
    f.hi = std::exp(mid + span * 0.6);
    f.width = std::ceil(std::clamp(260.0 + 10.0 * f.attempts, 760.0, 1600.0));
    f.height = 500;
    double tick_w = 0;
    for (double t : speedup_ticks(f.lo, f.hi))
        tick_w = std::max(tick_w, text_width(speedup_text(t), k_text));
    f.left = k_margin + 22 + std::max(tick_w, text_width("rejected", k_note)) + 8;
    f.right = f.width - k_margin - 8;
    f.top = 62;
    f.bottom = f.height - 138;
    return f;
}

// The nearest tick step from 1, 2, 5, 10, 20, 50, ... that leaves at most 15 ticks.
std::size_t attempt_tick_step(std::size_t attempts) {
    for (std::size_t scale = 1;; scale *= 10)
        for (std::size_t m : {1, 2, 5})
            if (attempts <= 15 * m * scale) return m * scale;
}

void draw_axes(cairo_t* cr, const chart_frame& f) {
    cairo_set_line_width(cr, 1);
    for (double t : speedup_ticks(f.lo, f.hi)) {
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, f.left, f.y(t));
        cairo_line_to(cr, f.right, f.y(t));
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        const std::string s = speedup_text(t);
        text_at(cr, f.left - 6 - text_width(s, k_text), f.y(t) + 4, s, k_text);
    }
    const std::size_t step = attempt_tick_step(f.attempts);
    const double strip_bottom = f.bottom + 26;
    for (std::size_t i = 0; i < f.attempts; i += step) {
        const std::string s = std::to_string(i);
        text_at(cr, f.x(i) - text_width(s, k_text) / 2, strip_bottom + 14, s, k_text);
    }
    cairo_set_source_rgb(cr, 0.95, 0.95, 0.95);  // the rejected attempts' strip
    cairo_rectangle(cr, f.left, f.bottom + 5, f.right - f.left, 16);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_rectangle(cr, f.left, f.top, f.right - f.left, f.bottom - f.top);
    cairo_stroke(cr);
    // The initial kernel's level.
    const double dash[] = {5, 4};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, f.left, f.y(1));
    cairo_line_to(cr, f.right, f.y(1));
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    cairo_set_source_rgb(cr, 0, 0, 0);
    const std::string x_label = "attempt, in the order run (0 is the initial kernel)";
    text_at(cr, (f.left + f.right - text_width(x_label, k_bold)) / 2, strip_bottom + 34, x_label,
            k_bold);
    const std::string y_label = "geomean speedup vs initial (log scale)";
    cairo_save(cr);
    cairo_move_to(cr, k_margin + 12, (f.top + f.bottom + text_width(y_label, k_bold)) / 2);
    cairo_rotate(cr, -M_PI / 2);
    select_font(cr, k_bold);
    cairo_show_text(cr, y_label.c_str());
    cairo_restore(cr);
}

void dot(cairo_t* cr, double x, double y, double radius) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, radius, 0, 2 * M_PI);
}

void rejected_mark(cairo_t* cr, double x, double y, const std::string& letter, bool with_letter) {
    cairo_set_source_rgb(cr, 0.72, 0.72, 0.72);
    const double half = with_letter ? 6 : 2.5;
    cairo_rectangle(cr, x - half, y - half, 2 * half, 2 * half);
    cairo_fill(cr);
    if (!with_letter) return;
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, x - text_width(letter, k_note) / 2, y + 3.5, letter, k_note);
}

void set_best_line(cairo_t* cr) {
    cairo_set_source_rgb(cr, 0.1, 0.55, 0.25);
    cairo_set_line_width(cr, 2);
}

// The search's best so far: level from one new best to the next, on to the last attempt.
void draw_best_line(cairo_t* cr, const heatmap_data& d, const chart_frame& f) {
    std::optional<double> level;
    set_best_line(cr);
    for (std::size_t i = 0; i < f.attempts; ++i) {
        if (!d.became_best[i] || !std::isfinite(d.speedup[i])) continue;
        if (level)
            cairo_line_to(cr, f.x(i), f.y(*level));
        else
            cairo_move_to(cr, f.x(i), f.y(d.speedup[i]));
        level = d.speedup[i];
        cairo_line_to(cr, f.x(i), f.y(*level));
    }
    if (!level) {
        cairo_new_path(cr);
        return;
    }
    cairo_line_to(cr, f.x(f.attempts - 1), f.y(*level));
    cairo_stroke(cr);
}

void draw_points(cairo_t* cr, const heatmap_data& d, const chart_frame& f) {
    const double pitch = f.attempts ? (f.right - f.left) / f.attempts : 20;
    const double radius = std::clamp(pitch / 3, 2.0, 4.0);
    for (std::size_t i = 0; i < f.attempts; ++i) {
        if (d.rejected[i]) {
            rejected_mark(cr, f.x(i), f.bottom + 13, reason_letter(*d.rejected[i]), pitch >= 13);
            continue;
        }
        if (!std::isfinite(d.speedup[i])) continue;
        if (d.became_best[i])
            cairo_set_source_rgb(cr, 0.1, 0.55, 0.25);
        else
            cairo_set_source_rgb(cr, 0.2, 0.4, 0.75);
        dot(cr, f.x(i), f.y(d.speedup[i]), d.became_best[i] ? radius + 1 : radius);
        cairo_fill(cr);
        if (!d.best[i]) continue;
        cairo_set_source_rgb(cr, 0.9, 0.45, 0);
        cairo_set_line_width(cr, 2);
        dot(cr, f.x(i), f.y(d.speedup[i]), radius + 5);
        cairo_stroke(cr);
    }
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    text_at(cr, f.left - 6 - text_width("rejected", k_note), f.bottom + 17, "rejected", k_note);
}

enum class legend_symbol { valid, new_best, best_line, winner, initial_level, rejected };

void draw_symbol(cairo_t* cr, legend_symbol kind, double cx, double cy) {
    const double dash[] = {5, 4};
    switch (kind) {
        case legend_symbol::valid:
        case legend_symbol::new_best:
            if (kind == legend_symbol::valid)
                cairo_set_source_rgb(cr, 0.2, 0.4, 0.75);
            else
                cairo_set_source_rgb(cr, 0.1, 0.55, 0.25);
            dot(cr, cx, cy, kind == legend_symbol::valid ? 3.5 : 4.5);
            cairo_fill(cr);
            return;
        case legend_symbol::best_line:
            set_best_line(cr);
            break;
        case legend_symbol::initial_level:
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
            cairo_set_line_width(cr, 1);
            cairo_set_dash(cr, dash, 2, 0);
            break;
        case legend_symbol::winner:
            cairo_set_source_rgb(cr, 0.9, 0.45, 0);
            cairo_set_line_width(cr, 2);
            dot(cr, cx, cy, 7);
            cairo_stroke(cr);
            return;
        case legend_symbol::rejected:
            rejected_mark(cr, cx, cy, "C", true);
            return;
    }
    cairo_move_to(cr, cx - 10, cy);
    cairo_line_to(cr, cx + 10, cy);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
}

// The legend: a symbol and its words per item, wrapped inside the canvas.
void draw_chart_legend(cairo_t* cr, const chart_frame& f) {
    const std::pair<legend_symbol, const char*> items[] = {
        {legend_symbol::valid, "valid attempt"},
        {legend_symbol::new_best, "new best in the search"},
        {legend_symbol::best_line, "best so far"},
        {legend_symbol::winner, "declared winner (after the evidence gates)"},
        {legend_symbol::initial_level, "the initial kernel (1x)"},
        {legend_symbol::rejected, "rejected, with its reason class (letters as in heatmap.png)"}};
    double x = k_margin, y = f.height - 40;
    for (const auto& [kind, words] : items) {
        const double w = 26 + text_width(words, k_text) + 18;
        if (x > k_margin && x + w > f.width - k_margin) x = k_margin, y += k_line + 4;
        draw_symbol(cr, kind, x + 10, y - 4);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x + 26, y, words, k_text);
        x += w;
    }
}

std::string fixed_speedup(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3fx", v);
    return buf;
}

std::string chart_subtitle(const heatmap_data& d) {
    std::size_t valid = 0;
    std::string winner = "no winner";
    for (std::size_t i = 0; i < d.row_labels.size(); ++i) {
        valid += !d.rejected[i];
        if (d.best[i] && std::isfinite(d.speedup[i]))
            winner = "winner " + fixed_speedup(d.speedup[i]) + " (" + d.row_labels[i] + ")";
    }
    return std::to_string(d.row_labels.size()) + " attempts, " + std::to_string(valid) +
           " valid, " + std::to_string(d.row_labels.size() - valid) + " rejected; " + winner;
}

void draw_chart(cairo_t* cr, const heatmap_data& d, const chart_frame& f) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, k_margin, 26, k_chart_title, k_title);
    text_at(cr, k_margin, 46, fit_text(chart_subtitle(d), f.width - 2 * k_margin, k_text), k_text);
    draw_axes(cr, f);
    draw_best_line(cr, d, f);
    draw_points(cr, d, f);
    draw_chart_legend(cr, f);
}

}  // namespace

void write_progress_chart(const heatmap_data& d, const std::filesystem::path& folder) {
    const chart_frame f = chart_layout(d);
    write_svg_and_png(folder, "best-so-far", f.width, f.height, k_chart_title,
                      [&](cairo_t* cr) { draw_chart(cr, d, f); });
}

}  // namespace cuopt
