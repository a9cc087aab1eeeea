#include "harness/cub_launcher.hpp"

#include <algorithm>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

// The buffer `name` names, or null.
const live_buffer* find_buffer(const std::vector<live_buffer>& buffers, const std::string& name) {
    const auto it = std::find_if(buffers.begin(), buffers.end(),
                                 [&](const live_buffer& b) { return b.arg->name == name; });
    return it == buffers.end() ? nullptr : &*it;
}

// Why the buffer for `key` (x or y) does not suit it; "" when it does.
std::string operand_problem(const std::vector<live_buffer>& buffers, const char* key,
                            const std::string& name, std::uint64_t count, const char* shape,
                            bool output) {
    const std::string role = std::string(key) + " " + quote_value(name);
    const live_buffer* b = find_buffer(buffers, name);
    if (!b) return role + " names no buffer of this case";
    if (b->arg->type != dtype::f32)
        return role + " is " + std::string(dtype_name(b->arg->type)) + "; expected f32";
    if (b->arg->count != count)
        return role + " has " + std::to_string(b->arg->count) + " elements; expected " + shape +
               " = " + std::to_string(count);
    if (output && !b->arg->is_output()) return role + " has no output file; y is written";
    if (!output && !b->arg->has_input()) return role + " has no input; x is read";
    return "";
}

}  // namespace

std::string row_sum_buffer_problem(const vendor_call& v, const std::vector<live_buffer>& buffers) {
    const std::uint64_t rows = v.rows > 0 ? static_cast<std::uint64_t>(v.rows) : 0,
                        cols = v.cols > 0 ? static_cast<std::uint64_t>(v.cols) : 0;
    if (rows == 0 || cols == 0)
        return "rows=" + std::to_string(v.rows) + ", cols=" + std::to_string(v.cols) +
               "; expected both at least 1";
    std::string problem = operand_problem(buffers, "x", v.x, rows * cols, "rows*cols", false);
    if (problem.empty()) problem = operand_problem(buffers, "y", v.y, rows, "rows", true);
    return problem;
}

std::function<void()> cub_launcher::bind(const run_case& c, const std::vector<live_buffer>& buffers,
                                         CUstream stream) {
    const vendor_call& v = *c.vendor;
    if (const std::string problem = row_sum_buffer_problem(v, buffers); !problem.empty())
        throw cuda_error(CUDA_ERROR_INVALID_VALUE, "cub:segmented_sum: " + problem);
    const float* x = reinterpret_cast<const float*>(buffer_named(buffers, v.x).working.get());
    float* y = reinterpret_cast<float*>(buffer_named(buffers, v.y).working.get());
    const long long rows = v.rows, cols = v.cols;
    std::size_t bytes = 0;  // the size query launches nothing
    if (const int s = m_api.row_sum_f32(x, y, rows, cols, nullptr, &bytes, stream); s != 0)
        throw cuda_error(CUDA_ERROR_UNKNOWN,
                         "cub::DeviceSegmentedReduce::Sum (temporary storage size) failed: " +
                             describe_cub_status(m_api, s));
    // The last case's launches, the only users of the old storage, finished with its stream.
    if (bytes > m_temp.bytes()) m_temp = device_buffer(bytes);
    void* temp = reinterpret_cast<void*>(m_temp.get());
    return [this, x, y, rows, cols, temp, bytes, stream] {
        std::size_t temp_bytes = bytes;
        const int s = m_api.row_sum_f32(x, y, rows, cols, temp, &temp_bytes, stream);
        if (s != 0)  // a runtime status, not a CUresult: not sticky by itself
            throw cuda_error(CUDA_ERROR_UNKNOWN, "cub::DeviceSegmentedReduce::Sum failed: " +
                                                     describe_cub_status(m_api, s));
    };
}

std::string cub_launcher::entry(const run_case& c) const {
    return std::string("cub:") + k_vendor_ops.name(c.vendor->op);
}

std::string cub_launcher::notes() {
    return "segmented_sum: y[r] = sum_j x[r][j] by cub::DeviceSegmentedReduce::Sum through the "
           "bundled launcher libcuopt_cub.so (CUDA runtime linked statically), x f32 row-major "
           "rows x cols, y f32, f32 accumulation in CUB's own order (a tree within each row, "
           "not the sequential order), row r's segment [r * cols, (r + 1) * cols) computed by an "
           "iterator, no offset arrays in memory; CUB's temporary storage sized and allocated "
           "once per case outside the timed launches; one launch is one "
           "DeviceSegmentedReduceKernel grid of rows blocks";
}

}  // namespace cuopt
