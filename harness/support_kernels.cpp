#include "harness/support_kernels.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/counter_rng.h"

extern const unsigned char support_kernels_fatbin[];
extern const std::size_t support_kernels_fatbin_size;

namespace cuopt {

support_kernels::support_kernels(int sm_count)
    : m_module(load_module(support_kernels_fatbin)), m_sm_count(std::max(1, sm_count)) {
    CU_CALL(cuModuleGetFunction(&m_hold, m_module.get(), "cuopt_hold_stream"));
    CU_CALL(cuModuleGetFunction(&m_flush, m_module.get(), "cuopt_flush_l2"));
    CU_CALL(cuModuleGetFunction(&m_demote, m_module.get(), "cuopt_demote_l2"));
    CU_CALL(cuModuleGetFunction(&m_hash, m_module.get(), "cuopt_hash_bytes"));
    CU_CALL(cuModuleGetFunction(&m_compare, m_module.get(), "cuopt_compare"));
    for (int t = 0; t < k_dtype_count; ++t) {
        const std::string name = "cuopt_generate_" + std::string(dtype_name(static_cast<dtype>(t)));
        CU_CALL(cuModuleGetFunction(&m_generate[t], m_module.get(), name.c_str()));
    }
}

void support_kernels::hold_stream(CUstream stream, CUdeviceptr release, CUdeviceptr timed_out,
                                  std::uint64_t timeout_ns) const {
    unsigned long long timeout = timeout_ns;
    void* params[] = {&release, &timed_out, &timeout};
    CU_CALL(cuLaunchKernel(m_hold, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr));
}

void support_kernels::flush_l2(CUstream stream, CUdeviceptr scratch, std::size_t bytes,
                               CUdeviceptr sink) const {
    unsigned long long count = bytes / 16;
    void* params[] = {&scratch, &count, &sink};
    CU_CALL(cuLaunchKernel(m_flush, static_cast<unsigned>(4 * m_sm_count), 1, 1, 512, 1, 1, 0,
                           stream, params, nullptr));
    unsigned long long lines = bytes / 128;
    void* demote_params[] = {&scratch, &lines};
    CU_CALL(cuLaunchKernel(m_demote, static_cast<unsigned>(4 * m_sm_count), 1, 1, 512, 1, 1, 0,
                           stream, demote_params, nullptr));
}

void support_kernels::hash_bytes(CUstream stream, CUdeviceptr buffer, std::size_t bytes,
                                 CUdeviceptr sum) const {
    unsigned long long n = bytes;
    void* params[] = {&buffer, &n, &sum};
    const unsigned threads = 256;
    const std::uint64_t words = std::max<std::uint64_t>(1, bytes / 8);
    const unsigned blocks = static_cast<unsigned>(
        std::min<std::uint64_t>((words + threads - 1) / threads, 4ull * m_sm_count));
    CU_CALL(cuLaunchKernel(m_hash, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr));
}

cuopt_check::tally support_kernels::compare(CUstream stream, CUdeviceptr actual,
                                            CUdeviceptr expected, std::uint64_t count,
                                            const cuopt_check::rule& rule) const {
    const unsigned threads = 256;  // the kernel's shared tallies hold one per thread
    const unsigned blocks = static_cast<unsigned>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>((count + threads - 1) / threads, 4ull * m_sm_count)));
    device_buffer partials(blocks * sizeof(cuopt_check::tally));
    unsigned long long n = count;
    cuopt_check::rule r = rule;
    CUdeviceptr out = partials.get();
    void* params[] = {&actual, &expected, &n, &r, &out};
    CU_CALL(cuLaunchKernel(m_compare, blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr));
    std::vector<cuopt_check::tally> host(blocks);
    CU_CALL(cuStreamSynchronize(stream));
    CU_CALL(cuMemcpyDtoH(host.data(), out, blocks * sizeof(cuopt_check::tally)));
    cuopt_check::tally total = cuopt_check::empty_tally();
    for (const cuopt_check::tally& t : host) cuopt_check::merge(total, t);
    return total;
}

void support_kernels::generate(CUstream stream, CUdeviceptr buffer, dtype type, std::uint64_t count,
                               const generator_spec& spec, std::uint64_t launch_index) const {
    unsigned long long n = count, seed = spec.seed, launch = launch_index;
    int kind = static_cast<int>(spec.kind);
    double a = spec.low, b = spec.high;
    if (spec.kind == generator_kind::normal) a = spec.mean, b = spec.stddev;
    if (spec.kind == generator_kind::sequence) a = spec.start, b = spec.step;
    if (spec.kind == generator_kind::constant) a = spec.value;
    cuopt_rng::stream_key key{};
    int keyed = spec.stream_key.has_value();
    if (keyed) std::copy(spec.stream_key->begin(), spec.stream_key->end(), key.words);
    void* params[] = {&buffer, &n, &kind, &a, &b, &seed, &launch, &key, &keyed};
    // Keyed, a thread makes a ChaCha20 block of eight elements at a time.
    const std::uint64_t items =
        keyed ? (count + cuopt_rng::k_values_per_block - 1) / cuopt_rng::k_values_per_block : count;
    const unsigned threads = 256;
    const unsigned blocks = static_cast<unsigned>(std::max<std::uint64_t>(
        1, std::min<std::uint64_t>((items + threads - 1) / threads, 8ull * m_sm_count)));
    CU_CALL(cuLaunchKernel(m_generate[static_cast<int>(type)], blocks, 1, 1, threads, 1, 1, 0,
                           stream, params, nullptr));
}

}  // namespace cuopt
