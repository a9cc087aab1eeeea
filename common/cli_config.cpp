#include "common/cli_config.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// An option's value (`f`, at its key) as the command line spells it: a string, a number, true
// or false.
// The fewest digits that read back as `x` exactly: 1e+300, not 1.0000000000000001e+300 (the
// text is what an option's message shows, and what the option parses).
std::string exact_number_text(double x) {
    char text[40];
    for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, x);
        if (std::strtod(text, nullptr) == x) break;
    }
    return text;
}

// Whether a flag takes a number: its type as the help shows it (INT, UINT, FLOAT, or a unit
// with a NONNEGATIVE or POSITIVE check: "N:NONNEGATIVE", "USD:NONNEGATIVE").
bool takes_number(const CLI::Option* opt) {
    const std::string type = opt->get_type_name();
    const std::string first = type.substr(0, type.find(':'));
    if (first == "INT" || first == "UINT" || first == "FLOAT") return true;
    for (std::size_t start = 0; start <= type.size();) {
        const std::size_t end = std::min(type.find(':', start), type.size());
        const std::string token = type.substr(start, end - start);
        if (token == "NONNEGATIVE" || token == "POSITIVE") return true;
        start = end + 1;
    }
    return false;
}

std::string option_text(const json_field& f, const fs::path& base,
                        const std::set<std::string>& paths, bool number) {
    if (f.is_null() || f.is_object() || f.is_array()) f.fail("a string, a number or a boolean");
    const rapidjson::Value& v = f.value();  // json_field has no is_boolean() to ask instead
    // "5" where 5 is meant: a hand-written config's slip, said rather than read as 5 (other
    // text goes to the flag's own check, which names what it expects).
    const auto numeric = [](const std::string& t) {
        char* end = nullptr;
        std::strtod(t.c_str(), &end);
        return !t.empty() && end == t.c_str() + t.size();
    };
    if (number && v.IsString() && numeric(v.GetString()))
        f.fail("a number (without quotes)",
               "the string " + quote_value(std::string_view(v.GetString(), v.GetStringLength())));
    std::string value = v.IsBool()     ? (v.GetBool() ? "true" : "false")
                        : v.IsDouble() ? exact_number_text(v.GetDouble())
                                       : json_scalar_text(v);
    const std::string& key = f.path();
    if (paths.count(key) && !value.empty() && fs::path(value).is_relative())
        value = (base / value).lexically_normal().string();
    return value;
}

std::string without_flag(std::string message, const std::string& flag) {
    if (message.rfind(flag + ": ", 0) == 0) message = message.substr(flag.size() + 2);
    if (!message.empty()) message[0] = static_cast<char>(std::tolower(message[0]));
    return message;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The config keys an app takes: its long option names in snake_case.
void add_keys(const CLI::App* app, std::vector<std::string>& keys) {
    if (!app) return;
    for (const CLI::Option* opt : app->get_options()) {
        if (opt->get_lnames().empty() || opt->get_group().empty()) continue;  // hidden
        std::string key = opt->get_lnames().front();
        std::replace(key.begin(), key.end(), '-', '_');
        keys.push_back(key);
    }
}

// "unknown option; did you mean max_iterations?" for a key neither app takes.
std::string unknown_key(const std::string& key, const CLI::App* app, const CLI::App* elsewhere) {
    std::vector<std::string> keys;
    add_keys(app, keys);
    add_keys(elsewhere, keys);
    keys.erase(std::remove(keys.begin(), keys.end(), "help"), keys.end());
    return "unknown option" + did_you_mean(key, keys);
}

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    // No option name is this long: a typo of one is not either (and the distance is quadratic).
    if (word.size() > 64) return "";
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(3, word.size() / 3) + 1;
    for (const std::string& c : candidates)
        if (const std::size_t d = edit_distance(word, c); d < best_distance) {
            best = c;
            best_distance = d;
        }
    return best.empty() ? "" : "; did you mean " + best + "?";
}

void apply_json_options(CLI::App* app, const std::string& text, const fs::path& file,
                        const json_options_rules& rules) {
    const std::string source = file.string();
    const rapidjson::Document d = parse_json(text, source);
    const json_field options(d, source);
    if (!options.is_object()) options.fail("an object of option names");
    for (const auto& [name, value] : options.members()) {
        const std::string key = name.c_str();  // to a NUL, as job_intake reads it too
        if (rules.special && rules.special(key, value.value())) continue;
        std::string flag = "--" + key;
        for (char& c : flag)
            if (c == '_') c = '-';
        if (key == "help" || key == "help_all")  // no option of a run, in either app
            throw json_error(source + ": field " + key + ": " +
                             unknown_key(key, app, rules.elsewhere));
        CLI::Option* opt = app->get_option_no_throw(flag);
        if (!opt && rules.elsewhere && rules.elsewhere->get_option_no_throw(flag))
            continue;  // optimize's option in a config that check reads: not check's business
        if (!opt)
            throw json_error(source + ": field " + shortened(key) + ": " +
                             unknown_key(key, app, rules.elsewhere));
        if (opt->count() > 0 || key == "config") continue;  // the command line wins
        try {
            opt->add_result(option_text(json_field(value.value(), source, key), file.parent_path(),
                                        rules.paths, takes_number(opt)));
            opt->run_callback();
        } catch (const CLI::Error& e) {
            throw json_error(source + ": field " + key + ": " +
                             shortened(without_flag(e.what(), flag), 2 * k_quote_limit));
        }
    }
}

}  // namespace cuopt
