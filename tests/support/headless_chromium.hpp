#pragma once
/// Debian's chromium, headless, for the tests that render report.html: where it is, and the
/// page's DOM after its scripts ran, its console messages and a screenshot. Tests that need it
/// skip with a printed reason where it is absent (REQUIRE_CHROMIUM_OR_SKIP).

#include <filesystem>
#include <string>

namespace cuopt::test {

/// The chromium binary ($CUOPT_CHROMIUM, else chromium or chromium-browser on PATH), or "".
std::string chromium_binary();

struct rendered_page {
    int exit_code = -1;
    std::string dom;      // --dump-dom: the DOM after the page's scripts ran
    std::string console;  // chromium's stderr with --enable-logging=stderr: console messages
};

/// Loads a local file headless (no sandbox, no GPU, a fresh profile under `scratch`) in a
/// `width` x `height` window and dumps the DOM; with `screenshot`, saves a PNG of it there too.
rendered_page render_headless(const std::filesystem::path& page,
                              const std::filesystem::path& scratch,
                              const std::filesystem::path& screenshot = {}, int width = 1400,
                              int height = 2400);

}  // namespace cuopt::test

/// Skips the rest of a test with the reason printed, where no chromium is installed.
#define REQUIRE_CHROMIUM_OR_SKIP()                                                               \
    do {                                                                                         \
        if (::cuopt::test::chromium_binary().empty()) {                                          \
            WARN("skipped: no chromium here (apt-get install chromium, or set CUOPT_CHROMIUM)"); \
            return;                                                                              \
        }                                                                                        \
    } while (0)
