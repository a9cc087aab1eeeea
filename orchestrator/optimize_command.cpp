#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/commands.hpp"
#include "orchestrator/heatmap.hpp"
#include "orchestrator/kernel_signature.hpp"
#include "orchestrator/preflight.hpp"
#include "orchestrator/run_artifacts.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

int fail(exit_code code, const std::string& message) {
    std::cerr << "cuda-optimizer: " << message << "\n";
    return to_int(code);
}

// The kernel's name: the signature's, else the first __global__ function in the source.
std::string entry_of(const std::string& source, const std::optional<kernel_signature>& sig) {
    return sig ? sig->entry : first_kernel_name(source);
}

std::string format_ms(std::optional<double> ms) {
    if (!ms) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f ms", *ms);
    return buf;
}

std::string progress_line(const attempt_result& r, const search_outcome& o) {
    char head[64];
    std::snprintf(head, sizeof head, "[iter %d.%d] %-8s ", r.iteration, r.attempt, r.cand.proposer.c_str());
    std::string line = head + r.cand.label + "  " + r.verdict;
    if (r.geomean_ms) line += "  geomean " + format_ms(r.geomean_ms);
    if (r.speedup_vs_initial) {
        char s[32];
        std::snprintf(s, sizeof s, "  %.2fx", *r.speedup_vs_initial);
        line += s;
    }
    if (r.became_best) line += "  NEW BEST";
    else if (o.best && o.history[*o.best].speedup_vs_initial) {
        char s[48];
        std::snprintf(s, sizeof s, "  (best %.2fx)", *o.history[*o.best].speedup_vs_initial);
        line += s;
    }
    if (r.verdict != "valid" && !r.reason.empty()) line += ": " + r.reason.substr(0, 160);
    return line;
}

std::string closing_table(const search_outcome& o, const manifest& m) {
    std::string t = "case                          initial        best           speedup\n";
    for (const manifest_case& mc : m.cases) {
        const auto a = o.median_ms(o.initial, mc.name), b = o.median_ms(o.best, mc.name);
        char row[160];
        std::snprintf(row, sizeof row, "%-29s %-14s %-14s %s\n", mc.name.c_str(), format_ms(a).c_str(), format_ms(b).c_str(),
                      a && b ? (std::to_string(*a / *b).substr(0, 5) + "x").c_str() : "-");
        t += row;
    }
    return t;
}

// NaN or never-written elements in the reference's outputs make it useless as an oracle.
std::string check_reference_outputs(const attempt_result& ref, const manifest& m) {
    for (const case_evaluation& ce : ref.cases)
        for (const output_check& oc : ce.outputs) {
            const manifest_arg* arg = nullptr;
            for (const auto& a : m.args)
                if (a.name == oc.arg) arg = &a;
            if (!arg) continue;
            const auto bytes = read_binary_file(oc.file);
            const std::size_t n = bytes.size() / dtype_size(arg->type);
            if (oc.unwritten) return "case '" + ce.name + "': the reference left " + std::to_string(oc.unwritten) + " of " +
                                     std::to_string(n) + " elements of '" + oc.arg + "' unwritten";
            if (is_float(arg->type))
                for (std::size_t i = 0; i < n; ++i)
                    if (!std::isfinite(element_as_double(arg->type, bytes.data(), i)))
                        return "case '" + ce.name + "': the reference produced a NaN/Inf in '" + oc.arg + "' at element " +
                               std::to_string(i);
        }
    return "";
}

// From cuda-harness --device-info; 0 when unknown.
int max_threads_per_block(const std::string& device_json) {
    rapidjson::Document d;
    d.Parse(device_json.c_str());
    return !d.HasParseError() && d.IsObject() && d.HasMember("max_threads_per_block") && d["max_threads_per_block"].IsInt()
               ? d["max_threads_per_block"].GetInt()
               : 0;
}

}  // namespace

std::string default_harness_path() {
    char self[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        const fs::path beside = fs::path(std::string(self, static_cast<std::size_t>(n))).parent_path() / "cuda-harness";
        if (fs::exists(beside)) return beside.string();
    }
    return "cuda-harness";
}

int run_optimize(const optimizer_options& o, const std::vector<std::string>& command_line,
                 const std::atomic<bool>& interrupted) {
    const auto started = std::chrono::steady_clock::now();
    run_info info;
    info.command_line = command_line;
    info.started_utc = utc_now();
    auto runner = make_child_process_runner();

    // 1. Preflight and the contract.
    const preflight_report pre = run_preflight(o, *runner);
    if (const preflight_check* f = pre.first_failure()) {
        if (f->name == "manifest valid") return fail(exit_code::invalid_request, f->detail);
        return fail(exit_code::preflight_failed, f->name + ": " + f->detail + (f->fix.empty() ? "" : "; fix: " + f->fix));
    }
    info.device_json = pre.device_json;
    const manifest m = read_manifest(o.input_cases);
    std::optional<kernel_signature> sig;
    if (!o.signature.empty()) {
        try {
            sig = parse_kernel_signature(o.signature);
        } catch (const std::invalid_argument& e) {
            return fail(exit_code::invalid_request, std::string("--signature: ") + e.what());
        }
        const std::string problems = check_signature(*sig, m);
        if (!problems.empty())
            return fail(exit_code::invalid_request, o.input_cases + " disagrees with --signature:\n" + problems);
    }
    candidate initial;
    initial.source = read_text_file(o.initial_kernel);
    initial.entry = entry_of(initial.source, sig);
    if (initial.entry.empty())
        return fail(exit_code::invalid_request, o.initial_kernel + ": no __global__ function found; pass --signature");
    initial.proposer = "initial";
    initial.label = fs::path(o.initial_kernel).filename().string();
    initial.rationale = "the initial kernel";
    initial.tunables = m.default_tunables();

    std::unique_ptr<proposer> prop;
    try {
        const std::string kind = o.proposer == "auto" ? "autotune" : o.proposer;
        if (kind == "autotune") prop = make_autotune_proposer(m, o.seed, o.batch, max_threads_per_block(pre.device_json));
        else if (kind == "files") {
            if (o.candidates.empty()) return fail(exit_code::usage, "--proposer files needs --candidates DIR");
            prop = make_files_proposer(o.candidates);
        } else return fail(exit_code::usage, "--proposer: expected auto, autotune or files, got '" + o.proposer + "'");
    } catch (const std::exception& e) {
        return fail(exit_code::usage, e.what());
    }
    info.proposer = prop->name();
    if (!o.quiet)
        std::cerr << "cuda-optimizer: proposer " << prop->name()
                  << (o.proposer == "auto" ? " (auto: no model is configured)" : "") << "\n";

    // 2. The run folder, the inputs and the oracle.
    const fs::path run = create_run_folder(o.results_dir);
    if (!o.quiet) std::cerr << "cuda-optimizer: run folder " << run.string() << "\n";
    evaluator_settings es;
    es.harness = o.harness;
    es.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
    es.device = o.device;
    es.timing.warmup = o.warmup;
    es.timing.iterations = o.iterations;
    es.timing.fresh_inputs = true;
    info.launches_per_measured_case = 1 + o.warmup + o.iterations;
    const attempt_evaluator evaluator(m, es, *runner);
    fs::copy_file(o.input_cases, run / "input_cases.json", fs::copy_options::overwrite_existing);
    info.sha256["manifest"] = sha256_file_hex(o.input_cases);
    info.sha256["initial"] = sha256_hex(initial.source);
    info.sha256["harness"] = sha256_file_hex(o.harness);
    info.settings = {{"max_iterations", std::to_string(o.max_iterations)}, {"min_gain", std::to_string(o.min_gain)},
                     {"timeout_s", std::to_string(o.timeout_s)}, {"seed", std::to_string(o.seed)},
                     {"batch", std::to_string(o.batch)}, {"device", std::to_string(o.device)},
                     {"warmup", std::to_string(o.warmup)}, {"iterations", std::to_string(o.iterations)},
                     {"description", o.description}, {"signature", o.signature}};

    oracle_files oracle;
    fs::create_directories(run / "inputs");
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_input())
                if (const auto& init = m.init_for(mc, a); init.file) {
                    fs::copy_file(*init.file, run / "inputs" / init.file->filename(), fs::copy_options::overwrite_existing);
                    info.sha256["inputs/" + init.file->filename().string()] = sha256_file_hex(*init.file);
                }
    if (!o.reference.empty()) {
        candidate ref = initial;
        ref.source = read_text_file(o.reference);
        ref.entry = entry_of(ref.source, sig);
        ref.proposer = "reference";
        ref.label = fs::path(o.reference).filename().string();
        ref.compile_options.clear();
        ref.launch = m.reference_launch;
        info.sha256["reference"] = sha256_hex(ref.source);
        const attempt_result r = evaluator.evaluate(ref, run / "reference", nullptr);
        if (r.verdict != "valid")
            return fail(exit_code::reference_failed, "the reference kernel fails: " + r.verdict + ": " + r.reason);
        const std::string bad = check_reference_outputs(r, m);
        if (!bad.empty()) return fail(exit_code::reference_failed, bad);
        for (const auto& ce : r.cases)
            for (const auto& oc : ce.outputs) oracle[{ce.name, oc.arg}] = oc.file;
        for (const auto& e : fs::directory_iterator(run / "reference" / "inputs")) {
            fs::copy_file(e.path(), run / "inputs" / e.path().filename(), fs::copy_options::overwrite_existing);
            info.sha256["inputs/" + e.path().filename().string()] = sha256_file_hex(e.path());
        }
    }
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args) {
            if (!a.has_output()) continue;
            if (const auto it = mc.expected.find(a.name); it != mc.expected.end()) {
                const fs::path copy = run / "reference" / "expected" / (mc.name + "." + a.name + ".bin");
                fs::create_directories(copy.parent_path());
                fs::copy_file(it->second, copy, fs::copy_options::overwrite_existing);
                oracle[{mc.name, a.name}] = copy;
            } else if (!oracle.count({mc.name, a.name})) {
                return fail(exit_code::invalid_request, "case '" + mc.name + "' output '" + a.name +
                                                            "' has no oracle: pass --reference or give cases[].expected");
            }
        }

    // 3. The search, with history written after every attempt.
    search_settings ss;
    ss.max_iterations = o.max_iterations;
    ss.min_gain = o.min_gain;
    ss.max_repairs = o.max_repairs;
    ss.run_folder = run.string();
    auto on_attempt = [&](const attempt_result& r, const search_outcome& out) {
        write_file_atomic(run / "history.json", history_json(out, run));
        if (!o.quiet) std::cerr << progress_line(r, out) << "\n";
    };
    search_loop loop(m, evaluator, *prop, ss, [&run](int it, int at) { return attempt_folder(run, it, at); }, on_attempt,
                     &interrupted);
    search_outcome outcome = loop.run(initial, oracle);

    // 4. Finalise: summary, best, run record.
    write_best(run, outcome, m, evaluator);
    write_file_atomic(run / "summary.json", summary_json(outcome, m, oracle, run));
    try {
        write_heatmap(make_heatmap_data(outcome, m), run);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer: heatmap not drawn: " << e.what() << "\n";
    }
    info.finished_utc = utc_now();
    info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write_file_atomic(run / "run.json", run_json(info, outcome));
    if (!o.quiet) std::cerr << closing_table(outcome, m) << "stop: " << outcome.stop_reason << "; artifacts in " << run.string() << "\n";
    if (o.json) std::cout << read_text_file(run / "summary.json");
    if (outcome.stop_reason == "error") {
        std::cerr << "cuda-optimizer: " << outcome.error << "\n";
        return to_int(exit_code::initial_failed);
    }
    if (outcome.stop_reason == "interrupted") return to_int(exit_code::interrupted);
    return to_int(exit_code::ok);
}

}  // namespace cuopt
