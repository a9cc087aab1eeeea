// The dashboard's stylesheet and script, served as /static/dashboard.css and .js (the pages'
// Content-Security-Policy allows no inline code): system fonts, no network beyond the API. The
// files are orchestrator/service/assets/, embedded at build time (cmake/embed.cmake).
#include "orchestrator/service/dashboard_pages.hpp"

extern const unsigned char dashboard_css_asset[];
extern const std::size_t dashboard_css_asset_size;
extern const unsigned char dashboard_js_asset[];
extern const std::size_t dashboard_js_asset_size;

namespace cuopt {

std::string_view dashboard_css() {
    return {reinterpret_cast<const char*>(dashboard_css_asset), dashboard_css_asset_size};
}

std::string_view dashboard_js() {
    return {reinterpret_cast<const char*>(dashboard_js_asset), dashboard_js_asset_size};
}

}  // namespace cuopt
