#include "orchestrator/artifacts/run_folder.hpp"

#include <algorithm>
#include <regex>

#include "common/file_io.hpp"
#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

rapidjson::Document read_document(const fs::path& file) {
    std::error_code ec;
    if (!fs::exists(file, ec))
        throw report_input_error(file.string() + ": not found (is this a run folder?)");
    if (fs::is_directory(file, ec))
        throw report_input_error(file.string() + ": is a directory, expected a JSON file");
    try {
        rapidjson::Document d = parse_record_json(read_text_file(file), file.string());
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
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && std::regex_match(e.path().filename().string(), k_name))
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<model_exchange_file> out;
    for (const fs::path& f : files) {
        model_exchange_file m;
        m.name = f.filename().string();
        m.doc = read_document(f);
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
    r.run = read_document(dir / "run.json");
    const bool failed_early = text_of(r.run, "stop_reason") == "error";
    const std::pair<const char*, rapidjson::Document*> documents[] = {{"history.json", &r.history},
                                                                      {"summary.json", &r.summary}};
    for (const auto& [name, doc] : documents)
        if (!failed_early || fs::exists(dir / name, ec)) *doc = read_document(dir / name);
    r.model_exchanges = read_model_exchanges(dir);
    return r;
}

std::optional<std::string> run_folder::text_file(const std::string& relative) const {
    if (relative.empty()) return std::nullopt;
    try {
        return read_text_file(resolve_inside(path, relative));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace cuopt
