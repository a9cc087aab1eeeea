// report.html's stylesheet and script, inline in the page: system fonts only, no network. The
// files are orchestrator/artifacts/assets/, embedded at build time (cmake/embed.cmake).
#include "orchestrator/artifacts/report_sections.hpp"

extern const unsigned char report_error_catcher_asset[];
extern const std::size_t report_error_catcher_asset_size;
extern const unsigned char report_css_asset[];
extern const std::size_t report_css_asset_size;
extern const unsigned char report_js_asset[];
extern const std::size_t report_js_asset_size;

namespace cuopt::report {

std::string_view error_catcher_js() {
    return {reinterpret_cast<const char*>(report_error_catcher_asset),
            report_error_catcher_asset_size};
}

std::string_view report_css() {
    return {reinterpret_cast<const char*>(report_css_asset), report_css_asset_size};
}

std::string_view report_js() {
    return {reinterpret_cast<const char*>(report_js_asset), report_js_asset_size};
}

std::string fake_run_banner() {
    return "<div id=\"fake-run\" role=\"alert\" style=\"margin:12px 0;padding:12px 16px;"
           "border:3px dashed #b71c1c;background:#fff3e0;color:#b71c1c;font-weight:700;"
           "font-size:16px\">FAKE RUN: a stand-in harness (fake-harness) simulated the GPU. No "
           "time, clock, power, speedup or verdict on this page was measured on a GPU.</div>\n";
}

}  // namespace cuopt::report
