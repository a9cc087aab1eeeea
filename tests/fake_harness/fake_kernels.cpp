// The simulated kernels: matmul_f32 and gemm_e4m3 computed on the CPU, the arguments they need,
// and the source markers that make their C wrong, unwritten or lost.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/element_check.h"
#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "fake_harness.hpp"

namespace cuopt::fake {

namespace {

// An f32 scalar argument's value.
float scalar_f32(const kernel_arg& a) {
    float v = 0;
    std::memcpy(&v, a.scalar_bytes.data(), 4);
    return v;
}

// The values a kernel that predicts its inputs (FAKE_PREDICTS_INPUTS) believes `a` holds: the
// public generator's, whatever the request's key.
kernel_arg as_predicted(kernel_arg a, const request& req) {
    if (a.generator && req.kernel.source.find("FAKE_PREDICTS_INPUTS") != std::string::npos)
        a.generator->stream_key.reset();
    return a;
}

}  // namespace

// The kernel's C on the CPU, summed as one thread per element would (in float, in order of p
// from 0). matmul_f32(a, b, c, m, n, k): c[i][j] = sum a[i][p] b[p][j], the loop over j
// innermost so that it vectorises without reordering any sum. gemm_e4m3(a, b, c, scale_a,
// scale_b, m, n, k): c[i][j] = scale_a scale_b sum a[i][p] b[j][p] (B stored n x k), each
// product of two e4m3 values exact in float.
fake_gemm fake_kernel(const request& req, const run_case& rc, std::uint64_t launch) {
    const bool fp8 = req.kernel.entry == "gemm_e4m3";
    const std::size_t dims = fp8 ? 5 : 3;  // where m, n, k start
    fake_gemm g;
    g.a =
        values_of(as_predicted(rc.args.at(0), req), values_launch(rc.args.at(0), req, rc, launch));
    g.b =
        values_of(as_predicted(rc.args.at(1), req), values_launch(rc.args.at(1), req, rc, launch));
    g.m = scalar(rc.args.at(dims)), g.n = scalar(rc.args.at(dims + 1));
    g.k = scalar(rc.args.at(dims + 2));
    const std::int64_t m = g.m, n = g.n, k = g.k;
    const std::vector<float> a(g.a.begin(), g.a.end()), b(g.b.begin(), g.b.end());
    g.c.assign(static_cast<std::size_t>(m * n), 0.0f);
    if (!fp8) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t p = 0; p < k; ++p) {
                const float ai = a[i * k + p];
                float* c_row = &g.c[i * n];
                const float* b_row = &b[p * n];
                for (std::int64_t j = 0; j < n; ++j) c_row[j] += ai * b_row[j];
            }
        return g;
    }
    const float scale = scalar_f32(rc.args.at(3)) * scalar_f32(rc.args.at(4));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (std::int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[j * k + p];
            g.c[i * n + j] = acc * scale;
        }
    return g;
}

// Why the fake cannot run case `rc` of its kernel as asked ("" when it can): the arguments
// the computation reads must be there, of the right kinds and sizes (a request the real harness
// would launch into an out-of-bounds read is refused here, never read past the end).
std::string fake_kernel_problem(const request& req, const run_case& rc) {
    const bool fp8 = req.kernel.entry == "gemm_e4m3";
    const std::size_t dims = fp8 ? 5 : 3;
    const std::string what = "fake-harness: case '" + rc.name + "' of " + req.kernel.entry + ": ";
    if (rc.args.size() < dims + 3)
        return what + "expected " + std::to_string(dims + 3) + " arguments, found " +
               std::to_string(rc.args.size());
    for (std::size_t i = 0; i < 3; ++i)
        if (!rc.args[i].is_buffer) return what + "argument " + std::to_string(i) + " is a scalar";
    for (std::size_t i = 3; i < dims + 3; ++i) {
        const bool want_f32 = i < dims;
        const dtype want = want_f32 ? dtype::f32 : dtype::i32;
        if (rc.args[i].is_buffer || rc.args[i].type != want)
            return what + "argument " + std::to_string(i) + " must be an " +
                   std::string(dtype_name(want)) + " scalar";
    }
    const std::int64_t m = scalar(rc.args[dims]), n = scalar(rc.args[dims + 1]),
                       k = scalar(rc.args[dims + 2]);
    if (m < 0 || n < 0 || k < 0) return what + "m, n and k must not be negative";
    const auto short_of = [](const kernel_arg& a, std::int64_t need) {
        return a.count < static_cast<std::uint64_t>(need);
    };
    if (short_of(rc.args[0], m * k) || short_of(rc.args[1], k * n) || short_of(rc.args[2], m * n))
        return what + "a, b or c holds fewer elements than m, n and k need";
    return "";
}

// The name after "MARKER=" up to the next space, "" for a bare MARKER; nullopt without it.
std::optional<std::string> marker_value(const std::string& source, const std::string& marker) {
    const auto pos = source.find(marker);
    if (pos == std::string::npos) return std::nullopt;
    const auto start = pos + marker.size();
    if (start >= source.size() || source[start] != '=') return std::string();
    const auto end = source.find_first_of(" \t\n", start + 1);
    return source.substr(start + 1, end == std::string::npos ? end : end - start - 1);
}

// FAKE_WRITES_INPUT[=ARG]: what the real harness's input guard reports of a kernel that writes
// into ARG (default a): its name where it is a declared input, nothing for an inout argument.
std::vector<std::string> inputs_changed(const run_case& rc, const std::string& source) {
    const auto written = marker_value(source, "FAKE_WRITES_INPUT");
    if (!written) return {};
    const std::string name = written->empty() ? "a" : *written;
    for (const kernel_arg& a : rc.args)
        if (a.name == name && a.is_buffer && a.has_input() && !a.is_output()) return {name};
    return {};
}

// FAKE_WRONG and FAKE_OVERFIT, FAKE_COUNTS_LAUNCHES and FAKE_FAILS_REMEASURE (a measured case
// under other launch counts), FAKE_NONDETERMINISTIC[_BIG]: c[0] moved.
void miscompute_c(fake_gemm& g, const request& req, const run_case& rc) {
    const std::string& src = req.kernel.source;
    std::vector<float>& cv = g.c;
    const std::int64_t k = g.k;
    if (src.find("FAKE_WRONG") != std::string::npos) cv[0] += 1.0f;
    if (src.find("FAKE_OVERFIT") != std::string::npos && k != 29 && k % 32 != 0) cv[0] += 1.0f;
    const bool default_counts = req.timing.warmup == 10 && req.timing.iterations == 100;
    if (rc.measure && src.find("FAKE_COUNTS_LAUNCHES") != std::string::npos && !default_counts)
        cv[0] += 1.0f;
    if (rc.measure && src.find("FAKE_FAILS_REMEASURE") != std::string::npos &&
        req.timing.warmup != 10 && req.timing.iterations == 100)
        cv[0] += 1.0f;
    if (src.find("FAKE_NONDETERMINISTIC") != std::string::npos) {
        const bool big = src.find("FAKE_NONDETERMINISTIC_BIG") != std::string::npos;
        const bool untimed =
            std::none_of(req.cases.begin(), req.cases.end(),
                         [](const run_case& x) { return x.measure || x.launch_index_base != 0; });
        if (!big || untimed) cv[0] += (big ? 1e-2f : 1e-6f) * static_cast<float>(1 + getpid() % 50);
    }
}

// C in its dtype: FAKE_LAST_LAUNCH_ONLY and FAKE_SKIP_LAST_ROW leave elements poisoned (unwritten),
// FAKE_MISSING_OUTPUT lists the file and never writes it; a checked C is compared on the CPU.
output_record store_c(const fake_gemm& g, const request& req, const run_case& rc) {
    const std::string& src = req.kernel.source;
    const std::vector<float>& cv = g.c;
    const std::int64_t m = g.m, n = g.n;
    const kernel_arg& c_arg = rc.args.at(2);
    std::vector<unsigned char> c_bytes = stored_bytes(c_arg.type, cv);
    const std::size_t c_size = dtype_size(c_arg.type);
    auto poison = [&](std::size_t from, std::size_t to) {  // elements [from, to) unwritten
        const std::uint64_t bits = poison_bits(c_arg.type);
        for (std::size_t i = from; i < to; ++i) std::memcpy(&c_bytes[i * c_size], &bits, c_size);
    };
    if (rc.measure && src.find("FAKE_LAST_LAUNCH_ONLY") != std::string::npos &&
        !checks_last_timed_launch(req.timing))
        poison(0, cv.size());
    if (src.find("FAKE_SKIP_LAST_ROW") != std::string::npos)
        poison(static_cast<std::size_t>((m - 1) * n), static_cast<std::size_t>(m * n));
    const bool write = src.find("FAKE_MISSING_OUTPUT") == std::string::npos;
    if (c_arg.check && write)  // FAKE_MISSING_OUTPUT: a harness that lists a file it lost
        return checked_output(c_arg, c_bytes, write);
    if (write) write_file_atomic(*c_arg.output_file, c_bytes.data(), c_bytes.size());
    return {c_arg.name,
            "output",
            *c_arg.output_file,
            c_arg.type,
            c_arg.count,
            sha256_hex(c_bytes.data(), c_bytes.size()),
            count_poisoned(c_arg.type, c_bytes.data(), cv.size()),
            std::nullopt};
}

}  // namespace cuopt::fake
