// libFuzzer target: a --config file applied onto the optimize options, as main does.
// Invariants: every duration an accepted file leaves is finite, above 0 and at most a day, and
// is a whole number of milliseconds from 1 to 86,400,000 where it is used (0 ms would be no
// limit at all to curl); a refusal's message stays short, however long the key or value.
#include <cmath>
#include <string>
#include <utility>

#include "common/cli_value_checks.hpp"
#include "common/json_document.hpp"
#include "fuzz_support.hpp"
#include "orchestrator/commands/cli_options.hpp"

namespace {

void check_duration(const char* key, double seconds) {
    const std::string shown = std::string(key) + " = " + cuopt::number_text(seconds) + " s";
    if (!std::isfinite(seconds) || seconds <= 0 || seconds > cuopt::k_max_duration_s)
        cuopt::fuzz::fail("an accepted duration out of (0, 86400] s", shown);
    const long long ms = cuopt::milliseconds_of(seconds).count();
    if (ms < 1 || ms > static_cast<long long>(cuopt::k_max_duration_s) * 1000)
        cuopt::fuzz::fail("an accepted duration is " + std::to_string(ms) + " ms", shown);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    cuopt::optimizer_options o;
    CLI::App app;
    cuopt::define_run_options(&app, o);
    try {
        app.parse(std::vector<std::string>{});
        cuopt::apply_config_text(&app, o, std::string(reinterpret_cast<const char*>(data), size),
                                 "/tmp/fuzz/config.json");
    } catch (const cuopt::json_error& e) {
        cuopt::fuzz::check_message(e);
        return 0;
    }
    for (const auto& [key, seconds] : {std::pair{"timeout", o.timeout_s},
                                       {"request_timeout", o.request_timeout_s},
                                       {"profile_timeout", o.profile_timeout_s},
                                       {"sanitizer_timeout", o.sanitizer_timeout_s}})
        check_duration(key, seconds);
    const double min_time_ms = o.timing.min_time_ms;
    if (!std::isfinite(min_time_ms) || min_time_ms < 0 || min_time_ms > 600000)
        cuopt::fuzz::fail("an accepted min_time_ms out of [0, 600000]",
                          cuopt::number_text(min_time_ms));
    return 0;
}
