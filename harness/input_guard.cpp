#include "harness/input_guard.hpp"

#include <algorithm>
#include <cstdint>

namespace cuopt {

input_guard::input_guard(const support_kernels& support, CUstream stream,
                         std::vector<guarded> inputs)
    : m_support(support),
      m_stream(stream),
      m_inputs(std::move(inputs)),
      m_expected(m_inputs.size(), false),
      m_after(m_inputs.size(), false),
      m_sums(std::max<std::size_t>(1, m_inputs.size()) * 2 * sizeof(std::uint64_t)) {}

void input_guard::hash_into(std::size_t slot, CUdeviceptr from, std::size_t bytes) const {
    const CUdeviceptr sum = m_sums.get() + slot * sizeof(std::uint64_t);
    CU_CALL(cuMemsetD32Async(sum, 0, 2, m_stream));
    m_support.hash_bytes(m_stream, from, bytes, sum);
}

void input_guard::expect(const std::string& name, CUdeviceptr values) {
    for (std::size_t i = 0; i < m_inputs.size(); ++i)
        if (m_inputs[i].name == name) {
            hash_into(2 * i, values, m_inputs[i].bytes);
            m_expected[i] = true;
        }
}

void input_guard::hash_after() {
    if (!m_armed) return;
    m_armed = false;
    for (std::size_t i = 0; i < m_inputs.size(); ++i) {
        hash_into(2 * i + 1, m_inputs[i].working, m_inputs[i].bytes);
        m_after[i] = true;
    }
}

std::vector<std::string> input_guard::changed() const {
    std::vector<std::string> out;
    if (m_inputs.empty()) return out;
    std::vector<std::uint64_t> sums(2 * m_inputs.size());
    CU_CALL(cuStreamSynchronize(m_stream));
    CU_CALL(cuMemcpyDtoH(sums.data(), m_sums.get(), sums.size() * sizeof(std::uint64_t)));
    for (std::size_t i = 0; i < m_inputs.size(); ++i)
        if (m_expected[i] && m_after[i] && sums[2 * i] != sums[2 * i + 1])
            out.push_back(m_inputs[i].name);
    return out;
}

}  // namespace cuopt
