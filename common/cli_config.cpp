#include "common/cli_config.hpp"

#include <cctype>

#include "common/json_document.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string option_text(const std::string& source, const std::string& key,
                        const rapidjson::Value& v, const fs::path& base,
                        const std::set<std::string>& paths) {
    std::string value;
    if (v.IsString())
        value = v.GetString();
    else if (v.IsBool())
        value = v.GetBool() ? "true" : "false";
    else if (v.IsInt64())
        value = std::to_string(v.GetInt64());
    else if (v.IsUint64())
        value = std::to_string(v.GetUint64());
    else if (v.IsNumber())
        value = json_scalar_text(v);
    else
        throw json_error(source + ": field " + key + ": expected a string, a number or a boolean");
    if (paths.count(key) && !value.empty() && fs::path(value).is_relative())
        value = (base / value).lexically_normal().string();
    return value;
}

std::string without_flag(std::string message, const std::string& flag) {
    if (message.rfind(flag + ": ", 0) == 0) message = message.substr(flag.size() + 2);
    if (!message.empty()) message[0] = static_cast<char>(std::tolower(message[0]));
    return message;
}

}  // namespace

void apply_json_options(CLI::App* app, const std::string& text, const fs::path& file,
                        const json_options_rules& rules) {
    const std::string source = file.string();
    const rapidjson::Document d = parse_json(text, source);
    if (!d.IsObject()) throw json_error(source + ": expected an object of option names");
    for (const auto& member : d.GetObject()) {
        const std::string key = member.name.GetString();
        if (rules.special && rules.special(key, member.value)) continue;
        std::string flag = "--" + key;
        for (char& c : flag)
            if (c == '_') c = '-';
        CLI::Option* opt = app->get_option_no_throw(flag);
        if (!opt && rules.elsewhere && rules.elsewhere->get_option_no_throw(flag))
            continue;  // optimize's option in a config that check reads: not check's business
        if (!opt) throw json_error(source + ": field " + key + ": unknown option");
        if (opt->count() > 0 || key == "config") continue;  // the command line wins
        try {
            opt->add_result(
                option_text(source, key, member.value, file.parent_path(), rules.paths));
            opt->run_callback();
        } catch (const CLI::Error& e) {
            throw json_error(source + ": field " + key + ": " + without_flag(e.what(), flag));
        }
    }
}

}  // namespace cuopt
