#include "harness/cupti_trace.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

namespace cuopt {

namespace {

// clang-format off (an X-macro list: one entry per line)
#define CUOPT_CUPTI_FUNCTIONS(X)      \
    X(cuptiGetResultString)           \
    X(cuptiSubscribe)                 \
    X(cuptiEnableDomain)              \
    X(cuptiActivityEnable)            \
    X(cuptiActivityRegisterCallbacks) \
    X(cuptiActivityFlushAll)          \
    X(cuptiActivityGetNextRecord)     \
    X(cuptiActivityGetNumDroppedRecords)
// clang-format on

struct cupti_api {
#define CUOPT_DECLARE(name) decltype(&::name) name = nullptr;
    CUOPT_CUPTI_FUNCTIONS(CUOPT_DECLARE)
#undef CUOPT_DECLARE
};

cupti_api g_api;
kernel_trace* g_trace = nullptr;

constexpr std::size_t k_buffer_bytes = 8u << 20;
// The soname of the CUPTI these headers describe (CUDA 13: libcupti.so.13).
const std::string k_soname = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);

// The loader's search path first, then where toolkits install CUPTI: CUDA 13 keeps it in
// targets/<arch>/lib beside the other libraries, older toolkits in extras/CUPTI/lib64.
void* open_library(std::string* file, std::string* why) {
    std::vector<std::string> tries{k_soname};
    std::vector<std::filesystem::path> roots;
    if (const char* home = std::getenv("CUDA_HOME")) roots.emplace_back(home);
    roots.emplace_back("/usr/local/cuda");
    roots.emplace_back("/usr/local/cuda-" + std::to_string(CUDA_VERSION / 1000) + "." +
                       std::to_string(CUDA_VERSION % 1000 / 10));
    for (const auto& root : roots)
        for (const char* sub :
             {"targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "lib64", "extras/CUPTI/lib64"})
            tries.push_back((root / sub / k_soname).string());
    for (const std::string& t : tries) {
        if (void* lib = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            char where[4096] = {};
            *file = dlinfo(lib, RTLD_DI_ORIGIN, where) == 0
                        ? (std::filesystem::path(where) / k_soname).string()
                        : t;
            return lib;
        }
    }
    *why = "CUPTI not found: no " + k_soname + " on the loader's path, under $CUDA_HOME or " +
           "/usr/local/cuda; CUDA events time the launches";
    return nullptr;
}

std::string result_text(CUptiResult r) {
    const char* text = nullptr;
    if (g_api.cuptiGetResultString) g_api.cuptiGetResultString(r, &text);
    return text ? text : "CUPTI error " + std::to_string(static_cast<int>(r));
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
    if (!g_trace || (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API))
        return;
    const auto* d = static_cast<const CUpti_CallbackData*>(data);
    if (d->callbackSite == CUPTI_API_ENTER) g_trace->on_api_enter(d->correlationId);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, k_buffer_bytes));
    *size = *buffer ? k_buffer_bytes : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                               size_t valid) {
    std::vector<kernel_record> records;
    CUpti_Activity* record = nullptr;
    while (g_api.cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
            record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        // The leading fields read here are laid out alike in every kernel record version.
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        records.push_back(
            {k->start, k->end, k->correlationId, k->name ? k->name : "", k->isDeviceLaunched != 0});
    }
    size_t dropped = 0;
    g_api.cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
    std::free(buffer);
    if (g_trace) g_trace->on_records(records, dropped);
}

// Fills g_api from the library; "" when every entry point is there.
std::string load_api(void* lib) {
#define CUOPT_LOAD(name)                                                    \
    g_api.name = reinterpret_cast<decltype(g_api.name)>(dlsym(lib, #name)); \
    if (!g_api.name) return "CUPTI unusable: " + k_soname + " has no " #name;
    CUOPT_CUPTI_FUNCTIONS(CUOPT_LOAD)
#undef CUOPT_LOAD
    return "";
}

struct loaded_library {
    std::string file, failure;  // failure: "" when every entry point loaded
};

// dlopen and dlsym once per process.
const loaded_library& cupti_library() {
    static const loaded_library loaded = [] {
        loaded_library l;
        if (void* lib = open_library(&l.file, &l.failure)) l.failure = load_api(lib);
        return l;
    }();
    return loaded;
}

}  // namespace

kernel_trace* kernel_trace::start(std::string* why) {
    static kernel_trace* started = nullptr;
    static std::string failure;
    static bool tried = false;
    if (tried) {
        *why = failure;
        return started;
    }
    tried = true;
    const std::string& file = cupti_library().file;
    failure = cupti_library().failure;
    CUpti_SubscriberHandle subscriber{};
    CUptiResult r = CUPTI_SUCCESS;
    if (failure.empty() &&
        (r = g_api.cuptiSubscribe(&subscriber, on_callback, nullptr)) != CUPTI_SUCCESS)
        failure = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                      ? "CUPTI busy: another tool (a profiler) holds it; CUDA events time the "
                        "launches"
                      : "CUPTI unusable: cuptiSubscribe failed: " + result_text(r);
    const auto step = [&](CUptiResult result, const char* what) {
        if (failure.empty() && result != CUPTI_SUCCESS)
            failure = std::string("CUPTI unusable: ") + what + " failed: " + result_text(result);
    };
    if (failure.empty()) {
        step(g_api.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API),
             "cuptiEnableDomain(driver)");
        step(g_api.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
             "cuptiEnableDomain(runtime)");
        step(g_api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
             "cuptiActivityRegisterCallbacks");
    }
    if (failure.empty()) {
        // Never freed: CUPTI may deliver buffers up to process exit, as the context lives on.
        started = new kernel_trace();
        started->m_library = file;
        g_trace = started;
        step(g_api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
             "cuptiActivityEnable(CONCURRENT_KERNEL)");
        if (!failure.empty()) g_trace = started = nullptr;
    }
    *why = failure;
    return started;
}

void kernel_trace::reset() {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_records.clear();
    m_calls.clear();
    m_dropped = 0;
    m_current_launch = -1;
}

void kernel_trace::begin_launch(std::size_t index) {
    m_current_launch = static_cast<long long>(index);
}

void kernel_trace::end_launch() {
    m_current_launch = -1;
}

void kernel_trace::on_api_enter(std::uint32_t correlation_id) {
    const long long launch = m_current_launch;
    if (launch < 0) return;
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_calls.push_back({correlation_id, static_cast<std::size_t>(launch)});
}

void kernel_trace::on_records(const std::vector<kernel_record>& records, std::size_t dropped) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_records.insert(m_records.end(), records.begin(), records.end());
    m_dropped += dropped;
    // The stream hold spins one thread while the host enqueues: the GPU waits, it is not busy.
    for (const kernel_record& r : records)
        if (r.name != "cuopt_hold_stream") m_spans.emplace_back(r.start_ns, r.end_ns);
    m_spans_dropped += dropped;
}

void kernel_trace::collect(std::vector<kernel_record>* records, std::vector<launch_call>* calls) {
    g_api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const std::lock_guard<std::mutex> lock(m_mutex);
    *records = m_records;
    *calls = m_calls;
}

std::size_t kernel_trace::dropped() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_dropped;
}

kernel_trace* kernel_trace::running() {
    return g_trace;
}

busy_time kernel_trace::take_busy(std::size_t* dropped) {
    g_api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        spans.swap(m_spans);
        *dropped = std::exchange(m_spans_dropped, 0);
    }
    return busy_union(std::move(spans));
}

}  // namespace cuopt
