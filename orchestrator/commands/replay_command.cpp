#include <cstdio>
#include <iostream>
#include <regex>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evaluation/output_validator.hpp"
#include "orchestrator/evaluation/runner_process.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

struct harness_failure {
    exit_code code;
    std::string message;
};

// Why the harness did not replay, said once: a harness that cannot start, or no driver or device
// to run on, is a machine that cannot replay (exit 20, as the preflight says it); anything else
// is a replay that did not reproduce (24).
harness_failure describe_harness_failure(const process_result& p, const fs::path& response) {
    if (p.failed_to_start)
        return {exit_code::preflight_failed,
                p.describe() + "; fix: build cuda-harness, or pass --harness PATH"};
    std::string why;
    try {
        why = read_response(response).error;
    } catch (const std::exception&) {
        why = p.stderr_text.substr(0, 400);  // no usable response: its stderr says why
        while (!why.empty() && why.back() == '\n') why.pop_back();
    }
    const std::string code = "(cuda-harness " + p.describe() + ")";
    if (p.exit_code == to_int(exit_code::no_driver) || p.exit_code == to_int(exit_code::no_device))
        return {exit_code::preflight_failed,
                why + " " + code + "; replay runs the kernel, so it needs a machine with an " +
                    "NVIDIA GPU and its driver"};
    return {exit_code::replay_mismatch, why.empty() ? code : why + " " + code};
}

}  // namespace

// Re-runs best-case-N.json through the harness and compares its outputs with the run's
// oracle (the same tolerances), and its latency with the one recorded for the best.
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
    rapidjson::Document summary;
    try {
        summary = parse_json(read_text_file(run / "summary.json"), "summary.json");
        validate_json(summary, embedded_schema("summary"), "summary.json");
    } catch (const std::exception& e) {
        return fail(exit_code::invalid_request,
                    std::string("cannot read the run's summary.json: ") + e.what());
    }
    if (!summary["cases"].IsArray() || index >= summary["cases"].Size())
        return fail(exit_code::invalid_request,
                    "summary.json has no case " + std::to_string(index));
    const rapidjson::Value& sc = summary["cases"][static_cast<rapidjson::SizeType>(index)];
    const std::string case_name = sc["name"].GetString();

    const fs::path response = run / "replay" / ("response-" + std::to_string(index) + ".json");
    fs::create_directories(response.parent_path());
    std::error_code ec;
    fs::remove(response, ec);  // an earlier replay's response must not answer for this one
    const auto runner = make_child_process_runner();
    const process_result p =
        runner->run({harness, request.string(), "--response", response.string(), "--quiet"},
                    std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
    if (p.exit_code != 0) {
        const harness_failure f = describe_harness_failure(p, response);
        return fail(f.code, f.message);
    }
    const harness_response resp = read_response(response);
    if (resp.cases.empty())
        return fail(exit_code::replay_mismatch, response.string() + ": no case came back");
    const response_case& rc = resp.cases.front();

    bool match = true;
    std::cout << "replay of case '" << case_name << "' (" << name << ")\n";
    for (const auto& out : sc["outputs"].GetArray()) {
        const std::string arg = out["arg"].GetString();
        if (!out["oracle"].IsString()) continue;
        const auto dt = parse_dtype(out["dtype"].GetString());
        const auto actual = read_binary_file(run / "replay" / (case_name + "." + arg + ".bin"));
        const auto expected = read_binary_file(run / out["oracle"].GetString());
        if (!dt || actual.size() != expected.size()) {
            std::cout << "  " << arg << ": size differs from the oracle\n";
            match = false;
            continue;
        }
        const validation_result v =
            validate_output(*dt, actual.data(), expected.data(), actual.size() / dtype_size(*dt),
                            {out["atol"].GetDouble(), out["rtol"].GetDouble()});
        std::cout << "  " << arg << ": " << (v.passed ? "matches" : "MISMATCH") << " - "
                  << v.summary() << "\n";
        match &= v.passed;
    }
    if (rc.timing && sc["best_median_ms"].IsNumber()) {
        const double now = rc.timing->median_ms, then = sc["best_median_ms"].GetDouble();
        std::printf("  latency: median %.6f ms now, %.6f ms recorded (%.3fx)\n", now, then,
                    then / now);
    }
    std::cout << "verdict: " << (match ? "match" : "mismatch") << "\n";
    return match ? 0 : to_int(exit_code::replay_mismatch);
}

}  // namespace cuopt
