#pragma once
/// The threads the dashboard runs its slow work on (an intake's `check`, which takes seconds;
/// a commit's hashing), so the daemon's event loop never waits for it. At most a few at once;
/// every thread is joined before the dashboard goes.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cuopt {

class dashboard_workers {
  public:
    explicit dashboard_workers(std::size_t max_running = 4) : m_max(max_running) {}
    ~dashboard_workers();
    dashboard_workers(const dashboard_workers&) = delete;
    dashboard_workers& operator=(const dashboard_workers&) = delete;

    /// `max_running` threads are still running.
    bool busy();
    /// Runs `work` on a new thread (it must not throw).
    void start(std::function<void()> work);
    /// Waits for every thread started so far.
    void join();

  private:
    struct worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    void reap_finished();  // with m_mutex held

    std::size_t m_max;
    std::mutex m_mutex;
    std::vector<worker> m_workers;
};

}  // namespace cuopt
