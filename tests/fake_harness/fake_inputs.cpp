// The fake's inputs and outputs: generated values as the harness's GPU generator makes them,
// a buffer's values in its dtype, values written back, and outputs checked on the CPU.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/counter_rng.h"
#include "common/element_check.h"
#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "fake_harness.hpp"
#include "harness/expected_values.hpp"

namespace cuopt::fake {

namespace {

// Value i of generator `g` at launch `launch`, as the harness's GPU generator makes it.
double generated(const generator_spec& g, std::uint64_t launch, std::uint64_t i) {
    std::uint64_t bits = cuopt_rng::random_bits(g.seed, launch, i);
    if (g.stream_key) {  // keyed by the request's inputs_key, as the harness's GPU generator
        cuopt_rng::stream_key k{};
        std::copy(g.stream_key->begin(), g.stream_key->end(), k.words);
        bits = cuopt_rng::keyed_bits(k, launch, i);
    }
    switch (g.kind) {
        case generator_kind::uniform:
            return cuopt_rng::uniform(bits, g.low, g.high);
        case generator_kind::normal: {
            const double u1 = ((bits >> 32) + 1.0) * (1.0 / 4294967296.0);
            const double u2 = (bits & 0xFFFFFFFFull) * (1.0 / 4294967296.0);
            return g.mean + g.stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        }
        case generator_kind::int_range:
            return static_cast<double>(cuopt_rng::int_range(bits, static_cast<std::int64_t>(g.low),
                                                            static_cast<std::int64_t>(g.high)));
        case generator_kind::sequence:
            return g.start + g.step * static_cast<double>(i);
        case generator_kind::constant:
            return g.value;
    }
    return 0;
}

}  // namespace

std::int64_t scalar(const kernel_arg& a) {
    std::int32_t v = 0;
    std::memcpy(&v, a.scalar_bytes.data(), 4);
    return v;
}

// The launch index whose values a generated input holds at the checked launch.
std::uint64_t values_launch(const kernel_arg& a, const request& req, const run_case& rc,
                            std::uint64_t checked) {
    (void)a;  // regenerated or held (as_given), a generator shows the checked launch's values
    return req.timing.fresh_inputs ? checked : rc.launch_index_base;
}

// A buffer's values at launch `launch` as doubles, rounded to its dtype.
std::vector<double> values_of(const kernel_arg& a, std::uint64_t launch) {
    std::vector<double> v(a.count);
    if (a.input_file) {
        const auto bytes = read_binary_file(*a.input_file);
        for (std::uint64_t i = 0; i < a.count; ++i)
            v[i] = element_as_double(a.type, bytes.data(), i);
    } else if (a.generator) {
        for (std::uint64_t i = 0; i < a.count; ++i) {
            const auto bits = encode_scalar(a.type, generated(*a.generator, launch, i));
            v[i] = element_as_double(a.type, bits.data(), 0);
        }
    }
    return v;
}

// Writes values in the buffer's dtype; the output record says what was written.
output_record write_values(const kernel_arg& a, const std::filesystem::path& file,
                           const std::vector<double>& v, const char* role) {
    std::vector<unsigned char> bytes;
    for (double x : v) {
        const auto e = encode_scalar(a.type, x);
        bytes.insert(bytes.end(), e.begin(), e.end());
    }
    write_file_atomic(file, bytes.data(), bytes.size());
    return {a.name,
            role,
            file,
            a.type,
            a.count,
            sha256_hex(bytes.data(), bytes.size()),
            count_poisoned(a.type, bytes.data(), a.count),
            std::nullopt};
}

// An output with a check (the real harness's GPU comparison), done here on the CPU with the same
// rule and the real harness's cache of expected files: the tally, and the file written only when
// the check fails.
output_record checked_output(const kernel_arg& a, const std::vector<unsigned char>& bytes,
                             bool write) {
    const expected_values& values = expected_values_for(a);
    output_check_result check;
    check.rule =
        cuopt_check::make_rule(static_cast<int>(a.type), poison_bits(a.type), a.check->atol,
                               a.check->rtol, a.check->rms_atol, values.finite_rms);
    check.rms_scaled = is_float(a.type) && a.check->rms_atol > 0;
    check.expected_file = a.check->expected_file;
    check.expected_sha256 = values.sha256;
    check.tally = cuopt_check::empty_tally();
    for (std::uint64_t i = 0; i < a.count; ++i)
        cuopt_check::check_element(
            check.tally, check.rule, cuopt_check::load_bits(bytes.data(), check.rule.kind, i),
            cuopt_check::load_bits(values.bytes.data(), check.rule.kind, i), i);
    output_record r{a.name, "output", {}, a.type, a.count, "", check.tally.unwritten, std::nullopt};
    if (check.tally.mismatches && write) {
        write_file_atomic(*a.output_file, bytes.data(), bytes.size());
        r.file = *a.output_file;
        r.sha256 = sha256_hex(bytes.data(), bytes.size());
    }
    r.check = std::move(check);
    return r;
}

// Values stored in `type`, element by element.
std::vector<unsigned char> stored_bytes(dtype type, const std::vector<float>& v) {
    std::vector<unsigned char> bytes;
    bytes.reserve(v.size() * dtype_size(type));
    for (float x : v) {
        const auto e = encode_scalar(type, x);
        bytes.insert(bytes.end(), e.begin(), e.end());
    }
    return bytes;
}

}  // namespace cuopt::fake
