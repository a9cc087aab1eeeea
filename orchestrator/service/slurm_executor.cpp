// The Slurm executor: each job is a batch job (sbatch) whose script runs the command in the job's
// folder on the shared filesystem and leaves its exit code in JOB/slurm-exit-SLURMID, so the
// daemon learns how the command ended even after Slurm forgot the job. sbatch, scontrol, scancel
// and squeue run as child processes with a time limit: a hung slurmctld never blocks the daemon
// for good.
#include "orchestrator/service/slurm_executor.hpp"

#include <cctype>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/file_io.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds k_command_timeout{30};  // one Slurm command, at most

/// 'text' for /bin/sh: every character literal.
std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// The batch script: runs the command in JOB with its output appended to the job's log, then
/// records the command's exit code (written whole: temporary file, rename) and exits with it.
/// A trapped SIGTERM (scancel, a time limit) waits for the command, which Slurm signals too,
/// so the code it ends with is still recorded where Slurm's KillWait allows.
std::string job_script(const job_launch& launch) {
    const std::string dir = shell_quoted(launch.job_dir.string());
    std::string command;
    for (const std::string& arg : launch.argv) command += shell_quoted(arg) + " ";
    std::ostringstream s;
    s << "#!/bin/sh\n"
      << "# Written by cuda-optimizer serve: job " << launch.job_id << " as a Slurm job.\n"
      << "cd " << dir << " || exit 1\n"
      << "trap 'echo \"slurm-job.sh: SIGTERM (scancel or time limit)\" >&2' TERM\n"
      << command << ">>" << shell_quoted(launch.log.string()) << " 2>&1 </dev/null\n"
      << "code=$?\n"
      << "exit_file=" << dir << "/slurm-exit-$SLURM_JOB_ID\n"
      << "printf '%s\\n' \"$code\" >\"$exit_file.tmp\" && mv -f \"$exit_file.tmp\" \"$exit_file\"\n"
      << "exit \"$code\"\n";
    return s.str();
}

std::string first_line(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    return line;
}

/// A failed command in one line, with what it said: "sbatch failed (exit 1): sbatch: error: ...;
/// sbatch: error: ...".
std::string failure(const std::string& what, const process_result& r) {
    std::istringstream lines(r.stderr_text.empty() ? r.stdout_text : r.stderr_text);
    std::string said, line;
    while (std::getline(lines, line))
        if (!(line = first_line(line)).empty()) said += (said.empty() ? "" : "; ") + line;
    return what + " failed (" + r.describe() + ")" + (said.empty() ? "" : ": " + said);
}

bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

/// The fields of `scontrol show job -o ID` this executor reads.
struct slurm_job_record {
    std::string state;       // JobState: PENDING, RUNNING, COMPLETED, TIMEOUT, ...
    std::string reason;      // Reason: None, TimeLimit, NonZeroExitCode, ...
    std::string exit_code;   // ExitCode: "3:0" (exit 3), "0:15" (signal 15)
    std::string time_limit;  // TimeLimit: 00:01:00, UNLIMITED
    std::string work_dir;    // WorkDir: the job's folder (--chdir)
};

/// The value of `key` in a one-line record of space-separated key=value fields ("" if absent).
std::string field_of(const std::string& line, const std::string& key) {
    std::size_t at = 0;
    while ((at = line.find(key + "=", at)) != std::string::npos) {
        if (at == 0 || line[at - 1] == ' ') {
            const std::size_t from = at + key.size() + 1;
            return line.substr(from, line.find(' ', from) - from);
        }
        at += key.size();
    }
    return "";
}

slurm_job_record parse_job_record(const std::string& line) {
    slurm_job_record r;
    r.state = field_of(line, "JobState");
    r.reason = field_of(line, "Reason");
    r.exit_code = field_of(line, "ExitCode");
    r.time_limit = field_of(line, "TimeLimit");
    r.work_dir = field_of(line, "WorkDir");
    return r;
}

bool is_final_state(const std::string& state) {
    static const std::set<std::string> final_states = {
        "COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT", "NODE_FAIL",   "OUT_OF_MEMORY",
        "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "REVOKED", "SPECIAL_EXIT"};
    return final_states.count(state) > 0;
}

/// The exit code the job's script recorded, if it got that far.
std::optional<int> read_exit_file(const fs::path& job_dir, const std::string& slurm_id) {
    if (job_dir.empty()) return std::nullopt;
    try {
        const std::string text = first_line(read_text_file(job_dir / ("slurm-exit-" + slurm_id)));
        if (all_digits(text)) return std::stoi(text);
    } catch (const std::exception&) {
        // No file (the script never got there) or no number in it: no exit code recorded.
    }
    return std::nullopt;
}

/// Why a Slurm job ended, in one line for the job's record; "" for a plain exit.
std::string ending_reason(const std::string& id, const slurm_job_record& r, bool recorded) {
    const std::string job = "Slurm job " + id;
    if (r.state == "CANCELLED") return "Slurm cancelled it (scancel): " + job;
    if (r.state == "TIMEOUT") return job + " hit its time limit " + r.time_limit;
    if (r.state == "NODE_FAIL") return job + " ended with NODE_FAIL: its node failed";
    if (r.state == "OUT_OF_MEMORY") return job + " ran out of memory (OUT_OF_MEMORY)";
    if (r.state == "PREEMPTED") return job + " was preempted (PREEMPTED)";
    if (r.state == "BOOT_FAIL") return job + " ended with BOOT_FAIL: its node failed to boot";
    if (r.state == "DEADLINE") return job + " passed its deadline (DEADLINE)";
    if (r.state == "COMPLETED" || (r.state == "FAILED" && recorded)) return "";
    return job + " ended " + r.state + " (ExitCode " + r.exit_code + ", Reason " + r.reason +
           ") before its command recorded an exit code (is the job's folder on a filesystem its "
           "node shares?)";
}

/// A final record as the daemon's job_exit: the recorded exit code, else Slurm's ExitCode
/// ("A:B": exit A, or signal B when B is not 0).
job_exit exit_of(const std::string& id, const slurm_job_record& r, std::optional<int> recorded) {
    job_exit out;
    out.slurm_state = r.state;
    if (recorded) {
        out.exit_code = *recorded;
    } else if (const std::size_t colon = r.exit_code.find(':'); colon != std::string::npos) {
        const std::string code = r.exit_code.substr(0, colon), sig = r.exit_code.substr(colon + 1);
        if (all_digits(sig) && std::stoi(sig) != 0)
            out.signal = std::stoi(sig);
        else if (all_digits(code))
            out.exit_code = std::stoi(code);
    }
    out.reason = ending_reason(id, r, recorded.has_value());
    return out;
}

class slurm_executor final : public job_executor {
  public:
    slurm_executor(slurm_settings settings, std::unique_ptr<process_runner> runner)
        : m_settings(std::move(settings)), m_runner(std::move(runner)) {}
    std::string name() const override { return "slurm"; }
    bool runs_jobs_here() const override { return false; }
    double min_poll_s() const override { return 1.0; }
    std::size_t slots() const override { return m_settings.max_jobs; }

    std::string start(const job_launch& launch) override {
        const fs::path script = launch.job_dir / "slurm-job.sh";
        write_file_atomic(script, job_script(launch));
        fs::permissions(script, fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
        const process_result r = run(sbatch_argv(launch, script));
        const std::string line = first_line(r.stdout_text);
        const std::string id = line.substr(0, line.find(';'));  // "ID" or "ID;CLUSTER"
        if (r.exit_code != 0 || !all_digits(id)) throw std::runtime_error(failure("sbatch", r));
        m_job_dirs[id] = launch.job_dir;
        return id;
    }

    std::optional<job_exit> poll(const std::string& handle) override {
        const std::optional<slurm_job_record> record = show_job(handle);
        if (!record) {  // Slurm forgot it (MinJobAge passed, or slurmctld lost its state)
            if (const auto code = read_exit_file(job_dir_of(handle, ""), handle))
                return job_exit{*code, 0, "", ""};
            return job_exit{-1, 0, "",
                            "Slurm no longer knows job " + handle + " and it left no exit code"};
        }
        if (!is_final_state(record->state)) return std::nullopt;
        return exit_of(handle, *record,
                       read_exit_file(job_dir_of(handle, record->work_dir), handle));
    }

    void cancel(const std::string& handle) override {
        const process_result r = run({"scancel", handle});
        if (r.exit_code != 0) throw std::runtime_error(failure("scancel " + handle, r));
    }

    /// True while Slurm still knows the job, final or not, or its exit file is there: the
    /// daemon's next poll then records how it ended (a job scancelled or timed out while no
    /// daemon watched is recorded so, not started again). True as well while slurmctld does not
    /// answer: the job is polled until it does, never submitted a second time meanwhile.
    bool attach(const std::string& handle, const job_launch& launch) override {
        if (!all_digits(handle)) return false;
        m_job_dirs[handle] = launch.job_dir;
        try {
            if (show_job(handle)) return true;
        } catch (const std::runtime_error&) {
            return true;
        }
        return read_exit_file(launch.job_dir, handle).has_value();
    }

    /// The newest pending or running job named PREFIX-JOBID (a finished one is not taken: the
    /// job's run folder tells the daemon how that ended).
    std::string find_by_name(const job_launch& launch) override {
        const process_result r = run({"squeue", "-h", "-n", job_name(launch), "-o", "%i"});
        if (r.exit_code != 0) throw std::runtime_error(failure("squeue", r));
        std::istringstream lines(r.stdout_text);
        std::string line, newest;
        while (std::getline(lines, line)) {
            line = first_line(line);
            if (all_digits(line) && (newest.empty() || std::stoull(line) > std::stoull(newest)))
                newest = line;
        }
        return newest;
    }

  private:
    process_result run(const std::vector<std::string>& argv) {
        return m_runner->run(argv, k_command_timeout);
    }

    std::string job_name(const job_launch& launch) const {
        return m_settings.job_name_prefix + "-" + launch.job_id;
    }

    std::vector<std::string> sbatch_argv(const job_launch& launch, const fs::path& script) const {
        std::vector<std::string> argv = {"sbatch",     "--parsable",
                                         "--job-name", job_name(launch),
                                         "--chdir",    launch.job_dir.string(),
                                         "--output",   (launch.job_dir / "slurm-%j.out").string()};
        const std::pair<const char*, const std::string*> options[] = {
            {"--gres", &m_settings.gres},
            {"--partition", &m_settings.partition},
            {"--time", &m_settings.time_limit},
            {"--account", &m_settings.account}};
        for (const auto& [flag, value] : options)
            if (!value->empty()) argv.insert(argv.end(), {flag, *value});
        argv.insert(argv.end(), m_settings.extra.begin(), m_settings.extra.end());
        argv.push_back(script.string());
        return argv;
    }

    /// The job's record; nullopt when Slurm does not know the id. Throws when scontrol cannot
    /// answer (slurmctld down or slow): the daemon keeps the job and asks again.
    std::optional<slurm_job_record> show_job(const std::string& id) {
        const process_result r = run({"scontrol", "show", "job", "-o", id});
        if (r.exit_code == 0) {
            slurm_job_record record = parse_job_record(first_line(r.stdout_text));
            if (!record.state.empty()) return record;
        }
        if (r.stderr_text.find("Invalid job id") != std::string::npos) return std::nullopt;
        throw std::runtime_error(failure("scontrol show job " + id, r));
    }

    fs::path job_dir_of(const std::string& id, const std::string& work_dir) const {
        const auto it = m_job_dirs.find(id);
        if (it != m_job_dirs.end()) return it->second;
        return work_dir;
    }

    slurm_settings m_settings;
    std::unique_ptr<process_runner> m_runner;
    std::map<std::string, fs::path> m_job_dirs;  // Slurm job id -> the job's folder
};

}  // namespace

std::unique_ptr<job_executor> make_slurm_executor(const slurm_settings& settings,
                                                  std::unique_ptr<process_runner> runner) {
    return std::make_unique<slurm_executor>(settings, std::move(runner));
}

std::unique_ptr<job_executor> make_slurm_executor(const slurm_settings& settings) {
    // sbatch hands its environment to the job (cuda-optimizer, which needs the model's key).
    return make_slurm_executor(settings,
                               make_child_process_runner(child_environment_kind::inherited));
}

}  // namespace cuopt
