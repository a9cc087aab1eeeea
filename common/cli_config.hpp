#pragma once
/// --config files for any command: a JSON object of option names (snake_case keys for the
/// --kebab-case flags) applied to a CLI11 app as if typed, for every option the command line
/// did not give. optimize, check and serve read their configs through it.

#include <rapidjson/document.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace cuopt {

struct json_options_rules {
    /// Keys whose relative values are paths, anchored at the config file's folder.
    std::set<std::string> paths;
    /// Keys handled by the caller (true when `key` was handled); called before the lookup.
    std::function<bool(const std::string& key, const rapidjson::Value& value)> special;
    /// A key that `elsewhere` knows but `app` does not is skipped (check reads optimize's).
    const CLI::App* elsewhere = nullptr;
};

/// "; did you mean X?" for the candidate closest to `word` within a few edits, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

/// Applies the JSON object `text` (read from `file`, named in messages) to `app`; throws
/// json_error naming the file and the field for an unknown key (with the closest known one) or
/// a value of the wrong kind.
void apply_json_options(CLI::App* app, const std::string& text, const std::filesystem::path& file,
                        const json_options_rules& rules);

}  // namespace cuopt
