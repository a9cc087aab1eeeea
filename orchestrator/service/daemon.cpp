#include "orchestrator/service/daemon.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process.hpp>
#include <chrono>
#include <iostream>
#include <map>
#include <set>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/service/http_dashboard.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

constexpr int k_max_starts = 20;  // a job restarted this often is failed, not started again

// Holds SPOOL/.daemon.lock for the daemon's life: one daemon per spool.
class spool_lock {
  public:
    explicit spool_lock(const fs::path& root) {
        const fs::path file = root / ".daemon.lock";
        // O_NOFOLLOW: a link planted at the name is refused, never written through.
        m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (m_fd < 0) throw std::runtime_error(file.string() + ": cannot open");
        if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            char buf[32] = {};
            (void)::pread(m_fd, buf, sizeof buf - 1, 0);
            ::close(m_fd);
            m_fd = -1;
            throw std::runtime_error("another daemon serves " + root.string() + " (pid " +
                                     std::string(buf, strnlen(buf, sizeof buf)) + ")");
        }
        const std::string pid = std::to_string(::getpid()) + "\n";
        if (::ftruncate(m_fd, 0) != 0 || ::pwrite(m_fd, pid.data(), pid.size(), 0) < 0)
            std::cerr << "serve: " << file.string() << ": cannot write the pid\n";
    }
    ~spool_lock() {
        if (m_fd >= 0) ::close(m_fd);
    }
    spool_lock(const spool_lock&) = delete;
    spool_lock& operator=(const spool_lock&) = delete;

  private:
    int m_fd = -1;
};

// The run folder a job's optimizer made (JOB/results/run-NNN), or "" if none yet.
fs::path run_folder_of(const fs::path& job) {
    std::error_code ec;
    fs::path found;
    for (const auto& e : fs::directory_iterator(job / "results", ec))
        if (e.is_directory() && e.path().filename().string().rfind("run-", 0) == 0)
            found = std::max(found, e.path());
    return found;
}

// What run.json says of a run that ended: nullopt while under way (or interrupted: resumable).
struct run_end {
    std::string stop_reason, error;
};
std::optional<run_end> finished_run(const fs::path& run) {
    rapidjson::Document d;
    std::error_code ec;
    if (!fs::is_regular_file(run / "run.json", ec)) return std::nullopt;
    if (!try_parse_json(d, read_text_file(run / "run.json")).empty() || !d.IsObject())
        return std::nullopt;
    if (!d.HasMember("finished") || !d["finished"].IsString()) return std::nullopt;
    run_end e;
    if (d.HasMember("stop_reason") && d["stop_reason"].IsString())
        e.stop_reason = d["stop_reason"].GetString();
    if (d.HasMember("error") && d["error"].IsString()) e.error = d["error"].GetString();
    if (e.stop_reason == "interrupted") return std::nullopt;
    return e;
}

// "a winner passed the evidence gates: LABEL, 1.23x over the initial kernel", from summary.json.
std::string winner_line(const fs::path& run) {
    std::string line = "a winner passed the evidence gates";
    rapidjson::Document d;
    try {
        if (!try_parse_json(d, read_text_file(run / "summary.json")).empty() || !d.IsObject())
            return line;
    } catch (const std::exception&) {
        return line;
    }
    const auto best = d.FindMember("best");
    if (best == d.MemberEnd() || !best->value.IsObject()) return line;
    const rapidjson::Value& b = best->value;
    if (b.HasMember("label") && b["label"].IsString())
        line += std::string(": ") + b["label"].GetString();
    if (b.HasMember("speedup_vs_initial") && b["speedup_vs_initial"].IsNumber()) {
        char x[64];
        std::snprintf(x, sizeof x, ", %.2fx over the initial kernel",
                      b["speedup_vs_initial"].GetDouble());
        line += x;
    }
    return line;
}

// The last non-empty line of a job's log: the one-line reason optimize prints when it fails.
std::string last_log_line(const fs::path& log) {
    std::string text;
    try {
        text = read_text_file(log);
    } catch (const std::exception&) {
        return "";
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const std::size_t nl = text.rfind('\n');
    std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    return line;
}

struct active_job {
    std::string handle;
    int device = -1;
    bool cancel_sent = false;
    bool resumed = false;
};

class job_daemon {
  public:
    job_daemon(const daemon_settings& s, double stop_after_idle_s)
        : m_settings(s),
          m_spool(s.spool),
          m_lock(m_spool.root()),
          m_signals(m_io, SIGINT, SIGTERM),
          m_tick(m_io),
          m_idle_stop_s(stop_after_idle_s) {
        if (s.executor == "slurm")
            m_executor = make_slurm_executor(s.slurm);
        else
            m_executor = make_local_executor(s.devices);
        if (s.http)
            m_dashboard =
                std::make_unique<http_dashboard>(m_io, m_spool, *s.http, s.optimizer, s.harness);
    }

    int run() {
        announce();
        recover();
        m_signals.async_wait([this](const boost::system::error_code& ec, int sig) {
            if (!ec) on_signal(sig);
        });
        schedule_tick();
        m_io.run();
        return 0;
    }

  private:
    void announce() {
        if (m_settings.quiet) return;
        std::cout << "cuda-optimizer serve: spool " << m_spool.root().string() << ", executor "
                  << m_executor->name() << ", " << m_executor->slots() << " job(s) at once";
        if (m_dashboard)
            std::cout << "\ndashboard: http://" << m_settings.http->address << ":"
                      << m_dashboard->port() << "/?token=" << m_settings.http->token;
        std::cout << std::endl;
    }

    void log(const std::string& id, const std::string& what) {
        if (!m_settings.quiet) std::cout << utc_now() << " " << id << " " << what << std::endl;
    }

    // A job the last daemon left running: Slurm's still runs (re-attach); a local one died with
    // that daemon and is resumed (or finalised from its run folder if it had ended).
    void recover() {
        scan_spool(true);
        for (const auto& [id, known] : m_jobs) {
            if (known.state != job_state::running) continue;
            const job_status st = m_spool.read_status(id);
            if (st.executor == "slurm" && m_executor->name() != "slurm") {
                // It may still run in Slurm: running it here too could run it twice.
                std::cerr << "serve: " << id << " was started in Slurm (job " << st.handle
                          << "); left alone: serve this spool with --executor slurm\n";
                continue;
            }
            if (st.executor == "slurm")
                m_reattach.push_back(id);
            else
                m_to_resume.push_back(id);
        }
        reattach();
    }

    // Slurm jobs the last daemon started: re-attached by id (or by name when it was killed
    // before recording the id); a job Slurm no longer has is resumed. Slurm not answering
    // leaves them to the next try.
    void reattach() {
        for (auto it = m_reattach.begin(); it != m_reattach.end();) {
            const std::string id = *it;
            job_status st = m_spool.read_status(id);
            try {
                std::string handle = st.handle;
                if (handle.empty()) handle = m_executor->find_by_name(launch_of(id, st, false));
                if (!handle.empty() && m_executor->attach(handle, launch_of(id, st, false))) {
                    st.handle = handle;
                    save(st);
                    m_active[id] = active_job{handle, st.device, false, true};
                    log(id, "re-attached to Slurm job " + handle);
                } else {
                    m_to_resume.push_back(id);
                }
                it = m_reattach.erase(it);
            } catch (const std::exception& e) {
                std::cerr << "serve: " << id << ": cannot ask Slurm yet (" << e.what() << ")\n";
                return;
            }
        }
    }

    void schedule_tick() {
        m_tick.expires_after(std::chrono::milliseconds(static_cast<int>(
            1000 * std::max(m_settings.poll_s, m_executor->name() == "slurm" ? 1.0 : 0.05))));
        m_tick.async_wait([this](const boost::system::error_code& ec) {
            if (ec) return;
            try {
                tick();
            } catch (const std::exception& e) {
                std::cerr << "serve: " << e.what() << "\n";
            }
            if (!m_io.stopped()) schedule_tick();
        });
    }

    void tick() {
        if (scan_spool(false)) {
            take_cancellations();
            if (!m_reattach.empty()) reattach();
        }
        poll_running();
        if (m_stopping) {
            if (m_active.empty() || m_executor->name() == "slurm") m_io.stop();
            return;
        }
        start_what_fits();
        refresh_progress();
        if (m_idle_stop_s > 0) stop_when_idle();
    }

    void on_signal(int sig) {
        if (m_stopping) {  // a second signal: end the jobs' processes now
            std::cerr << "serve: stopping now\n";
            m_io.stop();
            return;
        }
        m_stopping = true;
        std::cerr << "serve: signal " << sig
                  << ": stopping; running jobs stop after their attempt and resume when serve "
                     "starts again\n";
        if (m_executor->name() == "local")
            for (auto& [id, a] : m_active) m_executor->cancel(a.handle);
        m_signals.async_wait([this](const boost::system::error_code& ec, int s) {
            if (!ec) on_signal(s);
        });
    }

    void stop_when_idle() {
        bool busy = !m_active.empty() || !m_to_resume.empty();
        for (const auto& [id, known] : m_jobs) busy = busy || known.state == job_state::queued;
        if (busy) {
            m_idle_since.reset();
            return;
        }
        if (!m_idle_since) m_idle_since = clock_type::now();
        if (std::chrono::duration<double>(clock_type::now() - *m_idle_since).count() >
            m_idle_stop_s)
            m_io.stop();
    }

    // New jobs (one folder listing; a job's spec and state are read once, as only this daemon
    // changes a queued job's state); false when the last scan was under 200 ms ago.
    bool scan_spool(bool force) {
        const auto now = clock_type::now();
        if (!force && now - m_last_scan < std::chrono::milliseconds(200)) return false;
        m_last_scan = now;
        for (const std::string& id : m_spool.job_ids()) {
            if (m_jobs.count(id)) continue;
            try {
                m_jobs[id] =
                    known_job{m_spool.read_status(id).state, m_spool.read_spec(id).priority};
            } catch (const std::exception& e) {
                if (m_unreadable.insert(id).second)  // said once; read again at the next scan
                    std::cerr << "serve: " << id << ": " << e.what()
                              << " (skipped until readable)\n";
            }
        }
        return true;
    }

    void save(const job_status& st) {
        m_spool.write_status(st);
        m_jobs[st.id].state = st.state;
    }

    void take_cancellations() {
        for (const auto& [id, known] : m_jobs) {
            if (is_final(known.state) || !m_spool.cancel_requested(id)) continue;
            const auto it = m_active.find(id);
            if (it != m_active.end()) {
                if (!it->second.cancel_sent) {
                    m_executor->cancel(it->second.handle);
                    it->second.cancel_sent = true;
                    log(id, "cancelling");
                }
                continue;
            }
            job_status st = m_spool.read_status(id);
            if (is_final(st.state)) continue;
            m_to_resume.erase(std::remove(m_to_resume.begin(), m_to_resume.end(), id),
                              m_to_resume.end());
            finalise(st, job_state::cancelled, "cancelled before it ran to the end", -1);
        }
    }

    void poll_running() {
        for (auto it = m_active.begin(); it != m_active.end();) {
            std::optional<job_exit> ex;
            try {
                ex = m_executor->poll(it->second.handle);
            } catch (const std::exception& e) {
                std::cerr << "serve: " << it->first << ": " << e.what() << "\n";
            }
            if (!ex) {
                ++it;
                continue;
            }
            const std::string id = it->first;
            const active_job a = it->second;
            it = m_active.erase(it);
            ended(id, a, *ex);
        }
    }

    std::vector<int> free_devices() const {
        std::vector<int> free = m_settings.devices;
        for (const auto& [id, a] : m_active)
            free.erase(std::remove(free.begin(), free.end(), a.device), free.end());
        return free;
    }

    // Jobs that were running first (each on its own GPU: a run resumes where it began), then the
    // queue by priority, FIFO within a priority.
    void start_what_fits() {
        if (clock_type::now() < m_retry_after) return;
        const bool slurm = m_executor->name() == "slurm";
        for (auto it = m_to_resume.begin(); it != m_to_resume.end();) {
            if (m_active.size() >= m_executor->slots()) return;
            job_status st = m_spool.read_status(*it);
            const std::vector<int> free = free_devices();
            int device = slurm ? 0 : st.device;
            if (!slurm && std::find(free.begin(), free.end(), device) == free.end()) {
                if (std::find(m_settings.devices.begin(), m_settings.devices.end(), device) !=
                    m_settings.devices.end()) {
                    ++it;  // its GPU is busy: it waits for it
                    continue;
                }
                device = free.empty() ? -1 : free.front();  // its GPU is not served any more
                if (device < 0) return;
            }
            const std::string id = *it;
            it = m_to_resume.erase(it);
            start(id, st, device);
        }
        std::vector<std::pair<int, std::string>> queued;
        for (const auto& [id, known] : m_jobs)
            if (known.state == job_state::queued) queued.emplace_back(-known.priority, id);
        std::sort(queued.begin(), queued.end());
        for (const auto& [p, id] : queued) {
            if (m_active.size() >= m_executor->slots()) return;
            const std::vector<int> free = free_devices();
            if (!slurm && free.empty()) return;
            job_status st = m_spool.read_status(id);
            start(id, st, slurm ? 0 : free.front());
        }
    }

    std::vector<std::string> command_of(const std::string& id, const job_status& st,
                                        bool& resumed) {
        const job_spec spec = m_spool.read_spec(id);
        const fs::path job = m_spool.job_dir(id);
        const std::string device = std::to_string(m_executor->name() == "slurm" ? 0 : st.device);
        std::vector<std::string> argv = {m_settings.optimizer.string()};
        resumed = false;
        if (spec.kind == "gate") {
            std::error_code ec;
            fs::remove_all(job / "results" / "gate", ec);  // a gate measures afresh
            fs::create_directories(job / "results", ec);
            argv.insert(argv.end(),
                        {"gate", "--accepted", "files/" + spec.accepted, "--out", "results/gate",
                         "--harness", m_settings.harness.string(), "--device", device});
        } else if (const fs::path run = run_folder_of(job); !run.empty()) {
            resumed = true;
            argv.insert(argv.end(), {"optimize", "--resume", fs::relative(run, job).string(),
                                     "--devices", device});
            return argv;
        } else {
            // --daemon-job: every kernel of the job is untrusted (recorded in run.json's command
            // line, so a resume keeps it; a job cannot give it or take it away).
            argv.insert(
                argv.end(),
                {"optimize", "--config", "files/" + spec.config, "--results-dir", "results",
                 "--harness", m_settings.harness.string(), "--devices", device, "--daemon-job"});
            if (m_settings.allow_unconfined) argv.push_back("--allow-unconfined");
            if (!m_settings.sanitizer.empty())
                argv.insert(argv.end(), {"--sanitizer", m_settings.sanitizer.string()});
        }
        argv.insert(argv.end(), spec.args.begin(), spec.args.end());
        return argv;
    }

    job_launch launch_of(const std::string& id, const job_status& st, bool fill_argv) {
        job_launch l;
        l.job_id = id;
        l.job_dir = m_spool.job_dir(id);
        l.log = l.job_dir / "job.log";
        l.device = st.device;
        if (fill_argv) {
            bool resumed = false;
            l.argv = command_of(id, st, resumed);
        }
        return l;
    }

    // start(), where anything it throws (a job folder damaged, unreadable files) fails that job
    // alone, never the queue behind it.
    void start(const std::string& id, job_status st, int device) {
        try {
            start_job(id, st, device);
        } catch (const std::exception& e) {
            m_active.erase(id);
            finalise(st, job_state::failed, std::string("cannot start: ") + e.what(), -1);
        }
    }

    void start_job(const std::string& id, job_status st, int device) {
        const fs::path job = m_spool.job_dir(id);
        if (m_spool.cancel_requested(id))
            return finalise(st, job_state::cancelled, "cancelled before it ran to the end", -1);
        if (fs::is_regular_file(job / "results" / "gate" / "gate.json"))
            return finalise_gate(st, job / "results" / "gate" / "gate.json");
        // A job whose run ended while no daemon was watching is finalised, never run again.
        if (const fs::path run = run_folder_of(job); !run.empty())
            if (const auto end = finished_run(run)) return finalise_from_run(st, run, *end);
        if (const std::string changed = m_spool.verify_locked(id); !changed.empty())
            return finalise(st, job_state::failed, "locked manifest: " + changed, -1);
        if (st.starts >= k_max_starts)
            return finalise(st, job_state::failed,
                            "started " + std::to_string(st.starts) + " times without ending", -1);
        st.device = device;
        st.state = job_state::running;
        st.executor = m_executor->name();
        st.handle.clear();
        st.reason.clear();
        ++st.starts;
        if (st.started.empty()) st.started = utc_now();
        const job_launch launch = launch_of(id, st, true);
        const bool resumed = launch.argv.size() > 2 && launch.argv[2] == "--resume";
        const job_state before = m_jobs[id].state;
        save(st);  // running before it starts: a restart finds it either way
        try {
            // An sbatch that timed out may still have queued the job: never a second one.
            st.handle = m_executor->find_by_name(launch);
            if (st.handle.empty()) st.handle = m_executor->start(launch);
        } catch (const std::exception& e) {
            return start_failed(st, before, e.what());
        }
        save(st);
        m_active[id] = active_job{st.handle, device, false, resumed};
        log(id, std::string(resumed ? "resumed" : "started") + " (" + m_executor->name() + " " +
                    st.handle +
                    (m_executor->name() == "local" ? ", GPU " + std::to_string(device) : "") + ")");
    }

    // The machine's problem, not the job's (the optimizer cannot be started, sbatch refused):
    // the job keeps its place and nothing starts for a while.
    void start_failed(job_status st, job_state before, const std::string& why) {
        if (++m_start_failures[st.id] >= 5)
            return finalise(st, job_state::failed, "could not start, 5 times: " + why, -1);
        --st.starts;
        st.state = before;
        st.reason = "could not start: " + why + " (tried again in 30 s)";
        save(st);
        if (before == job_state::running) m_to_resume.push_back(st.id);
        m_retry_after = clock_type::now() + std::chrono::seconds(30);
        log(st.id, st.reason);
    }

    void ended(const std::string& id, const active_job& a, const job_exit& ex) {
        job_status st = m_spool.read_status(id);
        st.slurm_state = ex.slurm_state;
        st.handle.clear();
        const fs::path job = m_spool.job_dir(id);
        const fs::path run = run_folder_of(job);
        if (!run.empty()) {
            st.run_dir = fs::relative(run, job).string();
            read_progress(run, st);
        } else if (fs::is_directory(job / "results" / "gate")) {
            st.run_dir = "results/gate";  // gate.json and gate.html
        }
        if (m_spool.cancel_requested(id))
            return finalise(st, job_state::cancelled, "cancelled while running", ex.exit_code);
        if (m_stopping && (ex.exit_code == to_int(exit_code::interrupted) || ex.signal != 0)) {
            save(st);  // still running: the next daemon resumes it
            return;
        }
        if (ex.slurm_state == "CANCELLED")  // scancel from outside the daemon
            return finalise(st, job_state::cancelled, why(ex.exit_code, ex, job), ex.exit_code);
        if (!ex.slurm_state.empty() && ex.slurm_state != "COMPLETED" && ex.slurm_state != "FAILED")
            return finalise(st, job_state::failed, why(ex.exit_code, ex, job), ex.exit_code);
        classify(st, ex, a.resumed);
    }

    void classify(job_status& st, const job_exit& ex, bool resumed) {
        const job_spec spec = m_spool.read_spec(st.id);
        const int code = ex.exit_code;
        const fs::path job = m_spool.job_dir(st.id);
        if (spec.kind == "gate") {
            if (code == 0) return finalise(st, job_state::done, "the gate passed", code);
            if (code == 1)
                return finalise(st, job_state::done, "the gate failed: a regression", code);
            return finalise(st, job_state::failed, why(code, ex, job), code);
        }
        if (code == 0) return finalise(st, job_state::done, winner_line(job / st.run_dir), code);
        if (code == to_int(exit_code::no_winner))
            return finalise(st, job_state::done, "no candidate passed the evidence gates", code);
        if (code == to_int(exit_code::resume_refused) && resumed &&
            !fs::exists(job / st.run_dir / "history.json")) {
            // Killed before its first attempt was recorded: nothing to keep, so it starts over.
            std::error_code ec;
            fs::remove_all(job / "results", ec);
            st.run_dir.clear();
            save(st);
            m_to_resume.push_back(st.id);
            log(st.id, "starts over (stopped before its first attempt was recorded)");
            return;
        }
        finalise(st, job_state::failed, why(code, ex, job), code);
    }

    static std::string why(int code, const job_exit& ex, const fs::path& job) {
        std::string w = ex.reason.empty() ? "exit " + std::to_string(code) : ex.reason;
        const std::string line = last_log_line(job / "job.log");
        return line.empty() ? w : w + ": " + line;
    }

    void finalise_from_run(job_status st, const fs::path& run, const run_end& end) {
        std::error_code ec;
        if (!fs::is_regular_file(run / "report.html", ec)) {  // killed between run.json and it
            namespace bp = boost::process;
            bp::system(m_settings.optimizer.string(), "report", run.string(),
                       bp::std_out > bp::null, bp::std_err > bp::null, bp::std_in < bp::null, ec);
        }
        st.run_dir = fs::relative(run, m_spool.job_dir(st.id)).string();
        read_progress(run, st);
        if (end.stop_reason == "error") return finalise(st, job_state::failed, end.error, -1);
        finalise(st, job_state::done, "the run had finished (" + end.stop_reason + ")", -1);
    }

    // A gate that ended while no daemon watched: its verdict, never a second gate.
    void finalise_gate(job_status st, const fs::path& gate_json) {
        st.run_dir = "results/gate";
        rapidjson::Document d;
        std::string verdict;
        if (try_parse_json(d, read_text_file(gate_json)).empty() && d.IsObject() &&
            d.HasMember("verdict") && d["verdict"].IsString())
            verdict = d["verdict"].GetString();
        if (verdict == "pass") return finalise(st, job_state::done, "the gate passed", 0);
        if (verdict == "fail")
            return finalise(st, job_state::done, "the gate failed: a regression", 1);
        finalise(st, job_state::failed, "the gate could not judge (" + verdict + ")", 2);
    }

    void finalise(job_status st, job_state state, const std::string& reason, int code) {
        st.state = state;
        st.reason = reason;
        st.exit_code = code;
        st.finished = utc_now();
        st.handle.clear();
        save(st);
        log(st.id, to_string(state) + ": " + reason);
    }

    void refresh_progress() {
        if (clock_type::now() - m_last_progress < std::chrono::seconds(1)) return;
        m_last_progress = clock_type::now();
        for (const auto& [id, a] : m_active) {
            job_status st = m_spool.read_status(id);
            const fs::path run = run_folder_of(m_spool.job_dir(id));
            if (run.empty()) continue;
            const job_status before = st;
            st.run_dir = fs::relative(run, m_spool.job_dir(id)).string();
            read_progress(run, st);
            if (st.attempts != before.attempts || st.run_dir != before.run_dir) save(st);
        }
    }

    daemon_settings m_settings;
    spool m_spool;
    spool_lock m_lock;
    asio::io_context m_io;
    asio::signal_set m_signals;
    asio::steady_timer m_tick;
    std::unique_ptr<job_executor> m_executor;
    std::unique_ptr<http_dashboard> m_dashboard;
    struct known_job {
        job_state state = job_state::queued;
        int priority = 0;
    };
    std::map<std::string, known_job> m_jobs;  // every job of the spool, as this daemon knows it
    clock_type::time_point m_last_scan{};
    clock_type::time_point m_retry_after{};  // after a start failed
    std::map<std::string, active_job> m_active;
    std::vector<std::string> m_to_resume;
    std::vector<std::string> m_reattach;  // Slurm jobs to find again (Slurm did not answer)
    std::set<std::string> m_unreadable;   // jobs whose files could not be read (said once)
    std::map<std::string, int> m_start_failures;
    bool m_stopping = false;
    double m_idle_stop_s = 0;
    std::optional<clock_type::time_point> m_idle_since;
    clock_type::time_point m_last_progress{};
};

}  // namespace

int run_daemon(const daemon_settings& settings, double stop_after_idle_s) {
    try {
        job_daemon d(settings, stop_after_idle_s);
        return d.run();
    } catch (const std::exception& e) {
        std::cerr << "serve: " << e.what() << "\n";
        return std::string(e.what()).rfind("another daemon", 0) == 0 ? 64 : 26;
    }
}

}  // namespace cuopt
