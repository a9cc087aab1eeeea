#include "orchestrator/service/dashboard_workers.hpp"

namespace cuopt {

dashboard_workers::~dashboard_workers() {
    // Normally join() ran already. The last owner may be one of the workers itself (it held
    // the dashboard's state): that thread cannot join itself, so it is let go.
    for (worker& w : m_workers) {
        if (!w.thread.joinable()) continue;
        if (w.thread.get_id() == std::this_thread::get_id())
            w.thread.detach();
        else
            w.thread.join();
    }
}

void dashboard_workers::reap_finished() {
    for (auto it = m_workers.begin(); it != m_workers.end();) {
        if (!*it->done) {
            ++it;
            continue;
        }
        it->thread.join();
        it = m_workers.erase(it);
    }
}

bool dashboard_workers::busy() {
    std::lock_guard<std::mutex> lock(m_mutex);
    reap_finished();
    return m_workers.size() >= m_max;
}

void dashboard_workers::start(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(m_mutex);
    reap_finished();
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([work = std::move(work), done]() {
        work();
        *done = true;
    });
    m_workers.push_back({std::move(t), std::move(done)});
}

void dashboard_workers::join() {
    std::vector<worker> all;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        all.swap(m_workers);
    }
    for (worker& w : all)
        if (w.thread.joinable() && w.thread.get_id() != std::this_thread::get_id())
            w.thread.join();
        else if (w.thread.joinable())
            w.thread.detach();
}

}  // namespace cuopt
