#include "orchestrator/commands/gate_command.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include "common/child_process.hpp"
#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/html_text.hpp"
#include "common/pid_lock.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/gate/gate_html.hpp"
#include "orchestrator/gate/gate_json.hpp"
#include "orchestrator/gate/regression_gate.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

const char* k_gate_footer = R"(
The kernel is timed --runs times on the accepted run's replay requests (with --kernel, the
accepted kernel too, interleaved); it fails when an output differs from the run's oracle, a run
fails, or for any performance case or the geomean the 95% interval of (now / accepted) lies
wholly above 1 + --threshold. docs/gate.md has the whole rule.

Example:
  cuda-optimizer gate --accepted results/run-007 --kernel matmul_v2.cu

Exit codes: 0 pass (with --accept: the baseline was recorded); 1 fail (slower beyond the
threshold, wrong outputs, or the kernel fails); 2 cannot judge (another GPU model, no driver or
GPU, no replay requests or figures in the run); 64 bad command line.
)";

// The gate's folder: --out (missing or empty), else the next RUN/gate-NNN. Where neither can be
// made, the message and the exit code: 64 for an --out in the way, 2 for a folder that cannot be
// written (a read-only run folder, a full disk: no verdict can be kept).
fs::path gate_folder(const gate_options& o, const fs::path& run, std::string& bad, int& code) {
    const fs::path out = o.out.empty() ? fs::path() : fs::absolute(o.out);
    if (!o.out.empty() && fs::exists(out) && (!fs::is_directory(out) || !fs::is_empty(out))) {
        bad = "--out " + o.out + ": " +
              (fs::is_directory(out) ? "not empty (a gate writes into a fresh folder)"
                                     : "not a folder");
        code = to_int(exit_code::usage);
        return {};
    }
    // RUN/gate-NNN is made by path inside RUN: only in a folder of the caller's own that no one
    // else may write, where no one can swap a link in between.
    if (const std::string why = o.out.empty() ? foreign_folder_reason(run) : ""; !why.empty()) {
        bad = run.string() + " is " + why +
              ": the gate does not write into it; pass --out DIR (a folder of yours)";
        code = to_int(exit_code::usage);
        return {};
    }
    try {
        if (o.out.empty()) return create_run_folder(run, "gate");
        fs::create_directories(out);
        return out;
    } catch (const std::exception& e) {
        bad = std::string("cannot create the gate's folder: ") + e.what() +
              (o.out.empty() ? "; fix: pass --out DIR" : "");
        code = static_cast<int>(gate_outcome::cannot_judge);
        return {};
    }
}

void print_latency(const gate_record& r) {
    if (!r.latency) return;
    std::printf("%-28s %-13s %-13s %s\n", "case", "accepted", "now", "now/accepted [95%]");
    for (const case_latency& c : r.latency->cases) {
        const std::string beside =
            c.vs_accepted_now ? "  vs accepted now " + describe_slowdown(*c.vs_accepted_now) : "";
        std::printf("%-28s %-13s %-13s %s%s\n", c.name.c_str(), ms_text(c.accepted_ms).c_str(),
                    ms_text(c.kernel_ms).c_str(), describe_slowdown(c.vs_accepted).c_str(),
                    beside.c_str());
    }
    std::printf("%-28s %-13s %-13s %s\n", "geomean", "", "",
                describe_slowdown(r.latency->geomean).c_str());
}

void print_record(const gate_record& r) {
    std::cout << "gate: " << r.run.string()
              << " (figures: " << (r.figures_source.empty() ? "-" : r.figures_source)
              << "), kernel " << r.kernel.string() << ", " << r.options.runs << " runs, threshold "
              << r.options.threshold * 100 << "%\n";
    print_latency(r);
    if (r.comparison)
        for (const std::string& line : environment_lines(*r.comparison))
            std::cout << "environment: " << line << "\n";
    // A stand-in harness's figures are no measurement: the line says so, as optimize's does.
    const bool simulated = r.now.device.simulated || r.recorded.device.simulated;
    std::cout << "verdict" << (simulated ? " (FAKE RUN: simulated numbers)" : "") << ": "
              << r.verdict.line << "\n";
    if (r.options.accept) std::cout << "baseline: " << r.baseline_note << "\n";
    std::cout << "files: " << (r.folder / "gate.json").string() << ", gate.html\n";
}

}  // namespace

CLI::App* add_gate_command(CLI::App& app, gate_options& o) {
    CLI::App* gate = app.add_subcommand(
        "gate", "Regression gate: rerun an accepted kernel on its run's replay requests");
    gate->add_option("--accepted", o.accepted, "The accepted run folder (results/run-NNN)")
        ->type_name("DIR")
        ->required()
        ->check(CLI::ExistingDirectory);
    gate->add_option("--kernel", o.kernel,
                     "A new version of the accepted kernel (same entry and signature); default: "
                     "the accepted kernel itself")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    gate->add_option("--threshold", o.threshold,
                     "Fail when significantly slower than 1 + this (a fraction)")
        ->capture_default_str()
        ->check(number_from(0.0, 10.0));
    gate->add_option("--runs", o.runs, "Harness runs (rounds) per kernel")
        ->capture_default_str()
        ->check(whole_number_from(1, 1000));
    gate->add_flag("--accept", o.accept,
                   "Record the kernel's figures and this machine as the run's new baseline "
                   "(RUN/gate-baseline.json)");
    gate->add_option("--out", o.out, "The gate's folder (missing or empty); default RUN/gate-NNN")
        ->type_name("DIR");
    gate->add_option("--harness", o.harness, "cuda-harness binary (default: beside cuda-optimizer)")
        ->type_name("FILE");
    gate->add_option("--timeout", o.timeout_s, "Wall-clock limit per harness run, seconds")
        ->capture_default_str()
        ->check(duration_seconds());
    gate->add_option("--device", o.device, "GPU index (default: the replay requests' own)")
        ->check(whole_number_from(0, 1023));
    gate->footer(k_gate_footer);
    return gate;
}

int run_gate(gate_options o) {
    if (o.harness.empty()) o.harness = default_harness_path();
    gate_record r;
    r.options = o;
    r.run = fs::absolute(o.accepted).lexically_normal();
    std::string bad;
    int code = 0;
    r.folder = gate_folder(o, r.run, bad, code);
    if (!bad.empty()) {
        std::cerr << "cuda-optimizer gate: " << bad << "\n";
        return code;
    }
    // FOLDER/.lock, held while the gate runs and handed down to every harness it starts, as a
    // run's RUN/.lock is: serve clears a killed gate's folder only once the last of them ended.
    std::string holder;
    std::optional<pid_lock> lock;
    try {
        lock = pid_lock::try_take(r.folder / ".lock", 0644, holder);
        if (!lock)
            bad = r.folder.string() + ": another gate writes it (pid " + holder_text(holder) +
                  " holds .lock)";
        else if (!lock->pid_written())  // serve would take an empty one for a running holder
            bad = "cannot write this process's pid into " + (r.folder / ".lock").string();
    } catch (const std::exception& e) {
        bad = std::string("cannot lock the gate's folder: ") + e.what();
    }
    if (!bad.empty()) {
        std::cerr << "cuda-optimizer gate: " << bad << "\n";
        return static_cast<int>(gate_outcome::cannot_judge);
    }
    hand_down_to_children(lock->fd());
    struct handed_down {  // no longer once the gate ends (before the lock's descriptor closes)
        ~handed_down() { hand_down_to_children(-1); }
    } handed;
    const auto start = std::chrono::steady_clock::now();
    run_regression_gate(r, [](const std::string& line) { std::cerr << line << "\n"; });
    r.finished = utc_now();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_file_atomic(r.folder / "gate.json", gate_json(r));
    write_file_atomic(r.folder / "gate.html", gate_html(r));
    print_record(r);
    return r.exit_code;
}

}  // namespace cuopt
