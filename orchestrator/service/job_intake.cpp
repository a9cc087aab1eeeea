#include "orchestrator/service/job_intake.hpp"

#include <CLI/CLI.hpp>
#include <boost/process.hpp>
#include <set>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/evaluation/child_group.hpp"

namespace cuopt {

namespace fs = std::filesystem;
namespace bp = boost::process;

namespace {

// Flags the daemon sets itself, or that name files outside the locked manifest: a job gives
// its files through its config (relative paths), so that they are copied and hashed.
const std::set<std::string> k_daemon_flags = {
    "--config",           "--results-dir",    "--devices",     "--device",
    "--resume",           "--harness",        "--sanitizer",   "--json",
    "--reference",        "--initial-kernel", "--input-cases", "--holdout-cases",
    "--candidates",       "--docs-cache",     "--accepted",    "--out",
    "--accept",           "--kernel",         "--base-url",    "--docs-hosts",
    "--allow-unconfined", "--daemon-job"};

// Config keys a job may not set: the programs that run it belong to whoever runs the daemon.
// And where the daemon's model API key goes (base_url) or what its documentation fetches may
// reach (docs_hosts): set by whoever runs serve (OPENAI_BASE_URL / ANTHROPIC_BASE_URL). And
// whether its kernels may run unconfined (serve --allow-unconfined), or count as a job's.
const std::set<std::string> k_refused_keys = {"harness",   "sanitizer",  "docs_cache",
                                              "base_url",  "docs_hosts", "allow_unconfined",
                                              "daemon_job"};

void refuse_daemon_flags(const std::vector<std::string>& args) {
    if (const std::string why = daemon_flag_problem(args); !why.empty())
        throw intake_error("submit: " + why);
}

// The options optimize would run with: the config, then the job's flags on top.
optimizer_options options_of(const fs::path& config, const std::vector<std::string>& args) {
    CLI::App app("submit");
    optimizer_options o;
    define_run_options(&app, o);
    std::vector<std::string> argv = {"--config", config.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::reverse(argv.begin(), argv.end());  // CLI11 parses a reversed vector
    try {
        app.parse(argv);
        apply_config(&app, o);
    } catch (const CLI::Error& e) {
        throw intake_error("submit: the job's flags: " + std::string(e.what()));
    } catch (const json_error& e) {
        throw intake_error(e.what());
    }
    return o;
}

void refuse_program_keys(const fs::path& config) {
    rapidjson::Document d;
    const std::string why = try_parse_json(d, read_text_file(config));
    if (!why.empty()) throw intake_error(config.string() + ": " + why);
    if (!d.IsObject()) throw intake_error(config.string() + ": expected an object");
    for (const auto& m : d.GetObject())
        if (k_refused_keys.count(m.name.GetString()))
            throw intake_error(config.string() + ": field " + m.name.GetString() +
                               ": a job may not name the programs that run it, where the "
                               "model's key is sent or whether its kernels run unconfined (the "
                               "daemon decides); remove it");
}

void add_manifest_files(const manifest& m, std::vector<fs::path>& files) {
    for (const manifest_case& mc : m.cases) {
        for (const manifest_arg& a : m.args)
            if (a.has_input())
                if (const auto& init = m.init_for(mc, a); init.file) files.push_back(*init.file);
        for (const auto& [name, path] : mc.expected) files.push_back(path);
    }
}

// Every file the job names: the config, kernels, manifest, holdout, file inputs, expected
// outputs and --proposer files' candidates. Absolute, lexically normal.
bool inside(const fs::path& folder, const fs::path& p) {
    const std::string rel = fs::absolute(p).lexically_normal().lexically_relative(folder).string();
    return !rel.empty() && rel.rfind("..", 0) != 0;
}

// With a box (the dashboard's upload), a path is refused before anything reads it: outside the
// box (symlinks resolved), or not a regular file (a FIFO, /dev/zero) where a file is wanted.
void confine(const fs::path& box, const fs::path& p, bool folder) {
    if (box.empty()) return;
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(p, ec);
    if (ec || !inside(box, real))
        throw intake_error("submit: the job names " + p.filename().string() +
                           " outside the files it was given; name only those");
    if (folder ? !fs::is_directory(real, ec) : !fs::is_regular_file(real, ec))
        throw intake_error("submit: " + p.filename().string() + " is not a " +
                           (folder ? "folder" : "regular file"));
}

std::vector<fs::path> named_files(const fs::path& config, const std::vector<std::string>& args,
                                  const fs::path& box = {}) {
    const optimizer_options o = options_of(config, args);
    std::vector<fs::path> files = {config};
    for (const std::string* f : {&o.reference, &o.initial_kernel, &o.input_cases, &o.holdout_cases})
        if (!f->empty()) {
            confine(box, *f, false);
            files.emplace_back(*f);
        }
    if (!o.candidates.empty()) confine(box, o.candidates, true);
    try {
        if (!o.input_cases.empty()) {
            const manifest m = read_manifest(o.input_cases);
            add_manifest_files(m, files);
            if (!o.holdout_cases.empty())
                add_manifest_files(read_holdout_manifest(o.holdout_cases, m), files);
        }
    } catch (const std::exception& e) {
        throw intake_error(e.what());
    }
    if (!o.candidates.empty())
        for (const auto& e : fs::recursive_directory_iterator(o.candidates))
            if (e.is_regular_file()) files.push_back(e.path());
    for (fs::path& f : files) f = fs::absolute(f).lexically_normal();
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    return files;
}

fs::path common_folder(const std::vector<fs::path>& files) {
    fs::path root = files.front().parent_path();
    for (const fs::path& f : files)
        while (!root.empty() && root != root.root_path() &&
               f.lexically_relative(root).string().rfind("..", 0) == 0)
            root = root.parent_path();
    return root;
}

void stage_optimize(const submission& sub, const fs::path& stage, job_spec& spec) {
    if (sub.config.empty()) throw intake_error("submit: --config is required");
    const fs::path config = fs::absolute(sub.config).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(config, ec))
        throw intake_error("submit: --config " + sub.config.string() + ": no such file");
    refuse_program_keys(config);
    const fs::path box = sub.confine_to.empty() ? fs::path() : fs::weakly_canonical(sub.confine_to);
    const std::vector<fs::path> files = named_files(config, sub.args, box);
    for (const fs::path& f : files) confine(box, f, false);  // the manifests' files too
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
    for (const fs::path& f : named_files(staged_files / spec.config, sub.args))
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

std::string daemon_flag_problem(const std::vector<std::string>& args) {
    for (const std::string& a : args) {
        const std::string flag = a.substr(0, a.find('='));
        if (k_daemon_flags.count(flag))
            return flag +
                   " is set by the daemon or names a file outside the job: give files in the "
                   "config, as paths relative to it";
    }
    return "";
}

bool check_outcome::rejects() const {
    return exit_code == 11 || exit_code == 21 || exit_code == 22 || exit_code == 64 ||
           exit_code < 0;
}

fs::path stage_submission(const spool& s, const submission& sub, job_spec& spec) {
    refuse_daemon_flags(sub.args);
    spec.kind = sub.kind;
    spec.priority = sub.priority;
    spec.submitted_by = sub.submitted_by;
    spec.args = sub.args;
    const fs::path stage = s.new_staging();
    try {
        if (sub.kind == "gate")
            stage_gate(sub, stage, spec);
        else if (sub.kind == "optimize")
            stage_optimize(sub, stage, spec);
        else
            throw intake_error("submit: kind " + sub.kind + ": expected optimize or gate");
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
    try {
        bp::ipstream output;
        bp::child c(optimizer.string(), bp::args(argv), bp::start_dir(stage.string()),
                    (bp::std_out & bp::std_err) > output, bp::std_in < bp::null,
                    own_process_group{});
        std::string line;
        while (std::getline(output, line)) out.table += line + "\n";
        c.wait();
        out.exit_code = c.exit_code();
    } catch (const std::exception& e) {
        out.exit_code = -1;
        out.table += std::string("check could not run: ") + e.what() + "\n";
    }
    return out;
}

std::string submit_job(const spool& s, const submission& sub, const fs::path& optimizer,
                       const fs::path& harness, std::string* table) {
    job_spec spec;
    const fs::path stage = stage_submission(s, sub, spec);
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
