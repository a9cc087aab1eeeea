#include "orchestrator/evaluation/harness_workers.hpp"

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "common/file_io.hpp"
#include "orchestrator/evaluation/worker_process.hpp"

namespace cuopt {

namespace {

// nullopt: not a plain run of this harness (compile-only, device info, a wrapper): one-shot.
std::optional<harness_run> parse_run(const std::vector<std::string>& argv,
                                     const std::string& harness) {
    if (argv.size() < 2 || argv[0] != harness || argv[1].rfind("--", 0) == 0) return std::nullopt;
    harness_run run;
    run.request = argv[1];
    for (std::size_t i = 2; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const bool has_value = i + 1 < argv.size();
        if (a == "--response" && has_value)
            run.response = argv[++i];
        else if (a == "--root" && has_value)
            run.root = argv[++i];
        else if (a == "--cache-dir" && has_value)
            run.flags.insert(run.flags.end(), {a, argv[++i]});
        else if (a == "--quiet" || a == "--no-cache" || a == "--no-stream-hold")
            run.flags.push_back(a);
        else
            return std::nullopt;
    }
    return run;
}

/// Starts workers from one thread that lives as long as the runner. A child's
/// PR_SET_PDEATHSIG fires when the *thread* that forked it ends, so a worker started from a
/// short-lived thread (one device's batch) would be killed under the next request.
class spawner {
  public:
    spawner() : m_thread([this] { loop(); }) {}
    ~spawner() {
        {
            std::lock_guard<std::mutex> hold(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
    }
    std::unique_ptr<worker_process> spawn(const std::vector<std::string>& argv) {
        std::packaged_task<std::unique_ptr<worker_process>()> task(
            [&argv] { return std::make_unique<worker_process>(argv); });
        std::future<std::unique_ptr<worker_process>> made = task.get_future();
        {
            std::lock_guard<std::mutex> hold(m_mutex);
            m_tasks.push_back(std::move(task));
        }
        m_wake.notify_all();
        return made.get();  // rethrows a failure to start
    }

  private:
    void loop() {
        std::unique_lock<std::mutex> hold(m_mutex);
        for (;;) {
            m_wake.wait(hold, [this] { return m_stop || !m_tasks.empty(); });
            if (m_tasks.empty()) return;
            auto task = std::move(m_tasks.front());
            m_tasks.pop_front();
            hold.unlock();
            task();
            hold.lock();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::packaged_task<std::unique_ptr<worker_process>()>> m_tasks;
    bool m_stop = false;
    std::thread m_thread;
};

class workers_runner final : public harness_workers {
  public:
    workers_runner(std::string harness, std::unique_ptr<process_runner> fallback)
        : m_harness(std::move(harness)), m_fallback(std::move(fallback)) {}

    process_result run(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout) override {
        return run(argv, timeout, run_purpose{});
    }

    process_result run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       const run_purpose& purpose) override {
        const std::optional<harness_run> parsed =
            purpose.own_process ? std::nullopt : parse_run(argv, m_harness);
        if (!parsed || !inside_root(*parsed)) {
            count(&worker_stats::one_shot);
            return m_fallback->run(argv, timeout, purpose);
        }
        slot& s = slot_for(purpose, parsed->flags);
        std::lock_guard<std::mutex> hold(s.busy);  // one request per worker at a time
        for (int tries = 0;; ++tries) {
            if (!s.worker || s.worker->gone()) {
                if (std::optional<process_result> failed = start_worker(s, parsed->flags))
                    return *failed;
            }
            std::optional<process_result> r = s.worker->serve(*parsed, timeout);
            if (s.worker->gone()) {
                count(s.worker->retired() ? &worker_stats::retired : &worker_stats::replaced);
                s.worker.reset();
            }
            if (r || tries == 1) {
                count(&worker_stats::requests);
                if (r) return *r;
                process_result lost;
                lost.failed_to_start = true;
                lost.stderr_text = "cuda-harness --worker ended before it read the request, twice";
                return lost;
            }
        }
    }

    worker_stats stats() const override {
        std::lock_guard<std::mutex> hold(m_mutex);
        return m_stats;
    }

    void serve_under(const std::filesystem::path& root) override {
        std::lock_guard<std::mutex> hold(m_mutex);
        m_root = resolved_path(root);
    }

  private:
    struct slot {
        std::mutex busy;
        std::unique_ptr<worker_process> worker;
    };

    // A worker may serve the run: its request and response lie inside the workers' root (a
    // worker refuses any other).
    bool inside_root(const harness_run& run) const {
        const std::filesystem::path root = this->root();
        if (root.empty() || !lies_within(run.request, root)) return false;
        if (!run.root.empty() && resolved_path(run.root) != root) return false;
        return run.response.empty() || lies_within(run.response, root);
    }
    std::filesystem::path root() const {
        std::lock_guard<std::mutex> hold(m_mutex);
        return m_root;
    }

    // A fresh worker in the slot; nullopt, or the run's result when it cannot start.
    std::optional<process_result> start_worker(slot& s, const std::vector<std::string>& flags) {
        std::vector<std::string> cmd = {m_harness, "--worker", "--root", root().string()};
        cmd.insert(cmd.end(), flags.begin(), flags.end());
        try {
            s.worker = m_spawner.spawn(cmd);
        } catch (const std::exception& e) {
            process_result r;
            r.failed_to_start = true;
            r.stderr_text = "cannot start " + m_harness + " --worker: " + e.what();
            return r;
        }
        count(&worker_stats::started);
        return std::nullopt;
    }
    using key = std::tuple<int, bool, std::vector<std::string>>;

    slot& slot_for(const run_purpose& c, const std::vector<std::string>& flags) {
        std::lock_guard<std::mutex> hold(m_mutex);
        std::unique_ptr<slot>& s = m_slots[key{c.device, c.trusted, flags}];
        if (!s) s = std::make_unique<slot>();
        return *s;
    }
    void count(int worker_stats::*field) {
        std::lock_guard<std::mutex> hold(m_mutex);
        ++(m_stats.*field);
    }

    std::string m_harness;
    std::unique_ptr<process_runner> m_fallback;
    mutable std::mutex m_mutex;  // the slot map, the stats and the root
    spawner m_spawner;           // outlives the workers it started: they are ended (EOF) first
    std::map<key, std::unique_ptr<slot>> m_slots;
    worker_stats m_stats;
    std::filesystem::path m_root;  // resolved; empty: every run one-shot
};

}  // namespace

std::unique_ptr<harness_workers> harness_workers::make(std::string harness,
                                                       std::unique_ptr<process_runner> fallback) {
    std::signal(SIGPIPE, SIG_IGN);  // a worker that died while being written to is data
    ::setenv("CUOPT_DIE_WITH_PARENT", "1", 1);
    return std::make_unique<workers_runner>(std::move(harness), std::move(fallback));
}

}  // namespace cuopt
