#include "orchestrator/gate/regression_gate.hpp"

#include <map>

#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/gate/accepted_figures.hpp"
#include "orchestrator/gate/gate_json.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// Messages that repeat over rounds, said once with the rounds they came from.
std::vector<std::string> collapsed(const std::vector<std::pair<int, std::string>>& lines) {
    std::map<std::string, std::vector<int>> rounds;
    std::vector<std::string> order;
    for (const auto& [round, text] : lines) {
        if (!rounds.count(text)) order.push_back(text);
        rounds[text].push_back(round);
    }
    std::vector<std::string> out;
    for (const std::string& text : order) {
        std::string list;
        for (int round : rounds[text]) list += (list.empty() ? "" : ", ") + std::to_string(round);
        out.push_back((rounds[text].size() > 1 ? "rounds " : "round ") + list + ": " + text);
    }
    return out;
}

// What the runs say about the kernel and the accepted kernel beside it.
void add_run_findings(const gate_record& r, gate_findings& f) {
    std::vector<std::pair<int, std::string>> failed, wrong, accepted_failed;
    for (const kernel_run& k : r.runs) {
        if (k.no_machine) f.cannot_judge.push_back(k.result.reason);
        if (k.no_machine || k.result.verdict == verdict::valid) continue;
        const std::string what = std::string(to_string(k.result.verdict)) + ": " + k.result.reason;
        if (k.role != "kernel")
            accepted_failed.emplace_back(k.round, "the accepted kernel beside it: " + what);
        else if (k.result.verdict == verdict::wrong_output)
            for (const std::string& w : k.wrong) wrong.emplace_back(k.round, w);
        else
            failed.emplace_back(k.round, what);
    }
    f.kernel_failed = collapsed(failed);
    f.wrong_outputs = collapsed(wrong);
    for (const std::string& line : collapsed(accepted_failed)) f.environment.push_back(line);
}

// This machine, from the runs that answered.
void describe_machine(gate_record& r, gate_findings& f) {
    std::vector<attempt_result> answered;
    for (const kernel_run& k : r.runs) {
        if (k.device && r.now.device.name.empty()) r.now.device = *k.device;
        if (k.device) answered.push_back(k.result);
    }
    if (answered.empty()) return;
    r.now.gpu_state = summarize_gpu_state(answered);
    r.comparison = compare_environment(r.recorded, r.now);
    if (!r.comparison->same_model)
        f.cannot_judge.push_back("another GPU model: the accepted figures come from " +
                                 r.recorded.device.name + ", this is " + r.now.device.name);
    const std::vector<std::string> lines = environment_lines(*r.comparison);
    f.environment.insert(f.environment.begin(), lines.begin(), lines.end());
}

// Reads the run and times the kernels; the accepted figures' samples, or why none.
case_samples measure(gate_record& r, gate_findings& f,
                     const std::function<void(const std::string&)>& progress) {
    try {
        const std::vector<replay_case> cases = read_replay_cases(r.run);
        accepted_figures figures = read_accepted_figures(r.run, cases, r.folder);
        r.figures_source = figures.source;
        r.recorded = figures.env;
        r.accepted_kernel = figures.kernel;
        r.kernel = r.options.kernel.empty() ? figures.kernel : fs::absolute(r.options.kernel);
        gate_plan plan{r.run,
                       r.folder,
                       cases,
                       {},
                       r.options.runs,
                       r.options.harness,
                       r.options.timeout_s,
                       r.options.device};
        if (!r.options.kernel.empty()) plan.kernels.push_back({"accepted", figures.kernel});
        plan.kernels.push_back({"kernel", r.kernel});
        r.runs = run_rounds(plan, progress);
        return std::move(figures.cases);
    } catch (const cannot_judge_error& e) {
        f.cannot_judge.push_back(e.what());
    } catch (const std::exception& e) {  // summary.json, a replay input, the gate's folder
        f.cannot_judge.push_back(std::string("the accepted run cannot be replayed: ") + e.what());
    }
    return {};
}

// --accept: the kernel's figures become the baseline, unless it failed or nothing ran.
void record_baseline(gate_record& r, const gate_findings& f) {
    const bool measured = !samples_of(r.runs, "kernel").empty();
    const bool refused = !f.kernel_failed.empty() || !f.wrong_outputs.empty() || !measured;
    if (refused) {
        r.baseline_note =
            "not recorded: " + (measured ? r.verdict.line : std::string("nothing was measured"));
        return;
    }
    const bool replaced = fs::exists(r.run / k_gate_baseline_file);
    write_gate_baseline(r);
    r.baseline_written = true;
    r.exit_code = 0;
    r.baseline_note = std::string(replaced ? "replaced the earlier baseline" : "recorded") +
                      "; later gates hold kernels to these figures";
}

}  // namespace

void run_regression_gate(gate_record& r, const std::function<void(const std::string&)>& progress) {
    r.started = utc_now();
    gate_findings f;
    f.threshold = r.options.threshold;
    const case_samples accepted = measure(r, f, progress);
    add_run_findings(r, f);
    describe_machine(r, f);
    if (f.cannot_judge.empty())
        r.latency = compare_latency({accepted, samples_of(r.runs, "kernel"),
                                     samples_of(r.runs, "accepted"), r.options.threshold});
    f.latency = r.latency;
    r.verdict = judge(f);
    r.exit_code = static_cast<int>(r.verdict.outcome);
    if (r.options.accept) record_baseline(r, f);
}

}  // namespace cuopt
