// How a run ends: its closing lines (the table, the confinement, the verdict last) and the exit
// code its outcome, evidence and verdict call for.
#include <algorithm>
#include <iostream>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/artifacts/console_report.hpp"
#include "orchestrator/artifacts/evidence_json.hpp"
#include "orchestrator/commands/optimize_run.hpp"

namespace cuopt {

namespace {

// How the attempts were confined, for the closing lines (the warning even when quiet).
void say_confinement(const run_context& c, const search_outcome& outcome) {
    if (!c.info.confinement) return;
    const confinement_record r = count_confinement(*c.info.confinement, outcome.history);
    if (!c.o.quiet) std::cerr << "confinement: " << confinement_line(r) << "\n";
    if (const std::string w = confinement_warning(r); !w.empty())
        std::cerr << "cuda-optimizer: warning: " << w << "\n";
}

struct run_verdict {
    std::string word;  // summary.json's verdict: go, no_go or no_winner
    std::vector<std::string> reasons;
};

// The verdict summary.json gives (the go rule applied where the summary was made).
// A summary that does not read back is a no_go that says so, never a crash after the search.
run_verdict verdict_of(const std::string& summary_text) {
    try {
        const rapidjson::Document d = parse_record_json(summary_text, "summary.json");
        const json_field summary(d, "summary.json");
        return {summary.text("verdict"), summary.texts("verdict_reasons")};
    } catch (const std::exception& e) {
        return {"no_go", {std::string("summary.json does not read back: ") + e.what()}};
    }
}

}  // namespace

int close_run(const run_context& c, const search_outcome& outcome, const evidence_report& ev,
              const std::string& summary, bool reported) {
    const manifest& m = *c.contract;
    const run_verdict verdict = verdict_of(summary);
    if (!c.o.quiet)
        std::cerr << closing_table(outcome, m, ev.devices, c.info.device.simulated,
                                   c.pytorch_compile && c.pytorch_compile->verdict == verdict::valid
                                       ? &*c.pytorch_compile
                                       : nullptr)
                  << gpu_busy_line(c.info.gpu_busy)
                  << evidence_lines(outcome, ev, c.info.device.simulated)
                  << "stop: " << to_string(outcome.stop) << "; artifacts in " << c.run.string()
                  << "\n"
                  << (reported ? "report: " + (c.run / "report.html").string() + "\n" : "");
    say_confinement(c, outcome);
    // The verdict last: the word a user looks for is the last thing a run prints.
    if (!c.o.quiet)
        std::cerr << verdict_line(outcome, ev, c.run.filename().string(), c.info.wall_s,
                                  verdict.word,
                                  outcome.stop == stop_reason::error  // said on its own line
                                      ? std::vector<std::string>{}
                                      : verdict.reasons,
                                  c.info.device.simulated)
                  << "\n";
    if (c.o.json) std::cout << read_text_file(c.run / "summary.json");
    if (outcome.stop == stop_reason::error) {
        const bool initial_failed =  // the baseline, or the user's kernel beside PyTorch eager
            !outcome.history.empty() &&
            outcome.history.back().cand.proposer == proposer_kind::initial &&
            outcome.history.back().verdict != verdict::valid;
        const bool on_another_device =  // the initial kernel on a GPU of --devices but the first
            outcome.history.size() == 1 &&
            std::any_of(outcome.baselines.begin(), outcome.baselines.end(),
                        [](const attempt_result& b) { return b.verdict != verdict::valid; });
        std::cerr << "cuda-optimizer: "
                  << (initial_failed && !c.o.quiet
                          ? "the initial kernel fails (why: its line above); fix it and run again"
                          : outcome.error)
                  << "\n";
        return to_int(initial_failed || on_another_device ? exit_code::initial_failed
                                                          : exit_code::proposer_failed);
    }
    if (outcome.stop == stop_reason::budget_exhausted && !c.o.quiet)
        std::cerr << "cuda-optimizer: " << outcome.error << "\n";
    if (ev.ran && !ev.winner) {
        std::cerr << "cuda-optimizer: no candidate passes the evidence gates, the initial kernel "
                     "included; see summary.json evidence.checked\n";
        return to_int(exit_code::no_winner);
    }
    if (outcome.stop == stop_reason::interrupted) return to_int(exit_code::interrupted);
    if (c.o.fail_on_no_go && verdict.word != "go") {
        std::cerr << "cuda-optimizer: --fail-on-no-go: the verdict is " << verdict.word << "\n";
        return to_int(verdict.word == "no_go" ? exit_code::no_go : exit_code::no_winner);
    }
    return to_int(exit_code::ok);
}

}  // namespace cuopt
