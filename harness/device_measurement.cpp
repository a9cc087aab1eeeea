#include "harness/device_measurement.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <vector>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "harness/cuda_handles.hpp"
#include "harness/sample_statistics.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t k_mib = 1ull << 20;
constexpr std::uint64_t k_max_copy_bytes = 512 * k_mib;
constexpr int k_warmup_copies = 3;
constexpr int k_timed_copies = 20;

}  // namespace

std::uint64_t copy_bytes_for(std::uint64_t free_bytes) {
    const std::uint64_t quarter = free_bytes / 4 / k_mib * k_mib;
    return std::max(k_mib, std::min(k_max_copy_bytes, quarter));
}

copy_bandwidth measure_copy_bandwidth(int device_index, int repetitions) {
    const primary_context context(get_device(device_index));
    std::size_t free_bytes = 0, total_bytes = 0;
    CU_CALL(cuMemGetInfo(&free_bytes, &total_bytes));
    copy_bandwidth out;
    out.bytes = copy_bytes_for(free_bytes);
    out.repetitions = repetitions;
    const device_buffer from(out.bytes), to(out.bytes);
    const stream_handle stream = make_stream();
    const CUstream s = stream.get();
    CU_CALL(cuMemsetD32Async(from.get(), 0x3F800000u, out.bytes / 4, s));  // 1.0f everywhere
    for (int i = 0; i < k_warmup_copies; ++i)
        CU_CALL(cuMemcpyDtoDAsync(to.get(), from.get(), out.bytes, s));
    std::vector<event_handle> starts, stops;
    for (int i = 0; i < repetitions; ++i) {
        starts.push_back(make_event());
        stops.push_back(make_event());
        CU_CALL(cuEventRecord(starts.back().get(), s));
        CU_CALL(cuMemcpyDtoDAsync(to.get(), from.get(), out.bytes, s));
        CU_CALL(cuEventRecord(stops.back().get(), s));
    }
    CU_CALL(cuStreamSynchronize(s));
    std::vector<double> samples_ms;
    for (int i = 0; i < repetitions; ++i) {
        float ms = 0;
        CU_CALL(cuEventElapsedTime(&ms, starts[i].get(), stops[i].get()));
        samples_ms.push_back(ms);
    }
    const double median_ms = summarize(samples_ms).median;
    out.gbps = median_ms > 0 ? 2.0 * static_cast<double>(out.bytes) / (median_ms * 1e-3) / 1e9 : 0;
    return out;
}

fs::path bandwidth_cache_file(const fs::path& folder, const device_fingerprint& device) {
    std::string name = "copy-bandwidth-" + device.uuid + "-driver-" +
                       std::to_string(device.driver_version) + ".json";
    for (char& c : name)  // a UUID from the driver is already safe; make sure of it
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    return folder / name;
}

std::optional<copy_bandwidth> read_cached_bandwidth(const fs::path& file,
                                                    const device_fingerprint& device) {
    std::string text;
    try {
        text = read_text_file(file);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    rapidjson::Document doc;
    if (!try_parse_json(doc, text).empty()) return std::nullopt;
    const std::optional<double> gbps = number_of(doc, "copy_bandwidth_gbps");
    const std::optional<long long> bytes = integer_of(doc, "bytes"),
                                   reps = integer_of(doc, "repetitions");
    if (string_of(doc, "uuid") != device.uuid ||
        integer_of(doc, "driver_version") != device.driver_version || !gbps || *gbps <= 0 ||
        !bytes || *bytes < 0 || !reps || *reps < 1 || *reps > INT_MAX)
        return std::nullopt;
    copy_bandwidth out;
    out.gbps = *gbps;
    out.bytes = static_cast<std::uint64_t>(*bytes);
    out.repetitions = static_cast<int>(*reps);
    out.cached = true;
    return out;
}

void write_cached_bandwidth(const fs::path& file, const device_fingerprint& device,
                            const copy_bandwidth& measured) noexcept {
    try {
        rapidjson::Document doc(rapidjson::kObjectType);
        add_document_header(doc, "cuda-harness");
        json_object d(doc);
        d.add("uuid", device.uuid).add("driver_version", device.driver_version);
        d.add("copy_bandwidth_gbps", measured.gbps);
        d.add("bytes", static_cast<std::uint64_t>(measured.bytes));
        d.add("repetitions", measured.repetitions);
        write_file_atomic(file, to_pretty_json(doc));
    } catch (...) {
        // A cache: the measurement stands without it, and is taken again next time.
    }
}

device_measurement measure_device(const device_fingerprint& device,
                                  const std::optional<fs::path>& cache_folder, bool remeasure) {
    device_measurement out;
    const std::optional<fs::path> file =
        cache_folder && !cache_folder->empty()  // "": no private cache folder
            ? std::optional<fs::path>(bandwidth_cache_file(*cache_folder, device))
            : std::nullopt;
    std::optional<copy_bandwidth> cached;
    if (file && !remeasure) cached = read_cached_bandwidth(*file, device);
    if (cached) {
        out.bandwidth = *cached;
    } else {
        out.bandwidth = measure_copy_bandwidth(device.index, k_timed_copies);
        if (file) write_cached_bandwidth(*file, device, out.bandwidth);
    }
    out.peaks = peak_tflops_for(device);
    out.peak_note = peak_note(device);
    return out;
}

std::string copy_method(const copy_bandwidth& m) {
    return "cuMemcpyDtoDAsync of " + std::to_string(m.bytes) + " bytes, median of " +
           std::to_string(m.repetitions) + ", counted as read+write (2N bytes)";
}

}  // namespace cuopt
