#include "orchestrator/service/daemon.hpp"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <iostream>

#include "common/exit_codes.hpp"
#include "common/pid_lock.hpp"
#include "common/runner_process.hpp"
#include "common/utc_time.hpp"
#include "orchestrator/service/http_dashboard.hpp"
#include "orchestrator/service/job_finaliser.hpp"
#include "orchestrator/service/job_limits.hpp"
#include "orchestrator/service/job_queue.hpp"
#include "orchestrator/service/job_recovery.hpp"
#include "orchestrator/service/job_starter.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;

// Another daemon holds the spool: a usage error (64), not a failure to run (26).
struct spool_taken_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Holds SPOOL/.daemon.lock for the daemon's life: one daemon per spool.
pid_lock spool_lock(const fs::path& root) {
    const fs::path file = root / ".daemon.lock";
    std::string holder;
    std::optional<pid_lock> lock = pid_lock::try_take(file, 0600, holder);
    if (!lock)
        throw spool_taken_error("another daemon serves " + root.string() + " (pid " +
                                holder_text(holder) + ")");
    if (!lock->pid_written()) std::cerr << "serve: " << file.string() << ": cannot write the pid\n";
    return std::move(*lock);
}

std::unique_ptr<job_executor> make_executor(const daemon_settings& s) {
    if (s.executor != "slurm") return make_local_executor(s.devices);
    slurm_settings slurm = s.slurm;
    // Slurm enforces serve's limit itself unless the operator gave one of its own.
    if (slurm.time_limit.empty()) slurm.time_limit = slurm_time_of(s.job_time_limit_s);
    return make_slurm_executor(slurm);
}

// The event loop: ticks, signals and cancellations; the queue, the starter, the finaliser and
// recovery do the jobs' work.
class job_daemon {
  public:
    job_daemon(const daemon_settings& s, double stop_after_idle_s)
        : m_settings(s),
          m_spool(s.spool),
          m_lock(spool_lock(m_spool.root())),
          m_signals(m_io, SIGINT, SIGTERM),
          m_tick(m_io),
          m_idle_stop_s(stop_after_idle_s),
          m_executor(make_executor(s)),
          m_queue(m_spool, s.devices, s.quiet),
          m_finaliser(
              m_queue, s.job_time_limit_s, [this](const fs::path& run) { write_report(run); },
              m_executor->runs_jobs_here()),
          m_starter(m_settings, m_queue, *m_executor, m_finaliser),
          m_recovery(m_queue, *m_executor) {
        if (s.http)
            m_dashboard =
                std::make_unique<http_dashboard>(m_io, m_spool, *s.http, s.optimizer, s.harness);
        m_submit = std::make_unique<submit_server>(m_io, m_spool, s.submit);
    }

    int run() {
        announce();
        m_recovery.recover();
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
        // The address only: the token stays in its file (serve printed where), out of journals,
        // scrollback and browser history.
        if (m_dashboard)
            std::cout << "\ndashboard: http://" << m_settings.http->address << ":"
                      << m_dashboard->port() << "/";
        std::cout << std::endl;
    }

    void schedule_tick() {
        m_tick.expires_after(std::chrono::milliseconds(
            static_cast<int>(1000 * std::max(m_settings.poll_s, m_executor->min_poll_s()))));
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
        if (m_queue.scan(false)) {
            take_cancellations();
            if (!m_queue.to_reattach().empty()) m_recovery.reattach();
        }
        poll_running();
        if (m_stopping) {
            if (m_queue.active().empty() || !m_executor->runs_jobs_here()) m_io.stop();
            return;
        }
        enforce_time_limit();
        if (m_starter.may_start())
            m_queue.start_what_fits(
                m_executor->slots(), !m_executor->runs_jobs_here(),
                [this](const std::string& id, int device) { return m_starter.start(id, device); });
        refresh_progress();
        remove_old_jobs();
        if (m_idle_stop_s > 0) stop_when_idle();
    }

    // serve --keep-jobs: ended jobs past it removed, once a minute.
    void remove_old_jobs() {
        if (m_settings.keep_jobs_s <= 0) return;
        const auto now = daemon_clock::now();
        if (m_last_cleanup && now - *m_last_cleanup < std::chrono::seconds(60)) return;
        m_last_cleanup = now;
        const auto keep = std::chrono::seconds(static_cast<long long>(m_settings.keep_jobs_s));
        for (const std::string& id : remove_ended_jobs(m_spool, keep)) {
            m_queue.forget(id);
            m_queue.log(id, "removed: ended more than --keep-jobs ago");
        }
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
        if (m_executor->runs_jobs_here())  // they would die with the daemon: stopped cleanly
            for (auto& [id, a] : m_queue.active()) m_executor->cancel(a.handle);
        m_signals.async_wait([this](const boost::system::error_code& ec, int s) {
            if (!ec) on_signal(s);
        });
    }

    void stop_when_idle() {
        if (m_queue.busy()) {
            m_idle_since.reset();
            return;
        }
        if (!m_idle_since) m_idle_since = daemon_clock::now();
        if (std::chrono::duration<double>(daemon_clock::now() - *m_idle_since).count() >
            m_idle_stop_s)
            m_io.stop();
    }

    void take_cancellations() {
        for (const auto& [id, state] : m_queue.known()) {
            if (is_final(state) || !m_spool.cancel_requested(id)) continue;
            const auto it = m_queue.active().find(id);
            if (it != m_queue.active().end()) {
                if (!it->second.cancel_sent) {
                    m_executor->cancel(it->second.handle);
                    it->second.cancel_sent = true;
                    m_queue.log(id, "cancelling");
                }
                continue;
            }
            m_queue.for_job(id, [&, id = id] {
                const job_status st = m_spool.read_status(id);
                if (is_final(st.state)) return;
                auto& waiting = m_queue.to_resume();
                waiting.erase(std::remove(waiting.begin(), waiting.end(), id), waiting.end());
                m_queue.finalise(st, job_state::cancelled, cancelled_unstarted_reason(st), -1);
            });
        }
    }

    void poll_running() {
        auto& active = m_queue.active();
        for (auto it = active.begin(); it != active.end();) {
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
            it = active.erase(it);
            m_queue.for_job(id, [&] { m_finaliser.ended(id, a, *ex, m_stopping); });
        }
    }

    // A local job running past serve's --job-time-limit is cancelled as `cancel` would, and
    // failed with that reason once it ended (Slurm enforces the limit itself, as --time).
    void enforce_time_limit() {
        if (!m_executor->runs_jobs_here()) return;
        const auto limit = std::chrono::duration<double>(m_settings.job_time_limit_s);
        for (auto& [id, a] : m_queue.active()) {
            if (a.cancel_sent || daemon_clock::now() - a.since < limit) continue;
            m_executor->cancel(a.handle);
            a.cancel_sent = a.timed_out = true;
            m_queue.log(id, "past serve's --job-time-limit: cancelling");
        }
    }

    // Progress only: a job whose files cannot be read now is judged when it ends.
    void refresh_progress() {
        if (daemon_clock::now() - m_last_progress < std::chrono::seconds(1)) return;
        m_last_progress = daemon_clock::now();
        for (const auto& [id, a] : m_queue.active()) {
            try {
                job_status st = m_spool.read_status(id);
                const fs::path run = run_folder_of(m_spool.job_dir(id));
                if (run.empty()) continue;
                const job_status before = st;
                st.run_dir = fs::relative(run, m_spool.job_dir(id)).string();
                read_progress(m_spool.job_dir(id), st);
                if (st.attempts != before.attempts || st.run_dir != before.run_dir ||
                    st.max_iterations != before.max_iterations)
                    m_queue.save(st);
            } catch (const std::exception&) {
                // Progress is a display only: the next poll reads it again.
            }
        }
    }

    // RUN/report.html for a run that ended before writing it (the daemon was killed between
    // run.json and the report).
    void write_report(const fs::path& run) {
        make_child_process_runner(child_environment_kind::inherited)
            ->run({m_settings.optimizer.string(), "report", run.string()}, std::chrono::minutes(5));
    }

    daemon_settings m_settings;
    spool m_spool;
    pid_lock m_lock;
    asio::io_context m_io;
    asio::signal_set m_signals;
    asio::steady_timer m_tick;
    double m_idle_stop_s = 0;
    std::unique_ptr<job_executor> m_executor;
    std::unique_ptr<http_dashboard> m_dashboard;
    std::unique_ptr<submit_server> m_submit;  // SPOOL/submit.sock
    job_queue m_queue;
    job_finaliser m_finaliser;
    job_starter m_starter;
    job_recovery m_recovery;
    bool m_stopping = false;
    std::optional<daemon_clock::time_point> m_idle_since;
    std::optional<daemon_clock::time_point> m_last_cleanup;  // remove_old_jobs's last pass
    daemon_clock::time_point m_last_progress{};
};

}  // namespace

int run_daemon(const daemon_settings& settings, double stop_after_idle_s) {
    try {
        job_daemon d(settings, stop_after_idle_s);
        return d.run();
    } catch (const spool_taken_error& e) {
        std::cerr << "serve: " << e.what() << "\n";
        return to_int(exit_code::usage);
    } catch (const std::exception& e) {
        std::cerr << "serve: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
}

}  // namespace cuopt
