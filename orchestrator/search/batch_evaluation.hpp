#pragma once
/// A batch measured on several GPUs at once and compiled ahead on the CPU. One thread per
/// device takes the batch's candidates in order, one measurement per GPU at a time (a GPU
/// never times two things at once); meanwhile compile threads run NVRTC (cuda-harness
/// --compile-only, into the cubin cache the runs read) on candidates no GPU has taken yet, so
/// a measurement never waits for a compile that could have run earlier. Results are recorded
/// in batch order by a recorder thread, one at a time, each as soon as it and every one before
/// it are done: a GPU takes its next candidate while the last one's history, progress line and
/// artifacts are written.

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

/// How a search spreads over GPUs and CPU threads.
struct parallel_settings {
    /// The GPUs that measure, each with its arch ("": the evaluator's); the first also runs
    /// iteration 0, the repairs and everything after the search. Empty: the evaluator's device.
    std::vector<std::pair<int, std::string>> devices;
    /// Each device's own speed-of-light floors by case (from its peaks), against which an
    /// attempt it measures is impossible_time; a device not named: the evaluator's.
    std::map<int, std::map<std::string, double>> floors_ms;
    int compile_threads = 0;  // compile-ahead threads; 0: none (each run compiles for itself)
};

/// One GPU the search measures on.
struct measuring_device {
    int index = 0;
    attempt_evaluator evaluator;  // the search's, naming this device and its arch
};

/// The search's evaluator once per device of `p` (its own device alone where p names none).
std::vector<measuring_device> measuring_devices(const attempt_evaluator& e,
                                                const parallel_settings& p);

struct compile_ahead_settings {
    int threads = 0;               // 0: off
    std::filesystem::path folder;  // scratch requests, FOLDER/attempt-M, removed when compiled
};

struct batch_job {
    const candidate* cand = nullptr;
    int attempt = 0;
    bool compile_ahead = false;  // worth it: a submission the run will compile, cache-keyed
};

using measure_function = std::function<attempt_result(const batch_job&, const measuring_device&)>;
using record_function = std::function<void(attempt_result)>;

/// measure(job, device) for every job on the device threads (a job compiled ahead carries its
/// compile_ahead record); record(result) in job order on one recorder thread. Once *stop is set no
/// job starts; those running finish and are recorded. The first exception of measure or record is
/// rethrown once every thread has ended (no job starts after it).
void evaluate_batch(const std::vector<batch_job>& jobs,
                    const std::vector<measuring_device>& devices,
                    const compile_ahead_settings& ahead, const measure_function& measure,
                    const record_function& record, const std::atomic<bool>* stop);

/// fn(device) on every device at once; the results in device order.
std::vector<attempt_result> on_every_device(
    const std::vector<measuring_device>& devices,
    const std::function<attempt_result(const measuring_device&)>& fn);

/// False for options that make the harness bypass its cubin cache (an include path or a
/// pre-include: a header's content is not in the key), where a compile ahead is wasted.
bool cacheable_options(const std::vector<std::string>& compile_options);

/// Compile-ahead threads when not given: the hardware threads minus the devices, at least 1.
int default_compile_threads(int devices);

}  // namespace cuopt
