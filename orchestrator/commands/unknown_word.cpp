// The command line's own mistakes: an unknown command or flag, named with the closest valid one.
#include <string>
#include <vector>

#include "common/cli_config.hpp"
#include "common/message_text.hpp"
#include "orchestrator/commands/cli_options.hpp"

namespace cuopt {

std::string unknown_word(const CLI::App& app, const std::vector<std::string>& args) {
    if (args.empty() || args[0].rfind('-', 0) == 0) return "";  // --help, --version: CLI11's
    std::vector<std::string> names;
    const CLI::App* command = nullptr;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(sub->get_name());
        if (sub->get_name() == args[0]) command = sub;
    }
    if (!command) {
        std::string all;
        for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
        return "unknown command " + quote_value(args[0]) + did_you_mean(args[0], names) +
               " (commands: " + all + ")";
    }
    if (command->get_allow_extras()) return "";  // submit: the flags after its own go to optimize
    std::vector<std::string> flags;
    for (const CLI::Option* opt : command->get_options())
        if (!opt->get_lnames().empty()) flags.push_back("--" + opt->get_lnames().front());
    bool value_next = false;  // the previous word was an option that takes a value
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string& w = args[i];
        if (value_next || w.rfind("--", 0) != 0) {
            value_next = false;
            continue;
        }
        const std::string name = w.substr(0, w.find('='));
        const CLI::Option* opt = command->get_option_no_throw(name);
        if (!opt)
            return "unknown option " + shortened(name) + " for " + args[0] +
                   did_you_mean(name, flags) + " (" + args[0] + " --help lists them)";
        value_next = opt->get_type_size() != 0 && w.find('=') == std::string::npos;
    }
    return "";
}

}  // namespace cuopt
