#include "headless_chromium.hpp"

#include <sys/wait.h>

#include <cstdlib>

#include "common/file_io.hpp"

namespace cuopt::test {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
        std::error_code ec;
        if (end > start && fs::is_regular_file(candidate, ec)) return candidate.string();
        start = end + 1;
    }
    return "";
}

// The flags every run gets: headless, as root in a container (no sandbox), no GPU, a throwaway
// profile, console messages on stderr, and time for the page's scripts to run.
std::string chromium_command(const fs::path& scratch) {
    return quoted(chromium_binary()) +
           " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
           " --disable-extensions --hide-scrollbars --mute-audio --enable-logging=stderr --v=0"
           " --virtual-time-budget=5000 --user-data-dir=" +
           quoted((scratch / "chromium-profile").string());
}

int run_shell(const std::string& command) {
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_or_empty(const fs::path& file) {
    try {
        return read_text_file(file);
    } catch (const std::exception&) {
        return "";
    }
}

}  // namespace

std::string chromium_binary() {
    if (const char* given = std::getenv("CUOPT_CHROMIUM"); given && *given) return given;
    for (const char* name : {"chromium", "chromium-browser"})
        if (std::string found = on_path(name); !found.empty()) return found;
    return "";
}

rendered_page render_headless(const fs::path& page, const fs::path& scratch,
                              const fs::path& screenshot, int width, int height) {
    const std::string url = "file://" + fs::absolute(page).string();
    const fs::path dom = scratch / "chromium-dom.html", log = scratch / "chromium-console.txt";
    rendered_page r;
    const std::string size =
        " --window-size=" + std::to_string(width) + "," + std::to_string(height);
    r.exit_code = run_shell(chromium_command(scratch) + size + " --dump-dom " + quoted(url) + " >" +
                            quoted(dom.string()) + " 2>" + quoted(log.string()));
    r.dom = read_or_empty(dom);
    r.console = read_or_empty(log);
    if (!screenshot.empty() && r.exit_code == 0) {
        r.exit_code =
            run_shell(chromium_command(scratch) + " --screenshot=" + quoted(screenshot.string()) +
                      size + " " + quoted(url) + " >>" + quoted(log.string()) + " 2>&1");
        r.console = read_or_empty(log);
    }
    return r;
}

}  // namespace cuopt::test
