// event-floor: how short a launch can CUDA events report on this GPU, by method.
// Context for the harness's empty-kernel figure: it times an empty kernel (and an
// event pair with nothing between) several ways and prints medians in microseconds.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

#include "harness/cuda_handles.hpp"
#include "harness/cupti_trace.hpp"
#include "harness/device_info.hpp"
#include "harness/gpu_state.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/sample_statistics.hpp"
#include "harness/support_kernels.hpp"

using namespace cuopt;

namespace {

// Median microseconds of `reps` calls of fn.
template <typename F>
double median_us(int reps, F fn) {
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        v.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                        .count());
    }
    return summarize(v).median;
}

// What the timed loop pays on the host around the samples: the persisting-L2 reset before
// each batch, an NVML reading before and after each case, CUPTI's start (once per process)
// and its flush of a case's records (CUPTI last: once on, it stays on).
void print_host_costs(const device_fingerprint& dev, CUfunction f, CUstream s) {
    const double reset = median_us(200, [] { CU_CALL(cuCtxResetPersistingL2Cache()); });
    const auto t0 = std::chrono::steady_clock::now();
    const std::string nvml = load_gpu_monitor();
    const double nvml_init =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const gpu_monitor monitor(dev.uuid, dev.pci_bus_id);
    const double read = median_us(50, [&] { (void)monitor.read(); });
    std::string why;
    const auto t1 = std::chrono::steady_clock::now();
    kernel_trace* trace = kernel_trace::start(&why);
    const double cupti_start =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    double collect = 0;
    if (trace) {
        std::vector<kernel_record> records;
        std::vector<launch_call> calls;
        collect = median_us(20, [&] {
            for (int i = 0; i < 100; ++i)
                CU_CALL(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr));
            CU_CALL(cuStreamSynchronize(s));
            trace->collect(&records, &calls);
        });
    }
    std::printf(
        "  \"host_costs\": {\"persisting_l2_reset_us\": %.2f, \"nvml_init_ms\": %.2f, "
        "\"nvml_read_us\": %.2f, \"nvml_note\": \"%s\", \"cupti_start_ms\": %.2f, "
        "\"cupti_launch_plus_collect_100_us\": %.2f, \"cupti_note\": \"%s\"}\n",
        reset, nvml_init, read, nvml.c_str(), cupti_start, collect, why.c_str());
}

}  // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IONBF,
                 0);  // a crash must not swallow the lines already measured
    const device_fingerprint dev = query_device(0);
    primary_context ctx(get_device(0));
    kernel_spec k;
    k.source = "extern \"C\" __global__ void empty_kernel() {}\n";
    k.source_name = "empty.cu";
    k.entry = "empty_kernel";
    const compile_result c = compile_kernel(k, dev.arch());
    const module_handle module = load_module(c.cubin.data());
    CUfunction f{};
    CU_CALL(cuModuleGetFunction(&f, module.get(), "empty_kernel"));
    const support_kernels support(dev.sm_count);
    const stream_handle stream = make_stream();
    const CUstream s = stream.get();
    mapped_host_buffer flags(8);
    constexpr int n = 4096, max_batch = 256;
    std::vector<event_handle> a, b;
    for (int i = 0; i < max_batch; ++i) a.push_back(make_event()), b.push_back(make_event());

    struct method {
        const char* name;
        bool hold, kernel;
        int before, batch, threads;
    };
    // Times the launch between the events of each pair, in held batches or synchronising each time.
    auto measure = [&](const method& m) {
        std::vector<double> samples;
        auto* host = static_cast<volatile int*>(flags.host());
        auto launch = [&] {
            CU_CALL(cuLaunchKernel(f, 1, 1, 1, m.threads, 1, 1, 0, s, nullptr, nullptr));
        };
        for (int done = 0; done < n; done += m.batch) {
            host[0] = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (m.hold)
                support.hold_stream(s, flags.device(), flags.device() + 4, 10'000'000'000ull);
            for (int i = 0; i < m.batch; ++i) {
                for (int j = 0; j < m.before; ++j) launch();
                CU_CALL(cuEventRecord(a[i].get(), s));
                if (m.kernel) launch();
                CU_CALL(cuEventRecord(b[i].get(), s));
                if (!m.hold) CU_CALL(cuStreamSynchronize(s));
            }
            std::atomic_thread_fence(std::memory_order_seq_cst);
            host[0] = 1;
            CU_CALL(cuStreamSynchronize(s));
            for (int i = 0; i < m.batch; ++i) {
                float ms = 0;
                CU_CALL(cuEventElapsedTime(&ms, a[i].get(), b[i].get()));
                samples.push_back(ms * 1000.0);
            }
        }
        return samples;
    };
    // Batches: how many timed pairs sit behind one hold. The first dozen or so commands after
    // a release are already fetched by the GPU; later ones pay for the fetch inside the sample.
    const method methods[] = {{"held_stream_empty_kernel_batch32", true, true, 0, 32, 32},
                              {"held_stream_empty_kernel_batch256", true, true, 0, 256, 32},
                              {"held_stream_empty_kernel_batch16", true, true, 0, 16, 32},
                              {"held_stream_empty_kernel_batch8", true, true, 0, 8, 32},
                              {"held_stream_empty_kernel_batch4", true, true, 0, 4, 32},
                              {"held_stream_empty_kernel_batch1", true, true, 0, 1, 32},
                              {"held_stream_after_other_kernel_batch8", true, true, 1, 8, 32},
                              {"held_stream_after_other_kernel_batch4", true, true, 1, 4, 32},
                              {"sync_each_empty_kernel", false, true, 0, 32, 32},
                              {"held_stream_event_pair_only_batch32", true, false, 0, 32, 32}};
    measure(methods[0]);  // warm-up
    std::printf("{\n  \"device\": \"%s\",\n  \"launches\": %d,\n  \"methods_us\": {\n",
                dev.name.c_str(), n);
    for (std::size_t i = 0; i < std::size(methods); ++i) {
        std::vector<double> v = measure(methods[i]);
        double even = 0, odd = 0;
        for (std::size_t j = 0; j < v.size(); ++j) (j % 2 ? odd : even) += v[j];
        const auto st = summarize(v);
        std::sort(v.begin(), v.end());
        auto pct = [&v](double p) { return v[static_cast<std::size_t>(p * (v.size() - 1))]; };
        std::printf(
            "    \"%s\": {\"median\": %.3f, \"min\": %.3f, \"p10\": %.3f, \"p25\": %.3f, \"p75\": "
            "%.3f, \"p90\": %.3f, "
            "\"mean_even_index\": %.3f, \"mean_odd_index\": %.3f}%s\n",
            methods[i].name, st.median, st.min, pct(0.1), pct(0.25), pct(0.75), pct(0.9),
            even / (v.size() / 2), odd / (v.size() / 2), i + 1 < std::size(methods) ? "," : "");
    }
    std::printf("  },\n");
    print_host_costs(dev, f, s);
    std::printf("}\n");
    return 0;
}
