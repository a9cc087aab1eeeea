#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/evaluation/replay_oracle.hpp"

namespace cuopt {

namespace fs = std::filesystem;

// Re-runs best-case-N.json through the harness and compares its outputs with the run's
// oracle (the same tolerances), and its latency with the one recorded for the best. A harness
// that cannot start, or no driver or device to run on, is a machine that cannot replay (exit
// 20, as the preflight says it); anything else is a replay that did not reproduce (24).
int run_replay(const std::string& request_arg, const std::string& harness, double timeout_s) {
    auto fail = [](exit_code c, const std::string& m) {
        std::cerr << "cuda-optimizer replay: " << m << "\n";
        return to_int(c);
    };
    const fs::path request = fs::absolute(request_arg);
    const fs::path run = request.parent_path();
    std::smatch m;
    const std::string name = request.filename().string();
    if (!std::regex_match(name, m, std::regex(R"(best-case-(\d+)\.json)")))
        return fail(exit_code::usage,
                    request_arg + ": expected a best-case-N.json from a run folder");
    const std::size_t index = std::stoul(m[1]);
    std::vector<replay_case> cases;
    try {
        cases = read_replay_cases(run);
    } catch (const std::exception& e) {
        return fail(exit_code::invalid_request,
                    std::string("cannot read the run's summary.json: ") + e.what());
    }
    if (index >= cases.size())
        return fail(exit_code::invalid_request,
                    "summary.json has no case " + std::to_string(index));
    const replay_case& sc = cases[index];

    // The response and the outputs go to RUN/replay, by path: only in a run folder of the
    // caller's own that no one else may write, and never through a link planted there.
    if (const std::string why = foreign_folder_reason(run); !why.empty())
        return fail(
            exit_code::invalid_request,
            run.string() + " is " + why +
                ": replay writes RUN/replay there; copy the run folder and replay the copy");
    const fs::path response = run / "replay" / ("response-" + std::to_string(index) + ".json");
    if (::mkdir(response.parent_path().c_str(), 0755) != 0 && errno != EEXIST)
        return fail(exit_code::io_error, response.parent_path().string() + ": cannot be made (" +
                                             std::strerror(errno) + ")");
    struct stat st {};
    if (::lstat(response.parent_path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(exit_code::invalid_request,
                    response.parent_path().string() + ": not a folder (a link is not followed)");
    std::error_code ec;
    fs::remove(response, ec);  // an earlier replay's response must not answer for this one
    const auto runner = make_child_process_runner();
    const process_result p =
        runner->run({harness, request.string(), "--response", response.string(), "--quiet"},
                    milliseconds_of(timeout_s));
    if (p.exit_code != 0) {
        const harness_failure f = describe_harness_failure(p, response, "replay");
        return fail(f.no_machine ? exit_code::preflight_failed : exit_code::replay_mismatch,
                    f.message);
    }
    const harness_response resp = read_response(response);
    if (resp.cases.empty())
        return fail(exit_code::replay_mismatch, response.string() + ": no case came back");
    const response_case& rc = resp.cases.front();

    bool match = true;
    std::cout << "replay of case '" << sc.name << "' (" << name << ")\n";
    for (const replay_output_check& c : check_replay_outputs(sc, run / "replay")) {
        std::cout << "  " << c.arg << ": " << (c.passed ? "matches" : "MISMATCH") << " - "
                  << c.summary << "\n";
        match &= c.passed;
    }
    if (rc.timing && sc.best_median_ms) {
        const double now = rc.timing->median_ms, then = *sc.best_median_ms;
        std::printf("  latency: median %.6f ms now, %.6f ms recorded (%.3fx)\n", now, then,
                    then / now);
    }
    std::cout << "verdict: " << (match ? "match" : "mismatch") << "\n";
    return match ? 0 : to_int(exit_code::replay_mismatch);
}

}  // namespace cuopt
