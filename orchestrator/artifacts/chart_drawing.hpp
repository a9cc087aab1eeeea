#pragma once
/// What the run's pictures (heatmap, best-so-far) draw with: one sans-serif text style
/// and the sizes both share, text measured before any canvas exists (so a layout can
/// size its canvas from its words), words wrapped into lines that fit, and one drawing
/// played onto an SVG and a PNG surface. Only the .cpp files include cairo; this header
/// names cairo_t as cairo.h does.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

typedef struct _cairo cairo_t;

namespace cuopt {

/// The pictures' text: sans-serif at `size` pixels.
struct text_style {
    double size = 11;
    bool bold = false;
};

/// Sizes both pictures share: the canvas margin and a legend line's height, in pixels.
inline constexpr double k_margin = 12, k_line = 16;
inline constexpr text_style k_title{15, true}, k_text{11, false}, k_bold{11, true},
    k_note{10, false};

/// How far `s` advances in `style` (cairo's text extents), in pixels.
double text_width(const std::string& s, text_style style);

/// `s` when it fits in `max_width`, else its start and end around a "…" that fit (whole
/// UTF-8 characters), so both an attempt's number and its last option stay readable.
std::string fit_text(const std::string& s, double max_width, text_style style);

/// Items ("C compile error", or words) joined by `gap` into lines no wider than max_width;
/// an item wider than a line loses its middle.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, double max_width,
                                    text_style st, const std::string& gap = "   ");

void select_font(cairo_t* cr, text_style st);
/// `s` with its baseline starting at (x, y), in the current colour.
void text_at(cairo_t* cr, double x, double y, const std::string& s, text_style st);

/// Plays `draw` onto folder/stem.svg (titled `title`, as cairo draws text as outlines) and
/// folder/stem.png, both width x height; throws std::runtime_error on a cairo failure.
void write_svg_and_png(const std::filesystem::path& folder, const std::string& stem, double width,
                       double height, const std::string& title,
                       const std::function<void(cairo_t*)>& draw);

}  // namespace cuopt
