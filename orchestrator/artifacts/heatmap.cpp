#include "orchestrator/artifacts/heatmap.hpp"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "common/file_io.hpp"

namespace cuopt {

namespace {

constexpr double k_margin = 12, k_cell_h = 20, k_top = 70, k_line = 16;
constexpr text_style k_title{15, true}, k_text{11, false}, k_bold{11, true}, k_note{10, false};
constexpr double k_swatch_ratios[] = {2.0, 1.41, 1.0, 0.71, 0.5};
constexpr double k_swatch_w = 70, k_max_column_width = 320;
const char* const k_heatmap_title =
    "speedup over the initial kernel, per attempt (rows) and performance case (columns)";
const char* const k_chart_title = "best-so-far speedup over the initial kernel, by attempt";

// ---- drawing and measuring text ----

void select_font(cairo_t* cr, text_style st) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           st.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, st.size);
}

void text_at(cairo_t* cr, double x, double y, const std::string& s, text_style st) {
    select_font(cr, st);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s.c_str());
}

// Text measured before any canvas exists: one small image surface for the whole program.
cairo_t* measuring_context() {
    static cairo_surface_t* const surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    static cairo_t* const cr = cairo_create(surface);
    return cr;
}

// Items ("C compile error", or words) joined by `gap` into lines no wider than max_width; an
// item wider than a line loses its middle.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, double max_width,
                                    text_style st, const std::string& gap = "   ") {
    std::vector<std::string> lines;
    std::string line;
    for (const std::string& item : items) {
        const std::string fitted = fit_text(item, max_width, st);
        const std::string longer = line.empty() ? fitted : line + gap + fitted;
        if (line.empty() || text_width(longer, st) <= max_width) {
            line = longer;
            continue;
        }
        lines.push_back(line);
        line = fitted;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

// ---- the heatmap ----

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

// ---- the best-so-far chart ----

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

// ---- both surfaces from one drawing ----

void check_cairo(cairo_status_t status, const std::string& file) {
    if (status != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error(file + ": " + cairo_status_to_string(status));
}

// An SVG's <title>: cairo draws text as glyph outlines, so this is the words a reader (or a
// search) finds.
void add_svg_title(const std::string& file, const std::string& title) {
    std::string svg = read_text_file(file);
    const auto open = svg.find("<svg");
    const auto end = open == std::string::npos ? open : svg.find('>', open);
    if (end == std::string::npos) return;
    std::string escaped;
    for (char ch : title)
        escaped += ch == '&'   ? "&amp;"
                   : ch == '<' ? "&lt;"
                   : ch == '>' ? "&gt;"
                               : std::string(1, ch);
    svg.insert(end + 1, "\n<title>" + escaped + "</title>");
    write_file_atomic(file, svg);
}

void render(const std::filesystem::path& folder, const std::string& stem, double width,
            double height, const std::string& title, const std::function<void(cairo_t*)>& draw) {
    const std::string svg = (folder / (stem + ".svg")).string(),
                      png = (folder / (stem + ".png")).string();
    cairo_surface_t* s = cairo_svg_surface_create(svg.c_str(), width, height);
    cairo_t* cr = cairo_create(s);
    draw(cr);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    const cairo_status_t svg_status = cairo_surface_status(s);
    cairo_surface_destroy(s);
    check_cairo(svg_status, svg);
    add_svg_title(svg, title);
    s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(width),
                                   static_cast<int>(height));
    cr = cairo_create(s);
    draw(cr);
    cairo_destroy(cr);
    const cairo_status_t png_status = cairo_surface_write_to_png(s, png.c_str());
    cairo_surface_destroy(s);
    check_cairo(png_status, png);
}

}  // namespace

double text_width(const std::string& s, text_style style) {
    cairo_t* cr = measuring_context();
    select_font(cr, style);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s.c_str(), &e);
    return std::max(e.x_advance, e.x_bearing + e.width);
}

std::string fit_text(const std::string& s, double max_width, text_style style) {
    if (text_width(s, style) <= max_width) return s;
    std::vector<std::size_t> starts;  // where each UTF-8 character starts, then the end
    for (std::size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
    starts.push_back(s.size());
    const std::size_t n = starts.size() - 1;
    auto keep = [&](std::size_t k) {  // k characters: the larger half from the start
        return s.substr(0, starts[(k + 1) / 2]) + "\u2026" + s.substr(starts[n - k / 2]);
    };
    std::size_t lo = 0, hi = n > 0 ? n - 1 : 0;
    while (lo < hi) {
        const std::size_t mid = (lo + hi + 1) / 2;
        if (text_width(keep(mid), style) <= max_width)
            lo = mid;
        else
            hi = mid - 1;
    }
    return keep(lo);
}

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
    render(folder, "heatmap", l.width, l.height, k_heatmap_title,
           [&](cairo_t* cr) { draw_heatmap(cr, d, l); });
    const chart_frame f = chart_layout(d);
    render(folder, "best-so-far", f.width, f.height, k_chart_title,
           [&](cairo_t* cr) { draw_chart(cr, d, f); });
}

}  // namespace cuopt
