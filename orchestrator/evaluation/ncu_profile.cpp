#include "orchestrator/evaluation/ncu_profile.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "orchestrator/contract/request_writer.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

const char* k_metrics =
    "gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,"
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_"
    "elapsed,"
    "l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,launch__registers_per_thread,"
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio";

}  // namespace

ncu_profiler::ncu_profiler(const manifest& m, const attempt_evaluator& evaluator,
                           process_runner& runner, std::string harness, fs::path run,
                           std::chrono::milliseconds timeout)
    : m_manifest(m),
      m_evaluator(evaluator),
      m_runner(runner),
      m_harness(std::move(harness)),
      m_run(std::move(run)),
      m_timeout(timeout) {}

std::string ncu_profiler::profile(const candidate& c, const std::string& case_name) {
    if (std::none_of(m_manifest.cases.begin(), m_manifest.cases.end(),
                     [&](const manifest_case& mc) { return mc.name == case_name; }))
        return "error: no case named " + quote_value(case_name);
    const fs::path dir = m_run / "profile" / std::to_string(++m_count);
    fs::create_directories(dir / "inputs");
    write_file_atomic(dir / "kernel.cu", c.source);
    for (const auto& e : fs::directory_iterator(m_run / "inputs"))
        link_or_copy(e.path(), dir / "inputs" / e.path().filename());
    attempt_evaluator::request_paths paths;
    paths.only_case = case_name;
    request req = m_evaluator.make_request(c, paths, false);
    req.folder = dir;  // the inputs key is named relative to it, and read inside --root (the run)
    write_file_atomic(dir / "request.json", write_request_json(req));
    const process_result p = m_runner.run(
        {"ncu", "--clock-control", "none", "--csv", "--metrics", k_metrics, "-k",
         "regex:" + c.entry, "--launch-count", "1", m_harness, (dir / "request.json").string(),
         "--no-stream-hold", "--quiet", "--root", m_run.string()},
        m_timeout);
    if (p.failed_to_start) return "profile unavailable: " + p.stderr_text;
    const std::string table = metrics_from_ncu_csv(p.stdout_text);
    return table.empty()
               ? "profile failed: ncu " + p.describe() + ": " + p.stderr_text.substr(0, 600)
               : table;
}

std::string metrics_from_ncu_csv(const std::string& csv) {
    static const std::regex field(R"~("([^"]*)")~");
    std::string table, line;
    std::istringstream in(csv);
    while (std::getline(in, line)) {
        // "ID","Process ID",...,"Metric Name","Metric Unit","Metric Value": the last three fields.
        std::vector<std::string> fields;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), field);
             it != std::sregex_iterator(); ++it)
            fields.push_back((*it)[1]);
        if (fields.size() < 3 || fields[fields.size() - 3] == "Metric Name") continue;
        table += fields[fields.size() - 3] + ": " + fields.back() + " " +
                 fields[fields.size() - 2] + "\n";
    }
    return table;
}

}  // namespace cuopt
