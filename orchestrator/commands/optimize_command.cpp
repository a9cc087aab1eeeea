#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/artifacts/heatmap.hpp"
#include "orchestrator/proposers/llm_proposer.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/commands/preflight.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"

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

// KEY=VALUE lines of ./.env (quotes stripped); the environment wins over it.
std::map<std::string, std::string> read_dot_env() {
    std::map<std::string, std::string> out;
    std::ifstream in(".env");
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
        std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        if (key.rfind("export ", 0) == 0) key = key.substr(7);
        while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
        if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
            value = value.substr(1, value.size() - 2);
        out[key] = value;
    }
    return out;
}

std::string setting(const std::string& name, const std::map<std::string, std::string>& dot_env) {
    if (const char* v = std::getenv(name.c_str()); v && *v) return v;
    const auto it = dot_env.find(name);
    return it == dot_env.end() ? "" : it->second;
}

price_table read_prices(const std::string& json) {
    price_table prices;
    if (json.empty()) return prices;
    const rapidjson::Document d = parse_json(json, "config prices");
    for (const auto& m : d.GetObject()) {
        if (!m.value.IsObject()) throw json_error(std::string("config: field prices.") + m.name.GetString() + ": expected an object");
        model_price p;
        if (m.value.HasMember("input_per_mtok")) p.input_per_mtok = m.value["input_per_mtok"].GetDouble();
        if (m.value.HasMember("output_per_mtok")) p.output_per_mtok = m.value["output_per_mtok"].GetDouble();
        prices[m.name.GetString()] = p;
    }
    return prices;
}

std::string model_block(const llm_client& client, const price_table& prices) {
    const llm_totals& t = client.totals();
    const auto cost = estimate_cost(prices, client.settings().model, t);
    char cost_text[64];
    std::snprintf(cost_text, sizeof cost_text, "%.6f", cost ? *cost : 0.0);
    return std::string("{\"provider\": \"") + (client.settings().provider == llm_provider::openai ? "openai" : "anthropic") +
           "\", \"model\": \"" + client.settings().model + "\", \"calls\": " + std::to_string(t.calls) +
           ", \"prompt_tokens\": " + std::to_string(t.usage.prompt) + ", \"completion_tokens\": " +
           std::to_string(t.usage.completion) + ", \"reasoning_tokens\": " + std::to_string(t.usage.reasoning) +
           ", \"cached_tokens\": " + std::to_string(t.usage.cached) + ", \"estimated_cost_usd\": " +
           (cost ? std::string(cost_text) : std::string("\"unknown\"")) + "}";
}

// Nsight Compute on the current best for one case: a few key metrics as "name: value unit" lines.
std::string profile_best(const search_state& s, const std::string& case_name, const manifest& m,
                         const attempt_evaluator& evaluator, process_runner& runner, const std::string& harness,
                         const fs::path& run) {
    if (std::none_of(m.cases.begin(), m.cases.end(), [&](const manifest_case& c) { return c.name == case_name; }))
        return "error: no case named '" + case_name + "'";
    const candidate& best = s.best ? s.history[*s.best].cand : s.initial;
    static int count = 0;
    const fs::path dir = run / "profile" / std::to_string(++count);
    fs::create_directories(dir / "inputs");
    write_file_atomic(dir / "kernel.cu", best.source);
    for (const auto& e : fs::directory_iterator(run / "inputs")) {
        std::error_code ec;
        fs::create_hard_link(e.path(), dir / "inputs" / e.path().filename(), ec);
        if (ec) fs::copy_file(e.path(), dir / "inputs" / e.path().filename(), fs::copy_options::overwrite_existing);
    }
    attempt_evaluator::request_paths paths;
    paths.only_case = case_name;
    write_file_atomic(dir / "request.json", evaluator.build_request(best, paths, false));
    const std::string metrics =
        "gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,"
        "sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,"
        "l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,launch__registers_per_thread,"
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,"
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,"
        "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,"
        "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio";
    const process_result p = runner.run({"ncu", "--clock-control", "none", "--csv", "--metrics", metrics, "-k",
                                         "regex:" + best.entry, "--launch-count", "1", harness,
                                         (dir / "request.json").string(), "--no-stream-hold", "--quiet"},
                                        std::chrono::seconds(300));
    if (p.failed_to_start) return "profile unavailable: " + p.stderr_text;
    std::string table, line;
    std::istringstream in(p.stdout_text);
    while (std::getline(in, line)) {
        // "ID","Process ID",...,"Metric Name","Metric Unit","Metric Value": the last three fields.
        std::vector<std::string> fields;
        static const std::regex field(R"~("([^"]*)")~");
        for (auto it = std::sregex_iterator(line.begin(), line.end(), field); it != std::sregex_iterator(); ++it)
            fields.push_back((*it)[1]);
        if (fields.size() < 3 || fields[fields.size() - 3] == "Metric Name") continue;
        table += fields[fields.size() - 3] + ": " + fields.back() + " " + fields[fields.size() - 2] + "\n";
    }
    return table.empty() ? "profile failed: ncu " + p.describe() + ": " + p.stderr_text.substr(0, 600) : table;
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

    // 0. Which proposer: a model when a key or a base URL is configured (auto), else the autotuner.
    const auto dot_env = read_dot_env();
    const bool anthropic = o.provider == "anthropic";
    const std::string api_key = setting(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", dot_env);
    const std::string base_url = !o.base_url.empty() ? o.base_url : anthropic ? "" : setting("OPENAI_BASE_URL", dot_env);
    const bool model_configured = !api_key.empty() || !base_url.empty();
    const std::string kind = o.proposer == "auto" ? (model_configured ? "llm" : "autotune") : o.proposer;
    if (kind == "llm" && !model_configured)
        return fail(exit_code::usage, std::string("--proposer llm needs a key: set ") +
                                          (anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY") +
                                          " (or put it in ./.env), or give --base-url for a local server");

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
        if (kind == "llm") {
            // Built once the run folder exists (its model-NNN.json records go there).
        } else if (kind == "autotune") prop = make_autotune_proposer(m, o.seed, o.batch, max_threads_per_block(pre.device_json));
        else if (kind == "files") {
            if (o.candidates.empty()) return fail(exit_code::usage, "--proposer files needs --candidates DIR");
            prop = make_files_proposer(o.candidates);
        } else return fail(exit_code::usage, "--proposer: expected auto, llm, autotune or files, got '" + o.proposer + "'");
    } catch (const std::exception& e) {
        return fail(exit_code::usage, e.what());
    }
    llm_settings model;
    model.provider = anthropic ? llm_provider::anthropic : llm_provider::openai;
    model.model = !o.model.empty() ? o.model : anthropic ? "claude-sonnet-4-5" : "gpt-5-mini";
    model.base_url = base_url;
    model.reasoning_effort = anthropic || o.reasoning_effort == "none" ? "" : o.reasoning_effort;
    if (o.temperature >= 0) model.temperature = o.temperature;
    price_table prices;
    try {
        prices = read_prices(o.prices_json);
    } catch (const std::exception& e) {
        return fail(exit_code::usage, e.what());
    }
    info.proposer = kind;
    if (!o.quiet) {
        std::cerr << "cuda-optimizer: proposer " << kind;
        if (kind == "llm") std::cerr << " (" << (anthropic ? "anthropic" : "openai") << ", " << model.model
                                     << (base_url.empty() ? "" : ", " + base_url) << ")";
        else if (o.proposer == "auto") std::cerr << " (auto: no model is configured)";
        std::cerr << "\n";
    }

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

    std::unique_ptr<http_transport> transport;
    std::unique_ptr<llm_client> client;
    if (kind == "llm") {
        transport = make_curl_transport();
        client = std::make_unique<llm_client>(model, api_key, *transport, retry_settings{},
                                              llm_budget{o.max_model_calls, o.max_tokens_total}, run);
        llm_proposer_settings ls;
        ls.description = o.description;
        ls.signature = o.signature;
        ls.device_json = pre.device_json;
        ls.work_folder = run / "model-compile";
        profile_function profile;
        if (o.use_nsight)
            profile = [&](const search_state& s, const std::string& case_name) {
                return profile_best(s, case_name, m, evaluator, *runner, o.harness, run);
            };
        prop = make_llm_proposer(m, *client, evaluator, ls, profile);
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
    if (client) info.model_json = model_block(*client, prices);
    write_file_atomic(run / "summary.json", summary_json(outcome, m, oracle, run, info.model_json));
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
        const bool initial_failed = outcome.history.size() == 1 && outcome.history[0].verdict != "valid";
        return to_int(initial_failed ? exit_code::initial_failed : exit_code::proposer_failed);
    }
    if (outcome.stop_reason == "budget_exhausted" && !o.quiet) std::cerr << "cuda-optimizer: " << outcome.error << "\n";
    if (outcome.stop_reason == "interrupted") return to_int(exit_code::interrupted);
    return to_int(exit_code::ok);
}

}  // namespace cuopt
