#include "orchestrator/artifacts/run_folder.hpp"

#include <algorithm>
#include <regex>

#include "common/file_io.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// A run's record files are JSON of a few MiB; a long run's history some tens.
constexpr std::size_t k_max_record_bytes = std::size_t{256} << 20;

// `name` in the run folder, opened beneath it: never through a link (the folder may be someone
// else's: a colleague's run, a job's upload), never past k_max_record_bytes.
rapidjson::Document read_document(const fs::path& dir, const std::string& name) {
    const fs::path file = dir / name;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec)))
        throw report_input_error(file.string() + ": not found (is this a run folder?)");
    if (fs::is_directory(fs::symlink_status(file, ec)))
        throw report_input_error(file.string() + ": is a directory, expected a JSON file");
    try {
        rapidjson::Document d =
            parse_record_json(read_text_beneath(dir, name, k_max_record_bytes), file.string());
        if (!d.IsObject()) throw report_input_error(file.string() + ": expected a JSON object");
        return d;
    } catch (const json_error& e) {
        throw report_input_error(e.what());
    } catch (const std::runtime_error& e) {
        throw report_input_error(e.what());
    }
}

std::vector<model_exchange_file> read_model_exchanges(const fs::path& dir) {
    static const std::regex k_name(R"(model-[0-9]+\.json)");
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file(ec) && !e.is_symlink(ec) &&
            std::regex_match(e.path().filename().string(), k_name))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<model_exchange_file> out;
    for (const fs::path& f : files) {
        model_exchange_file m;
        m.name = f.filename().string();
        m.doc = read_document(dir, m.name);
        if (const auto it = integer_of(m.doc, "iteration")) m.iteration = static_cast<int>(*it);
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace

run_folder read_run_folder(const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw report_input_error(dir.string() + ": no such run folder");
    if (!fs::is_directory(dir, ec))
        throw report_input_error(dir.string() + ": is a file, expected a run folder");
    run_folder r;
    r.path = dir;
    r.run = read_document(dir, "run.json");
    const bool failed_early = text_of(r.run, "stop_reason") == "error";
    const std::pair<const char*, rapidjson::Document*> documents[] = {{"history.json", &r.history},
                                                                      {"summary.json", &r.summary}};
    for (const auto& [name, doc] : documents)
        if (!failed_early || fs::exists(fs::symlink_status(dir / name, ec)))
            *doc = read_document(dir, name);
    r.model_exchanges = read_model_exchanges(dir);
    return r;
}

std::optional<std::string> run_folder::text_file(const std::string& relative) const {
    if (relative.empty()) return std::nullopt;
    try {
        return read_text_beneath(path, relative, k_max_record_bytes);  // a kernel, a figure
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace cuopt
