#include "orchestrator/service/launch_record.hpp"

#include <unistd.h>

#include <optional>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/utc_time.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

struct launch {
    std::string kind;
    std::vector<std::string> command_line;
    std::string working_directory;
};

// An array of strings, or nullopt when the field is missing or holds anything else (a record
// that does not read is no proof of anything).
std::optional<std::vector<std::string>> strings_of(const rapidjson::Value& o, const char* key) {
    try {
        return json_field(o, "")[key].texts();
    } catch (const json_error&) {
        return std::nullopt;
    }
}

// A JSON object read from a regular file that is no link; nullopt otherwise.
std::optional<rapidjson::Document> object_at(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return std::nullopt;
    rapidjson::Document d;
    try {
        if (!try_parse_json(d, read_text_file(file)).empty() || !d.IsObject()) return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return d;
}

std::optional<launch> read_launch(const fs::path& job) {
    const auto d = object_at(job / "launch.json");
    if (!d) return std::nullopt;
    launch l;
    l.kind = string_of(*d, "kind").value_or("");
    l.working_directory = string_of(*d, "working_directory").value_or("");
    const auto argv = strings_of(*d, "command_line");
    if (!argv || argv->empty()) return std::nullopt;
    l.command_line = *argv;
    return l;
}

// The job folder as the child's getcwd() names it (links resolved).
std::string working_folder_of(const fs::path& job) {
    std::error_code ec;
    const fs::path p = fs::canonical(job, ec);
    return (ec ? fs::absolute(job) : p).string();
}

}  // namespace

void write_launch_record(const fs::path& job, const std::string& kind,
                         const std::vector<std::string>& argv) {
    rapidjson::Document d(rapidjson::kObjectType);
    json_object(d)
        .add("schema_version", 1)
        .add("kind", kind)
        .add("command_line", argv)
        .add("working_directory", working_folder_of(job))
        .add("recorded", utc_now());
    const std::string text = to_pretty_json(d) + "\n";
    write_file_with(
        job / "launch.json",
        [&](int fd) { return ::write(fd, text.data(), text.size()) == ssize_t(text.size()); }, true,
        0600);
}

std::string run_trust_problem(const fs::path& job, const fs::path& run,
                              const std::string& recorded_run_dir) {
    const std::string rel = fs::relative(run, job).string();
    const std::string refusal = rel + "/run.json is not the run this daemon started";
    std::error_code ec;
    const fs::path file = run / "run.json";
    if (!fs::exists(fs::symlink_status(file, ec)))
        return "";  // nothing to resume from: optimize --resume refuses it, the job starts over
    if (!recorded_run_dir.empty() && recorded_run_dir != rel) return refusal;
    const auto recorded = read_launch(job);
    const auto d = object_at(file);
    if (!recorded || recorded->kind != "optimize" || !d) return refusal;
    const auto argv = strings_of(*d, "command_line");
    if (!argv || *argv != recorded->command_line) return refusal;
    // resume chdirs there and reads the command line's relative paths again.
    if (string_of(*d, "working_directory") != recorded->working_directory) return refusal;
    return "";
}

bool gate_started_by_daemon(const fs::path& job) {
    const auto recorded = read_launch(job);
    return recorded && recorded->kind == "gate";
}

}  // namespace cuopt
