#include "orchestrator/service/job_starter.hpp"

#include <chrono>

#include "common/file_io.hpp"
#include "common/utc_time.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/job_limits.hpp"
#include "orchestrator/service/launch_record.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr int k_max_starts = 20;  // a job restarted this often is failed, not started again
// How long a gate job waits for the processes of its last start (as optimize --resume does).
constexpr auto k_gate_straggler_wait = std::chrono::seconds(30);

}  // namespace

job_launch launch_of(const spool& s, const std::string& id, const job_status& st) {
    job_launch l;
    l.job_id = id;
    l.job_dir = s.job_dir(id);
    l.log = l.job_dir / "job.log";
    l.device = st.device;
    return l;
}

job_starter::job_starter(const daemon_settings& settings, job_queue& queue, job_executor& executor,
                         job_finaliser& finaliser)
    : m_settings(settings), m_queue(queue), m_executor(executor), m_finaliser(finaliser) {}

bool job_starter::may_start() const {
    return daemon_clock::now() >= m_retry_after;
}

bool job_starter::start(const std::string& id, int device) {
    try {
        start_job(m_queue.jobs().read_status(id), device);
    } catch (const std::exception& e) {
        // A job folder damaged, gone or unreadable fails that job alone, never the queue.
        m_queue.fail_alone(id, std::string("cannot start: ") + e.what());
    }
    return may_start();
}

// Why the job must not start (it fails with this line); "" when it may.
std::string job_starter::refusal(const job_status& st, const job_spec& spec) const {
    if (const std::string changed = m_queue.jobs().verify_locked(st.id); !changed.empty())
        return "locked manifest: " + changed;
    // job.json again: what was checked at submit is checked at every start.
    if (std::string bad = job_args_problem(spec.args, m_settings.job_time_limit_s); !bad.empty())
        return bad;
    if (spec.kind == "optimize") try {
            const fs::path config = m_queue.jobs().job_dir(st.id) / "files" / spec.config;
            if (std::string bad = config_key_problem(config); !bad.empty()) return bad;
            if (std::string bad = config_timeout_problem(spec.config, read_text_file(config),
                                                         m_settings.job_time_limit_s);
                !bad.empty())
                return bad;
        } catch (const std::exception&) {  // unreadable: optimize says so in the job's log
        }
    if (st.starts >= k_max_starts)
        return "started " + std::to_string(st.starts) + " times without ending";
    return "";
}

// A gate measures afresh: results/gate goes, but only once no process of an earlier start
// holds its lock (a harness that outlived a killed gate a moment still writes into it, and
// would make the folder again under the new gate, which refuses a folder that is not empty).
// False when it cannot go (yet): held by a process that runs, the job fails; by one that has
// ended (under Slurm: by anyone), the job waits, tried again at each tick, and fails after 30 s.
bool job_starter::clear_gate_folder(job_status& st) {
    const fs::path job = m_queue.jobs().job_dir(st.id);
    const fs::path gate = job / "results" / "gate";
    std::error_code ec;
    std::vector<pid_lock> held;
    std::optional<earlier_start> earlier;
    try {
        if (fs::is_directory(fs::symlink_status(gate, ec)))
            earlier = take_earlier_locks({gate}, m_finaliser.local_pids(), held);
    } catch (const std::exception& e) {
        m_queue.finalise(st, job_state::failed, std::string("cannot rerun the gate: ") + e.what(),
                         -1);
        return false;
    }
    const auto since = m_gate_waits.find(st.id);
    if (earlier &&
        (earlier->running || (since != m_gate_waits.end() &&
                              daemon_clock::now() - since->second > k_gate_straggler_wait))) {
        m_gate_waits.erase(st.id);
        m_queue.finalise(st, job_state::failed,
                         "not rerun: " + holds_text(*earlier, job) +
                             (earlier->running ? "" : " after 30 s (a process of its last start)"),
                         -1);
        return false;
    }
    if (earlier) {
        const std::string waits = "waits for the processes of its last start to end";
        if (since == m_gate_waits.end()) {
            m_gate_waits[st.id] = daemon_clock::now();
            st.reason = waits;
            m_queue.save(st);
            m_queue.log(st.id, waits);
        }
        if (st.state == job_state::running) m_queue.to_resume().push_back(st.id);
        return false;
    }
    m_gate_waits.erase(st.id);
    fs::remove_all(gate, ec);
    if (ec) {
        m_queue.finalise(
            st, job_state::failed,
            "cannot rerun the gate: results/gate: cannot remove (" + ec.message() + ")", -1);
        return false;
    }
    return true;
}

void job_starter::start_job(job_status st, int device) {
    const spool& s = m_queue.jobs();
    const std::string id = st.id;
    const fs::path job = s.job_dir(id);
    if (s.cancel_requested(id))
        return m_queue.finalise(st, job_state::cancelled, cancelled_unstarted_reason(st), -1);
    const job_spec spec = s.read_spec(id);
    const fs::path gate_json = job / "results" / "gate" / "gate.json";
    // A gate that ended while no daemon watched: its verdict, when it is this daemon's gate.
    if (spec.kind == "gate" && fs::is_regular_file(gate_json) && gate_started_by_daemon(job))
        return m_finaliser.from_gate(st, gate_json);
    if (const fs::path run = run_folder_of(job); spec.kind != "gate" && !run.empty()) {
        // resume takes its flags from run.json: only the run this daemon started is resumed.
        if (std::string bad = run_trust_problem(job, run, st.run_dir); !bad.empty())
            return m_queue.finalise(st, job_state::failed, bad, -1);
        // A run that ended while no daemon was watching is finalised, never run again.
        if (const auto end = finished_run(run)) return m_finaliser.from_run(st, run, *end);
    }
    // Before refusal(), which hashes the job's files: a gate that waits is tried at each tick.
    if (spec.kind == "gate") {
        std::string queued;  // an sbatch that timed out may have queued it: adopted below, as is
        try {                // a scheduler's own record; "" from an executor that keeps none
            queued = m_executor.find_by_name(launch_of(s, id, st));
        } catch (const std::exception& e) {
            return not_started(st, e.what());
        }
        if (queued.empty() && !clear_gate_folder(st)) return;  // it waits, or failed
    }
    if (std::string bad = refusal(st, spec); !bad.empty())
        return m_queue.finalise(st, job_state::failed, bad, -1);
    const job_state before = st.state;
    st.device = device;
    st.state = job_state::running;
    st.executor = m_executor.name();
    st.handle.clear();
    st.reason.clear();
    ++st.starts;
    if (st.started.empty()) st.started = utc_now();
    job_launch launch = launch_of(s, id, st);
    bool resumed = false;
    launch.argv = command_of(spec, st, resumed);
    // Before the child starts: a daemon killed right after still knows what it launched.
    if (!resumed) write_launch_record(job, spec.kind, launch.argv);
    m_queue.save(st);  // running before it starts: a restart finds it either way
    try {
        // An sbatch that timed out may still have queued the job: never a second one.
        st.handle = m_executor.find_by_name(launch);
        if (st.handle.empty()) st.handle = m_executor.start(launch);
    } catch (const std::exception& e) {
        return start_failed(st, before, e.what());
    }
    m_queue.active()[id] = active_job{st.handle, device, false, resumed};
    m_queue.save(st);
    m_queue.log(id, std::string(resumed ? "resumed" : "started") + " (" + m_executor.name() + " " +
                        st.handle +
                        (m_executor.runs_jobs_here() ? ", GPU " + std::to_string(device) : "") +
                        ")");
}

std::vector<std::string> job_starter::command_of(const job_spec& spec, const job_status& st,
                                                 bool& resumed) {
    const fs::path job = m_queue.jobs().job_dir(st.id);
    // A scheduler's job sees the one GPU it was given as device 0.
    const std::string device = std::to_string(m_executor.runs_jobs_here() ? st.device : 0);
    std::vector<std::string> argv = {m_settings.optimizer.string()};
    resumed = false;
    if (spec.kind == "gate") {
        std::error_code ec;
        fs::create_directories(job / "results", ec);  // results/gate: see clear_gate_folder
        argv.insert(argv.end(),
                    {"gate", "--accepted", "files/" + spec.accepted, "--out", "results/gate",
                     "--harness", m_settings.harness.string(), "--device", device});
    } else if (const fs::path run = run_folder_of(job); !run.empty()) {
        resumed = true;
        argv.insert(argv.end(),
                    {"optimize", "--resume", fs::relative(run, job).string(), "--devices", device});
        return argv;
    } else {
        // --daemon-job: every kernel of the job is untrusted (recorded in run.json's command
        // line, so a resume keeps it; a job cannot give it or take it away).
        argv.insert(argv.end(), {"optimize", "--config", "files/" + spec.config, "--results-dir",
                                 "results", "--harness", m_settings.harness.string(), "--devices",
                                 device, "--daemon-job"});
        if (m_settings.allow_unconfined) argv.push_back("--allow-unconfined");
        if (!m_settings.sanitizer.empty())
            argv.insert(argv.end(), {"--sanitizer", m_settings.sanitizer.string()});
    }
    argv.insert(argv.end(), spec.args.begin(), spec.args.end());
    return argv;
}

// The machine's problem, not the job's (the optimizer cannot be started, sbatch refused):
// the job keeps its place and nothing starts for a while.
void job_starter::start_failed(job_status st, job_state before, const std::string& why) {
    --st.starts;  // this start did not happen
    st.state = before;
    not_started(st, why);
}

void job_starter::not_started(job_status st, const std::string& why) {
    if (++m_start_failures[st.id] >= 5)
        return m_queue.finalise(st, job_state::failed, "could not start, 5 times: " + why, -1);
    st.reason = "could not start: " + why + " (tried again in 30 s)";
    m_queue.save(st);
    if (st.state == job_state::running) m_queue.to_resume().push_back(st.id);
    m_retry_after = daemon_clock::now() + std::chrono::seconds(30);
    m_queue.log(st.id, st.reason);
}

}  // namespace cuopt
