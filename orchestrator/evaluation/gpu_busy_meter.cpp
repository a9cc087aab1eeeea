#include "orchestrator/evaluation/gpu_busy_meter.hpp"

namespace cuopt {

gpu_busy_meter::gpu_busy_meter(const std::vector<int>& devices) {
    for (const int d : devices) m_gpus[d].device = d;
}

void gpu_busy_meter::add(int device, std::optional<double> ms, long long kernels,
                         const std::string& source) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    gpu_busy_totals& g = m_gpus[device];
    g.device = device;
    ++g.harness_runs;
    if (!ms) {
        ++g.unmeasured_runs;
        return;
    }
    g.busy_ms += *ms;
    g.kernels += kernels;
    if (m_search_start && !m_search_end) {
        g.search_busy_ms += *ms;
        g.search_kernels += kernels;
    }
    if (source != "none") m_sources.insert(source);
}

void gpu_busy_meter::begin_search() {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_search_start = clock::now();
    m_search_end.reset();
}

void gpu_busy_meter::end_search() {
    const std::lock_guard<std::mutex> lock(m_mutex);
    if (m_search_start) m_search_end = clock::now();
}

gpu_busy_record gpu_busy_meter::record() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    gpu_busy_record r;
    double search_busy_ms = 0;
    for (const auto& [device, g] : m_gpus) {
        r.gpus.push_back(g);
        search_busy_ms += g.search_busy_ms;
    }
    if (m_sources.size() == 1) r.source = *m_sources.begin();
    if (m_sources.size() > 1) r.source = "mixed";
    if (m_search_start)
        r.search_wall_s =
            std::chrono::duration<double>(m_search_end.value_or(clock::now()) - *m_search_start)
                .count();
    if (r.search_wall_s > 0 && !r.gpus.empty() && !m_sources.empty())
        r.busy_fraction =
            search_busy_ms / 1000 / (r.search_wall_s * static_cast<double>(r.gpus.size()));
    return r;
}

}  // namespace cuopt
