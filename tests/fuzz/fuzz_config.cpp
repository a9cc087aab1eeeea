// libFuzzer target: a --config file applied onto the optimize options, as main does.
#include "common/json_document.hpp"
#include "orchestrator/commands/cli_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cuopt::optimizer_options o;
    CLI::App app;
    cuopt::define_run_options(&app, o);
    try {
        app.parse(std::vector<std::string>{});
        cuopt::apply_config_text(&app, o, std::string(reinterpret_cast<const char*>(data), size),
                                 "/tmp/fuzz/config.json");
    } catch (const cuopt::json_error&) {
    }
    return 0;
}
