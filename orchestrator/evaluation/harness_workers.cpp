#include "orchestrator/evaluation/harness_workers.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "common/child_environment.hpp"
#include "common/child_process.hpp"
#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace {

using clock_type = std::chrono::steady_clock;

/// A harness run as the evaluator writes it: the request, where its response goes, and the
/// flags that shape the worker (--quiet, --cache-dir DIR, ...).
struct harness_run {
    std::string request;
    std::string response;
    std::string root;  // the run's --root, where it names one (a worker's must be the same)
    std::vector<std::string> flags;
};

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

std::string request_line(const harness_run& run) {
    rapidjson::Document doc(rapidjson::kObjectType);
    json_object(doc)
        .add("request", run.request)
        .add_if(!run.response.empty(), "response", run.response);
    return to_compact_json(doc) + "\n";
}

/// One `cuda-harness --worker` child: its pipes read asynchronously, one request at a time.
class worker_process {
  public:
    explicit worker_process(const std::vector<std::string>& argv)
        : m_in(m_io), m_out(m_io), m_err(m_io) {
        const std::array<int, 2> in = make_pipe(), out = make_pipe(), err = make_pipe();
        try {
            scrubbed_environment env;
            m_child = std::make_unique<child_process>(argv, child_streams{in[0], out[1], err[1]},
                                                      std::filesystem::path(), env.envp());
        } catch (...) {
            for (const int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
            throw;
        }
        for (const int fd : {in[0], out[1], err[1]}) ::close(fd);
        m_in.assign(in[1]);
        m_out.assign(out[0]);
        m_err.assign(err[0]);
        read_stderr();
    }
    worker_process(const worker_process&) = delete;
    worker_process& operator=(const worker_process&) = delete;
    ~worker_process() {
        if (!m_gone) end(std::chrono::milliseconds(500));
    }

    /// Whether it ended by retiring after its last reply (not a crash, a timeout or an error).
    bool retired() const { return m_retired; }

    /// Whether it has ended (or must be replaced): checked before each request.
    bool gone() {
        if (!m_gone && m_child->poll()) end(std::chrono::milliseconds(0));
        return m_gone;
    }

    /// Sends one request and waits for its reply line, the worker's end or the deadline;
    /// nullopt when the request could not even be written (the worker had already gone, so
    /// its end is not this request's doing).
    std::optional<process_result> serve(const harness_run& run, std::chrono::milliseconds timeout) {
        const auto start = clock_type::now();
        process_result r;
        boost::system::error_code ec;
        boost::asio::write(m_in, boost::asio::buffer(request_line(run)), ec);
        if (ec) {
            end(std::chrono::milliseconds(0));
            return std::nullopt;
        }
        if (const std::optional<std::string> reply = read_reply(start + timeout)) {
            fill_from_reply(*reply, run.request, r);
        } else {
            r.timed_out = !m_out_eof;
            end(std::chrono::milliseconds(0));  // killed on timeout; reaped after its crash
            fill_from_status(r);
        }
        m_io.poll();
        r.stderr_text += std::exchange(m_err_text, "");
        r.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
        return r;
    }

  private:
    void read_stderr() {
        m_err.async_read_some(boost::asio::buffer(m_err_chunk),
                              [this](const boost::system::error_code& e, std::size_t n) {
                                  m_err_text.append(m_err_chunk, n);
                                  if (!e) read_stderr();
                              });
    }

    // The first stdout line that is a reply; nullopt at the worker's end or the deadline. The
    // read's state lives in members: a read still pending at the deadline completes later.
    std::optional<std::string> read_reply(clock_type::time_point deadline) {
        for (;;) {
            if (m_line_ready) {
                m_line_ready = false;
                std::istream in(&m_out_buf);
                std::string line;
                if (!m_out_eof && std::getline(in, line) && line.rfind("{\"request\"", 0) == 0)
                    return line;
            }
            if (m_out_eof) return std::nullopt;
            if (!m_reading) {
                m_reading = true;
                boost::asio::async_read_until(
                    m_out, m_out_buf, '\n',
                    [this](const boost::system::error_code& e, std::size_t) {
                        m_reading = false;
                        m_line_ready = true;
                        m_out_eof = static_cast<bool>(e);
                    });
            }
            while (!m_line_ready && clock_type::now() < deadline)
                m_io.run_one_for(deadline - clock_type::now());
            if (!m_line_ready) return std::nullopt;
        }
    }

    // A reply must be readable and answer the request just sent; anything else ends the
    // worker (its replies can no longer be matched to requests) and fails this run.
    void fill_from_reply(const std::string& line, const std::string& request, process_result& r) {
        r.stdout_text = line;
        rapidjson::Document doc;
        try_parse_json(doc, line);  // an unreadable line leaves it null: no members at all
        const long long code = integer_of(doc, "exit_code").value_or(LLONG_MIN);
        const std::string answered = string_of(doc, "request").value_or("");
        const bool readable = code >= INT_MIN && code <= INT_MAX && !answered.empty();
        if (!readable || answered != request) {
            r.exit_code = 70;
            r.stderr_text =
                "cuda-harness --worker answered " +
                std::string(readable ? "for another request" : "with an unreadable line") +
                " (expected " + request + "): " + line + "\n";
            end(std::chrono::milliseconds(0));
            return;
        }
        r.exit_code = static_cast<int>(code);
        r.stderr_text = text_of(doc, "messages");
        // A worker that must exit after this reply (harness/worker_loop: a failed case, a sticky
        // error, no driver, an internal error) does so now; it is replaced next time. One that
        // retires (its kernel could leave device-heap blocks or globals behind) exits with 0:
        // the run is what the reply says, and only the process is new next time.
        const bool must_exit =
            r.exit_code == 12 || r.exit_code == 13 || r.exit_code == 14 || r.exit_code == 70;
        m_retired = !must_exit && member(doc, "retired");
        if (must_exit || m_retired) end(std::chrono::milliseconds(2000));
    }

    void fill_from_status(process_result& r) {
        const int status = m_child->poll().value_or(0);
        if (WIFSIGNALED(status) && !r.timed_out)
            r.signal = WTERMSIG(status);
        else if (r.timed_out)
            r.signal = SIGKILL;
        else if (WIFEXITED(status))
            r.exit_code = WEXITSTATUS(status);
    }

    // Lets the worker leave (stdin closed) for up to `grace`, then kills it; reaps it, and
    // kills what is left of its process group.
    void end(std::chrono::milliseconds grace) {
        boost::system::error_code ec;
        m_in.close(ec);
        const auto until = clock_type::now() + grace;
        while (!m_child->poll() && clock_type::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const pid_t group = m_child->pid();
        if (!m_child->poll()) kill_group(group);
        m_child->wait();
        kill_group(group);  // whatever the worker started and left behind in its group
        m_gone = true;
    }

    boost::asio::io_context m_io;
    boost::asio::posix::stream_descriptor m_in, m_out, m_err;
    std::unique_ptr<child_process> m_child;
    boost::asio::streambuf m_out_buf;
    char m_err_chunk[4096];
    std::string m_err_text;
    bool m_reading = false;     // a stdout read is pending
    bool m_line_ready = false;  // it completed (a line is in m_out_buf, or m_out_eof)
    bool m_out_eof = false;
    bool m_gone = false;
    bool m_retired = false;  // its last reply said it retires
};

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
