#include "orchestrator/artifacts/chart_drawing.hpp"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <stdexcept>

#include "common/file_io.hpp"

namespace cuopt {

namespace {

// Text measured before any canvas exists: one small image surface for the whole program.
cairo_t* measuring_context() {
    static cairo_surface_t* const surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    static cairo_t* const cr = cairo_create(surface);
    return cr;
}

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

}  // namespace

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

std::vector<std::string> wrap_items(const std::vector<std::string>& items, double max_width,
                                    text_style st, const std::string& gap) {
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

void write_svg_and_png(const std::filesystem::path& folder, const std::string& stem, double width,
                       double height, const std::string& title,
                       const std::function<void(cairo_t*)>& draw) {
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

}  // namespace cuopt
