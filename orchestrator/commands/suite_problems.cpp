// The suite's problems: DIR's problem folders and files, each imported where it must be and run
// through optimize in a child of this same binary; a child's failure becomes the record's reason.
#include "orchestrator/commands/suite_problems.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>

#include "common/file_io.hpp"

namespace cuopt::suite {

namespace fs = std::filesystem;

namespace {

// A child runs as long as it needs: an optimize of a real deck takes hours.
constexpr std::chrono::milliseconds k_no_limit = std::chrono::hours(24 * 30);

}  // namespace

fs::path self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? fs::path(std::string(buf, static_cast<std::size_t>(n))) : fs::path();
}

// DIR's problems, sorted by name: each subfolder with a config.json, each .py and .json file.
// A file whose stem a folder already took keeps its whole file name.
std::vector<suite_problem> find_problems(const fs::path& dir, const fs::path& results) {
    std::vector<suite_problem> folders, files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        const fs::path p = e.path();
        if (e.is_directory() && fs::is_regular_file(p / "config.json") &&
            resolved_path(p) != resolved_path(results))
            folders.push_back({p.filename().string(), p, false});
        else if (e.is_regular_file() && (p.extension() == ".py" || p.extension() == ".json"))
            files.push_back({p.stem().string(), p, true});
    }
    std::set<std::string> taken;
    for (const suite_problem& f : folders) taken.insert(f.name);
    std::sort(files.begin(), files.end(),
              [](const suite_problem& a, const suite_problem& b) { return a.source < b.source; });
    for (suite_problem& f : files) {
        if (taken.count(f.name)) f.name = f.source.filename().string();
        taken.insert(f.name);
        folders.push_back(std::move(f));
    }
    std::sort(folders.begin(), folders.end(),
              [](const suite_problem& a, const suite_problem& b) { return a.name < b.name; });
    return folders;
}

namespace {

std::string first_line(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            return line.size() > 300 ? line.substr(0, 300) + "..." : line;
    return "";
}

// The newest run-NNN of a problem's results folder ("" when there is none).
std::string newest_run(const fs::path& runs) {
    std::string newest;
    std::error_code ec;
    if (!fs::is_directory(runs, ec)) return "";
    for (const fs::directory_entry& e : fs::directory_iterator(runs, ec))
        if (e.path().filename().string().rfind("run-", 0) == 0 && e.path().string() > newest)
            newest = e.path().string();
    return newest;
}

// A failed child as a record: its exit code (128 + the signal) and the first line it said.
void mark_failed(suite_record& r, const process_result& p, const std::string& step) {
    r.verdict = "failed";
    if (p.failed_to_start)
        r.exit_code.reset();
    else
        r.exit_code = p.signal ? 128 + p.signal : p.exit_code;
    std::string said = first_line(p.stderr_text);
    if (said.rfind("cuda-optimizer: ", 0) == 0) said.erase(0, 16);
    if (said.empty()) said = p.describe();
    r.reason = said.rfind(step, 0) == 0 ? said : step + said;
}

std::vector<std::string> with_python(std::vector<std::string> argv, const suite_options& o) {
    if (!o.python.empty()) argv.insert(argv.end(), {"--python", o.python});
    return argv;
}

}  // namespace

// The problem's folder: DIR/NAME, or R/problems/NAME made by import (kept from an earlier
// suite run when its config.json is there). nullopt, with `r` failed, when import fails.
std::optional<fs::path> problem_folder(const suite_problem& p, const suite_options& o,
                                       process_runner& runner, suite_record& r) {
    if (!p.imported) return p.source;
    const fs::path out = fs::path(o.results_dir) / "problems" / p.name;
    if (fs::is_regular_file(out / "config.json")) return out;
    std::error_code ec;
    fs::remove_all(out, ec);  // what an interrupted import left
    const process_result imported = runner.run(
        with_python({self_path().string(), "import", p.source.string(), "--out", out.string()}, o),
        k_no_limit);
    r.wall_s += imported.wall_ms / 1000;
    if (!imported.failed_to_start && !imported.signal && !imported.timed_out &&
        imported.exit_code == 0)
        return out;
    mark_failed(r, imported, "import: ");
    return std::nullopt;
}

suite_record run_problem(const suite_problem& p, const suite_options& o, process_runner& runner) {
    suite_record r;
    const auto folder = problem_folder(p, o, runner, r);
    if (folder) {
        const fs::path runs = fs::path(o.results_dir) / "runs" / p.name;
        std::vector<std::string> argv = with_python(
            {self_path().string(), "optimize", "--config", (*folder / "config.json").string(),
             "--results-dir", runs.string(), "--json", "--quiet"},
            o);
        argv.insert(argv.end(), o.optimize_args.begin(), o.optimize_args.end());
        const process_result done = runner.run(argv, k_no_limit);
        const double wall_s = r.wall_s + done.wall_ms / 1000;
        r = record_from_summary(done.stdout_text);
        r.wall_s = wall_s;
        r.exit_code = done.signal ? 128 + done.signal : done.exit_code;
        if (r.verdict == "failed") mark_failed(r, done, "");
        if (r.run.empty()) r.run = newest_run(runs);
    }
    r.name = p.name;
    r.source = p.source.string();
    return r;
}

}  // namespace cuopt::suite
