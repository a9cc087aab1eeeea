#include "orchestrator/service/job_intake.hpp"

#include <cctype>
#include <chrono>
#include <set>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/service/job_limits.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr long k_list_timeout_ms = 60'000;    // optimize --list-files reads a few JSON files
constexpr long k_check_timeout_ms = 600'000;  // check compiles the reference and initial kernels

// What a job may set, by config key (snake case), as a flag or in its config: the problem's
// description, the search, the evidence, the timing and the report's economics. An allow-list:
// everything else is the daemon's (serve's --harness, --sanitizer and every program that runs
// the job; where the model's key goes, which model it pays for and how much a job may spend;
// the documentation tool and its network; whether kernels run unconfined; the daemon's own and
// hidden flags such as --list-files), and an option added later is refused until it is put here.
// clang-format off
const std::set<std::string> k_job_settings = {
    "signature", "description", "timeout", "no_sanitizer", "allow_sanitizer_findings",
    "sanitizer_timeout", "max_iterations", "proposer", "seed", "batch", "min_gain", "max_repairs",
    "compile_threads", "no_compile_ahead", "no_evidence", "significance_runs",
    "evidence_candidates", "rerank", "fail_on_no_go", "stop_at_sol", "warmup", "iterations",
    "isolation", "timing_mode", "timer", "min_samples", "min_time_ms", "target_rse",
    "invocations_per_month", "gpu_hour_cost", "engineer_hours", "engineer_rate", "quiet",
    "threshold", "runs"};  // the last two: a gate job's
// clang-format on

// Config keys a job gives as paths relative to its config (copied into the job and hashed), and
// the report's prices: never flags (a flag's path could name a file outside the job).
const std::set<std::string> k_job_config_only = {"reference",       "initial_kernel", "input_cases",
                                                 "holdout_cases",   "candidates",     "results_dir",
                                                 "torch_reference", "prices"};

// A flag or config key as its config key: "--base-url" and "base-url" are "base_url" (CLI11
// and apply_json_options read them all as the same option).
std::string option_key(std::string name) {
    name = name.substr(0, name.find('='));
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

void refuse_program_keys(const fs::path& config) {
    if (const std::string why = config_key_problem(config); !why.empty()) throw intake_error(why);
}

bool inside(const fs::path& folder, const fs::path& p) {
    const std::string rel = fs::absolute(p).lexically_normal().lexically_relative(folder).string();
    return !rel.empty() && rel.rfind("..", 0) != 0;
}

// The files the optimizer says the job names (optimize --list-files), with a box confining them.
std::vector<fs::path> listed_files(const fs::path& optimizer, const fs::path& config,
                                   const std::vector<std::string>& args, const fs::path& box) {
    std::vector<std::string> argv = {optimizer.string(), "optimize", "--config", config.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--list-files");
    if (!box.empty()) argv.insert(argv.end(), {"--files-within", box.string()});
    const process_result r =
        make_child_process_runner()->run(argv, std::chrono::milliseconds(k_list_timeout_ms));
    std::string why = r.stderr_text;
    // CLI11 ends a usage error with this line; the line before it says what was wrong.
    const std::string help_hint = "Run with --help for more information.";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (why.size() >= help_hint.size() &&
        why.compare(why.size() - help_hint.size(), help_hint.size(), help_hint) == 0)
        why.erase(why.size() - help_hint.size());
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (const std::size_t nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
    const std::string prefix = "cuda-optimizer: ";
    if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    if (r.exit_code == to_int(exit_code::usage))  // optimize's usage error
        why = "submit: the job's flags: " + why;
    if (r.failed_to_start || r.timed_out || r.signal || r.exit_code != 0)
        throw intake_error(
            why.empty() ? "submit: cannot list the job's files (" + r.describe() + ")" : why);
    rapidjson::Document d;
    const rapidjson::Value* listed =
        try_parse_json(d, r.stdout_text).empty() ? member(d, "files") : nullptr;
    if (!listed || !listed->IsArray())
        throw intake_error("submit: cannot list the job's files (the optimizer's answer)");
    std::vector<fs::path> files;
    for (const auto& f : listed->GetArray())
        if (f.IsString()) files.emplace_back(f.GetString());
    if (files.empty()) throw intake_error("submit: the job names no file");
    return files;
}

void stage_optimize(const submission& sub, const fs::path& stage, job_spec& spec) {
    if (sub.config.empty()) throw intake_error("submit: --config is required");
    const fs::path config = fs::absolute(sub.config).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(config, ec))
        throw intake_error("submit: --config " + sub.config.string() + ": no such file");
    refuse_program_keys(config);
    const double limit =
        sub.job_time_limit_s > 0 ? sub.job_time_limit_s : k_default_job_time_limit_s;
    if (const std::string why =
            config_timeout_problem(config.filename().string(), read_text_file(config), limit);
        !why.empty())
        throw intake_error("submit: " + why);
    const fs::path box = sub.confine_to.empty() ? fs::path() : fs::weakly_canonical(sub.confine_to);
    const std::vector<fs::path> files = listed_files(sub.optimizer, config, sub.args, box);
    const fs::path root = common_folder(files);
    for (const fs::path& f : files) {
        if (!fs::is_regular_file(f, ec))
            throw intake_error("submit: " + f.string() + " (named by the job) is not a file");
        const fs::path to = stage / "files" / f.lexically_relative(root);
        fs::create_directories(to.parent_path());
        // Into the fresh staging folder new_staging() made (the daemon's own, nobody else
        // writes there), so no link can be waiting at `to`.
        fs::copy_file(f, to, fs::copy_options::overwrite_existing);
    }
    spec.config = config.lexically_relative(root).generic_string();
    // The copy must be self-contained: a path the config gives absolutely would still name
    // the original, which could change after the job was locked.
    const fs::path staged_files = fs::absolute(stage / "files").lexically_normal();
    for (const fs::path& f : listed_files(sub.optimizer, staged_files / spec.config, sub.args, {}))
        if (!inside(staged_files, f))
            throw intake_error("submit: the job names " + f.string() +
                               " by an absolute path; give it relative to the config so that "
                               "it can be locked with the job");
}

void stage_gate(const submission& sub, const fs::path& stage, job_spec& spec) {
    std::error_code ec;
    if (sub.accepted.empty() || !fs::is_regular_file(sub.accepted / "run.json", ec))
        throw intake_error("submit --gate: --accepted " + sub.accepted.string() +
                           ": not a run folder (no run.json)");
    // Into the fresh staging folder (the daemon's own): nothing can be planted there first.
    fs::copy(sub.accepted, stage / "files" / "accepted", fs::copy_options::recursive);
    spec.accepted = "accepted";
}

}  // namespace

fs::path common_folder(const std::vector<fs::path>& files) {
    fs::path root = files.front().parent_path();
    for (const fs::path& f : files)
        while (!root.empty() && root != root.root_path() &&
               f.lexically_relative(root).string().rfind("..", 0) == 0)
            root = root.parent_path();
    return root;
}

std::string daemon_flag_problem(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
        // The command line ends a word at its first NUL: "--model\0x" would run as --model.
        if (a.find('\0') != std::string::npos)
            return "a flag or value holds a NUL character; the command line cannot carry it";
        // A value, not a flag: a word without a leading '-', or a negative number ("-1").
        if (a.rfind("-", 0) != 0 ||
            (a.size() > 1 && (std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.')))
            continue;
        if (!k_job_settings.count(option_key(a)))
            return a.substr(0, a.find('=')).substr(0, 100) +
                   " is set by the daemon, names a file outside the job or spends the daemon's "
                   "model key, or is no option a job may set: give files in the config, as "
                   "paths relative to it (docs/SERVICE.md lists what a job may set)";
    }
    return "";
}

std::string config_key_problem(const fs::path& config) {
    rapidjson::Document d;
    const std::string why = try_parse_json(d, read_text_file(config));
    if (!why.empty()) return config.string() + ": " + why;
    if (!d.IsObject()) return config.string() + ": expected an object";
    for (const auto& [name, value] : json_field(d, config.string()).members()) {
        const std::string key = name.c_str();  // to a NUL, as apply_json_options reads it
        const std::string k = option_key(key);
        if (!k_job_settings.count(k) && !k_job_config_only.count(k))
            return config.string() + ": field " + key.substr(0, 100) +
                   ": a job may not name the programs that run it, where the model's key is "
                   "sent, which model spends it and how much, the documentation tool, or "
                   "whether its kernels run unconfined, nor any option outside what a job may "
                   "set (the daemon decides; docs/SERVICE.md lists the rest); remove it";
    }
    return "";
}

bool check_outcome::rejects() const {
    using code = cuopt::exit_code;  // `exit_code` here is the member
    for (const code refused :
         {code::invalid_request, code::initial_failed, code::reference_failed, code::usage})
        if (exit_code == to_int(refused)) return true;
    return exit_code < 0;
}

fs::path stage_submission(const spool& s, const submission& sub, job_spec& spec) {
    const double limit =
        sub.job_time_limit_s > 0 ? sub.job_time_limit_s : k_default_job_time_limit_s;
    if (const std::string why = job_args_problem(sub.args, limit); !why.empty())
        throw intake_error("submit: " + why);
    spec.kind = sub.kind;
    spec.priority = sub.priority;
    spec.submitted_by = sub.submitted_by;
    spec.submitter_uid = sub.submitter_uid;
    // The dashboard's intake names no user of its own: its jobs are the web's.
    spec.submitter = sub.submitter.empty() && sub.submitted_by == "web" ? "web" : sub.submitter;
    spec.args = sub.args;
    const fs::path stage = s.new_staging();
    try {
        if (sub.kind == "gate")
            stage_gate(sub, stage, spec);
        else if (sub.kind == "optimize")
            stage_optimize(sub, stage, spec);
        else
            throw intake_error("submit: kind " + quote_value(sub.kind) +
                               ": expected optimize or gate");
        if (sub.max_spool_bytes > 0) {
            const std::uintmax_t mine = spool_bytes_of(s, sub.submitter_uid);
            const std::uintmax_t adds = folder_bytes(stage);
            if (mine + adds > sub.max_spool_bytes)
                throw intake_error(
                    "submit: " +
                    (sub.submitter.empty() ? std::string("your") : sub.submitter + "'s") +
                    " jobs hold " + std::to_string(mine >> 20) + " MiB of the spool and this one " +
                    std::to_string(adds >> 20) + " MiB more; the limit is " +
                    std::to_string(sub.max_spool_bytes >> 20) +
                    " MiB a user (serve --max-spool-mb-per-user): cancel a job, or wait for "
                    "ended ones to go (serve --keep-jobs)");
        }
    } catch (const fs::filesystem_error& e) {
        std::error_code ec;
        fs::remove_all(stage, ec);
        throw intake_error(std::string("submit: ") + e.what());
    } catch (...) {
        std::error_code ec;
        fs::remove_all(stage, ec);
        throw;
    }
    return stage;
}

check_outcome check_staged(const fs::path& optimizer, const fs::path& harness,
                           const fs::path& stage, const job_spec& spec) {
    check_outcome out;
    if (spec.kind != "optimize") return out;  // the gate checks its accepted run itself
    const std::vector<std::string> argv = {"check", "--config",
                                           (stage / "files" / spec.config).string(), "--harness",
                                           harness.string(),
                                           // where the daemon puts it, never the config's own
                                           "--results-dir", (stage / "results").string(),
                                           // its kernels are untrusted: none is compiled
                                           // where the harness cannot confine itself
                                           "--daemon-job"};
    // The job's own flags were parsed at staging; check knows only the config's options.
    std::vector<std::string> command = {optimizer.string()};
    command.insert(command.end(), argv.begin(), argv.end());
    const process_result r =
        make_child_process_runner()->run(command, std::chrono::milliseconds(k_check_timeout_ms));
    out.exit_code = r.failed_to_start || r.timed_out || r.signal ? -1 : r.exit_code;
    out.table = r.stdout_text + r.stderr_text;
    if (out.exit_code < 0) out.table += "check could not run: " + r.describe() + "\n";
    return out;
}

std::string submit_job(const spool& s, const submission& sub, const fs::path& optimizer,
                       const fs::path& harness, std::string* table) {
    job_spec spec;
    submission asked = sub;
    if (asked.optimizer.empty()) asked.optimizer = optimizer;
    const fs::path stage = stage_submission(s, asked, spec);
    const check_outcome check = check_staged(optimizer, harness, stage, spec);
    if (table) *table = check.table;
    if (check.rejects()) {
        std::error_code ec;
        fs::remove_all(stage, ec);
        throw intake_error("submit: check rejected the job (exit " +
                               std::to_string(check.exit_code) + "); nothing was queued",
                           check.table);
    }
    return s.commit(stage, spec);
}

std::string upload_name_problem(const std::string& name) {
    if (name.empty()) return "an empty file name";
    if (name.size() > 200) return "a file name longer than 200 bytes";
    if (name.front() == '/') return "an absolute path";
    for (const unsigned char c : name)
        if (c < 0x20 || c == 0x7f || c == '\\' || c == ':')
            return "a backslash, colon or control character";
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return "an empty, '.' or '..' path component";
        start = end + 1;
    }
    return "";
}

}  // namespace cuopt

namespace cuopt {

std::vector<fs::path> files_named_by(const fs::path& optimizer, const fs::path& config,
                                     const std::vector<std::string>& args) {
    return listed_files(optimizer, config, args, {});
}

}  // namespace cuopt
