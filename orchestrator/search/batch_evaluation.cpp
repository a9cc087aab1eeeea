#include "orchestrator/search/batch_evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace cuopt {

namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// Where a job stands with compile-ahead.
enum class ahead_state {
    pending,    // nobody has taken it
    compiling,  // a compile thread runs NVRTC on it
    done,       // compiled ahead (m_ahead holds the record)
    skipped     // a GPU took it first: its run compiles it
};

class batch_run {
  public:
    batch_run(const std::vector<batch_job>& jobs, const std::vector<measuring_device>& devices,
              const compile_ahead_settings& ahead, const measure_function& measure,
              const record_function& record, const std::atomic<bool>* stop);
    void run();

  private:
    void device_loop(const measuring_device& device);
    void compile_loop();
    /// The next job for a GPU (after its compile ahead, if one is running); nullopt when none.
    std::optional<std::size_t> take_job(std::optional<compile_ahead_record>& ahead);
    std::optional<std::size_t> take_compile();
    compile_ahead_record compile(const batch_job& job) const;
    /// Stores a result for the recorder; the device goes on to its next job at once.
    void finish_job(std::size_t index, attempt_result r);
    /// The recorder thread: every result in job order, as soon as its turn has come, off the
    /// GPUs' critical path (history and artifacts are written durably, just not in the way of
    /// the next measurement); until the device threads have ended and nothing is left.
    void record_loop();
    bool stopping() const { return (m_stop && *m_stop) || m_error; }  // under m_mutex
    void fail(std::exception_ptr e);

    const std::vector<batch_job>& m_jobs;
    const std::vector<measuring_device>& m_devices;
    const compile_ahead_settings& m_settings;
    const measure_function& m_measure;
    const record_function& m_record;
    const std::atomic<bool>* m_stop;
    std::vector<const measuring_device*> m_arch_devices;  // one device per distinct arch

    std::mutex m_mutex;  // everything below
    std::condition_variable m_compiled;
    std::vector<ahead_state> m_state;
    std::vector<std::optional<compile_ahead_record>> m_ahead;
    std::vector<std::optional<attempt_result>> m_done;
    std::size_t m_next_job = 0, m_next_compile = 0, m_next_record = 0;
    std::exception_ptr m_error;
    std::condition_variable m_recordable;  // a result arrived, or the devices are done
    bool m_devices_done = false;
};

batch_run::batch_run(const std::vector<batch_job>& jobs,
                     const std::vector<measuring_device>& devices,
                     const compile_ahead_settings& ahead, const measure_function& measure,
                     const record_function& record, const std::atomic<bool>* stop)
    : m_jobs(jobs),
      m_devices(devices),
      m_settings(ahead),
      m_measure(measure),
      m_record(record),
      m_stop(stop),
      m_state(jobs.size(), ahead_state::pending),
      m_ahead(jobs.size()),
      m_done(jobs.size()) {
    // The first job of each device starts at once: no compile ahead can beat it there.
    for (std::size_t i = 0; i < std::min(jobs.size(), devices.size()); ++i)
        m_state[i] = ahead_state::skipped;
    for (const measuring_device& d : devices)
        if (std::none_of(m_arch_devices.begin(), m_arch_devices.end(), [&](const auto* seen) {
                return seen->evaluator.settings().arch == d.evaluator.settings().arch;
            }))
            m_arch_devices.push_back(&d);
}

void batch_run::run() {
    const std::size_t first = std::min(m_jobs.size(), m_devices.size());
    const auto wanted = std::count_if(m_jobs.begin() + static_cast<long>(first), m_jobs.end(),
                                      [](const batch_job& j) { return j.compile_ahead; });
    const std::size_t compilers =
        m_settings.folder.empty()
            ? 0
            : std::min(static_cast<std::size_t>(std::max(m_settings.threads, 0)),
                       static_cast<std::size_t>(wanted));
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < compilers; ++i) threads.emplace_back([this] { compile_loop(); });
    std::thread recorder([this] { record_loop(); });
    for (const measuring_device& d : m_devices)
        threads.emplace_back([this, &d] { device_loop(d); });
    for (std::thread& t : threads) t.join();
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_devices_done = true;
    }
    m_recordable.notify_all();
    recorder.join();
    std::error_code ec;
    if (compilers > 0) fs::remove(m_settings.folder, ec);  // empty by now, unless it was not
    if (m_error) std::rethrow_exception(m_error);
}

void batch_run::fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_error) m_error = std::move(e);
}

void batch_run::device_loop(const measuring_device& device) {
    try {
        for (;;) {
            std::optional<compile_ahead_record> ahead;
            const std::optional<std::size_t> i = take_job(ahead);
            if (!i) return;
            attempt_result r = m_measure(m_jobs[*i], device);
            r.compile_ahead = ahead;
            finish_job(*i, std::move(r));
        }
    } catch (...) {
        fail(std::current_exception());
    }
}

std::optional<std::size_t> batch_run::take_job(std::optional<compile_ahead_record>& ahead) {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (stopping() || m_next_job >= m_jobs.size()) return std::nullopt;
    const std::size_t i = m_next_job++;
    if (m_state[i] == ahead_state::pending) m_state[i] = ahead_state::skipped;
    // A compile under way has a head start on the run's own: wait for it.
    const auto start = clock_type::now();
    const bool under_way = m_state[i] == ahead_state::compiling;
    m_compiled.wait(lock, [&] { return m_state[i] != ahead_state::compiling; });
    if (m_state[i] == ahead_state::done && m_ahead[i]) {
        ahead = m_ahead[i];
        ahead->waited_ms = under_way ? ms_since(start) : 0;
    }
    return i;
}

std::optional<std::size_t> batch_run::take_compile() {
    std::lock_guard<std::mutex> lock(m_mutex);
    while (m_next_compile < m_jobs.size() && (m_state[m_next_compile] != ahead_state::pending ||
                                              !m_jobs[m_next_compile].compile_ahead))
        ++m_next_compile;
    if (stopping() || m_next_compile >= m_jobs.size()) return std::nullopt;
    m_state[m_next_compile] = ahead_state::compiling;
    return m_next_compile++;
}

void batch_run::compile_loop() {
    while (const std::optional<std::size_t> i = take_compile()) {
        const compile_ahead_record rec = compile(m_jobs[*i]);
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_ahead[*i] = rec;
            m_state[*i] = ahead_state::done;
        }
        m_compiled.notify_all();
    }
}

compile_ahead_record batch_run::compile(const batch_job& job) const {
    compile_ahead_record rec;
    const auto start = clock_type::now();
    const fs::path folder = m_settings.folder / ("attempt-" + std::to_string(job.attempt));
    rec.ok = true;
    try {
        for (const measuring_device* d : m_arch_devices) {
            const fs::path where =
                m_arch_devices.size() == 1 ? folder : folder / d->evaluator.settings().arch;
            rec.ok = d->evaluator.compile_only(*job.cand, where).ok && rec.ok;
        }
    } catch (const std::exception&) {
        rec.ok = false;  // an optimisation only: the run compiles it and says what went wrong
    }
    std::error_code ec;
    fs::remove_all(folder, ec);
    rec.wall_ms = ms_since(start);
    return rec;
}

void batch_run::finish_job(std::size_t index, attempt_result r) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_done[index] = std::move(r);
    }
    m_recordable.notify_all();
}

void batch_run::record_loop() {
    for (;;) {
        std::optional<attempt_result> next;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_recordable.wait(lock, [&] {
                return m_devices_done ||
                       (m_next_record < m_done.size() && m_done[m_next_record].has_value());
            });
            if (m_next_record >= m_done.size() || !m_done[m_next_record]) return;  // all in
            next = std::move(m_done[m_next_record]);
            m_done[m_next_record].reset();
            ++m_next_record;
        }
        try {
            m_record(std::move(*next));
        } catch (...) {
            fail(std::current_exception());  // no job starts after it, nothing more is recorded
            return;
        }
    }
}

}  // namespace

std::vector<measuring_device> measuring_devices(const attempt_evaluator& e,
                                                const parallel_settings& p) {
    std::vector<measuring_device> out;
    if (p.devices.empty()) out.push_back({e.settings().device, e});
    for (const auto& [index, arch] : p.devices) {
        evaluator_settings s = e.settings();
        s.device = index;
        if (!arch.empty()) s.arch = arch;
        if (const auto f = p.floors_ms.find(index); f != p.floors_ms.end()) s.floors_ms = f->second;
        out.push_back({index, e.with(s)});
    }
    return out;
}

void evaluate_batch(const std::vector<batch_job>& jobs,
                    const std::vector<measuring_device>& devices,
                    const compile_ahead_settings& ahead, const measure_function& measure,
                    const record_function& record, const std::atomic<bool>* stop) {
    if (jobs.empty() || devices.empty()) return;
    batch_run(jobs, devices, ahead, measure, record, stop).run();
}

std::vector<attempt_result> on_every_device(
    const std::vector<measuring_device>& devices,
    const std::function<attempt_result(const measuring_device&)>& fn) {
    std::vector<attempt_result> out(devices.size());
    if (devices.size() == 1) {
        out[0] = fn(devices[0]);
        return out;
    }
    std::vector<std::exception_ptr> errors(devices.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < devices.size(); ++i)
        threads.emplace_back([&, i] {
            try {
                out[i] = fn(devices[i]);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    return out;
}

bool cacheable_options(const std::vector<std::string>& compile_options) {
    for (const std::string& o : compile_options)
        if (o.rfind("-I", 0) == 0 || o.rfind("--include-path", 0) == 0 ||
            o.rfind("--pre-include", 0) == 0 || o.rfind("-include", 0) == 0)
            return false;
    return true;
}

int default_compile_threads(int devices) {
    const int hardware = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, hardware - devices);
}

}  // namespace cuopt
