// event-floor: how short a launch can CUDA events report on this GPU, by method.
// Context for the harness's empty-kernel figure: it times an empty kernel (and an
// event pair with nothing between) several ways and prints medians in microseconds.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <vector>

#include "harness/cuda_handles.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/sample_statistics.hpp"
#include "harness/support_kernels.hpp"

using namespace cuopt;

int main() {
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
    constexpr int n = 2000, batch = 32;
    std::vector<event_handle> a, b;
    for (int i = 0; i < batch; ++i) a.push_back(make_event()), b.push_back(make_event());

    auto launch = [&] { CU_CALL(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr)); };
    // Times `body` between the events of each pair, in held batches or synchronising each time.
    auto measure = [&](bool hold, bool with_kernel, int kernels_before) {
        std::vector<double> samples;
        auto* host = static_cast<volatile int*>(flags.host());
        for (int done = 0; done < n; done += batch) {
            host[0] = 0;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (hold) support.hold_stream(s, flags.device(), flags.device() + 4, 10'000'000'000ull);
            for (int i = 0; i < batch; ++i) {
                for (int j = 0; j < kernels_before; ++j) launch();
                CU_CALL(cuEventRecord(a[i].get(), s));
                if (with_kernel) launch();
                CU_CALL(cuEventRecord(b[i].get(), s));
                if (!hold) CU_CALL(cuStreamSynchronize(s));
            }
            std::atomic_thread_fence(std::memory_order_seq_cst);
            host[0] = 1;
            CU_CALL(cuStreamSynchronize(s));
            for (int i = 0; i < batch; ++i) {
                float ms = 0;
                CU_CALL(cuEventElapsedTime(&ms, a[i].get(), b[i].get()));
                samples.push_back(ms * 1000.0);
            }
        }
        return summarize(samples);
    };
    // The same pairs captured into a CUDA graph and replayed: the GPU-side cost of a launch
    // without the stream's per-command processing.
    auto measure_graph = [&] {
        std::vector<double> samples;
        for (int done = 0; done < n; done += batch) {
            CU_CALL(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
            for (int i = 0; i < batch; ++i) {
                CU_CALL(cuEventRecord(a[i].get(), s));
                launch();
                CU_CALL(cuEventRecord(b[i].get(), s));
            }
            CUgraph graph{};
            CU_CALL(cuStreamEndCapture(s, &graph));
            CUgraphExec exec{};
            CU_CALL(cuGraphInstantiate(&exec, graph, 0));
            CU_CALL(cuGraphLaunch(exec, s));
            CU_CALL(cuStreamSynchronize(s));
            for (int i = 0; i < batch; ++i) {
                float ms = 0;
                CU_CALL(cuEventElapsedTime(&ms, a[i].get(), b[i].get()));
                samples.push_back(ms * 1000.0);
            }
            CU_CALL(cuGraphExecDestroy(exec));
            CU_CALL(cuGraphDestroy(graph));
        }
        return summarize(samples);
    };
    for (int i = 0; i < 200; ++i) launch();
    CU_CALL(cuStreamSynchronize(s));
    struct method {
        const char* name;
        bool hold, kernel;
        int before;
    };
    const method methods[] = {{"held_stream_empty_kernel", true, true, 0},
                              {"sync_each_empty_kernel", false, true, 0},
                              {"held_stream_event_pair_only", true, false, 0},
                              {"held_stream_kernel_after_busy_kernel", true, true, 1}};
    std::printf("{\n  \"device\": \"%s\",\n  \"launches\": %d,\n  \"methods_us\": {\n", dev.name.c_str(), n);
    for (std::size_t i = 0; i < std::size(methods); ++i) {
        const auto st = measure(methods[i].hold, methods[i].kernel, methods[i].before);
        std::printf("    \"%s\": {\"median\": %.3f, \"min\": %.3f, \"mean\": %.3f}%s\n", methods[i].name, st.median, st.min,
                    st.mean, i + 1 < std::size(methods) ? "," : "");
    }
    const auto g = measure_graph();
    std::printf("    ,\"graph_replay_empty_kernel\": {\"median\": %.3f, \"min\": %.3f, \"mean\": %.3f}\n", g.median, g.min, g.mean);
    std::printf("  }\n}\n");
    return 0;
}
