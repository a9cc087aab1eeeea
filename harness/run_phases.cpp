// The phases that run a request's cases, once its context is current: the kernel's module (or
// the vendor library) loaded, every case checked, the clocks started, the cases run and timed.
#include "harness/run_phases.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "harness/cub_launcher.hpp"
#include "harness/cubin_params.hpp"
#include "harness/cublas_launcher.hpp"
#include "harness/cublaslt_launcher.hpp"
#include "harness/cuda_driver.hpp"
#include "harness/device_session.hpp"

namespace cuopt {

namespace {

kernel_attributes read_attributes(CUfunction f) {
    kernel_attributes k;
    CU_CALL(cuFuncGetAttribute(&k.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    CU_CALL(cuFuncGetAttribute(&k.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    CU_CALL(cuFuncGetAttribute(&k.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
    CU_CALL(cuFuncGetAttribute(&k.const_bytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f));
    CU_CALL(
        cuFuncGetAttribute(&k.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    return k;
}

// Every case checked before any runs: a request the device cannot run is rejected whole.
bool check_cases_phase(const request& req, CUfunction kernel, harness_report& report) {
    bool all_ok = true;
    const std::optional<std::size_t> param_count =
        count_kernel_params(report.compile->cubin, report.compile->lowered_name);
    for (std::size_t i = 0; i < req.cases.size(); ++i) {
        const run_case& c = req.cases[i];
        std::string problem = check_arguments(c, kernel, param_count);
        if (problem.empty())
            problem =
                check_launch(c, *report.device, kernel,
                             static_cast<std::size_t>(report.attributes->static_shared_bytes));
        case_outcome& out = report.cases.emplace_back();
        out.name = c.name;
        out.measured = c.measure;
        if (problem.empty()) continue;
        out.status = case_run_status::invalid_launch;
        out.error =
            req.file.filename().string() + ": field cases[" + std::to_string(i) + "]." + problem;
        report.fail(exit_code::invalid_request, out.error);
        all_ok = false;
    }
    if (!all_ok)
        for (auto& c : report.cases)
            if (c.status == case_run_status::skipped) c.error = "not run: the request was rejected";
    return all_ok;
}

// ncu and Nsight Systems inject themselves through CUDA_INJECTION64_PATH.
bool profiler_injected() {
    const char* injection = std::getenv("CUDA_INJECTION64_PATH");
    return injection && *injection;
}

// A profiler that injects itself serialises launches, so a held stream would only wait for
// its timeout there.
bool should_hold_stream(const harness_options& o) {
    return !o.no_stream_hold && !profiler_injected();
}

}  // namespace

bool any_measured(const request& req) {
    return std::any_of(req.cases.begin(), req.cases.end(),
                       [](const run_case& c) { return c.measure; });
}

namespace {

// From here the request's kernels run: CUPTI's trace measures the GPU's busy time (the
// response's gpu_busy), started unless a profiler owns CUPTI or the request times with events
// (a worker's trace, once started, serves every later request). What the trace still holds
// from an earlier request is dropped. Where there is none, the note says why.
void start_busy_clock(const request& req, harness_report& report) {
    gpu_busy_report& busy = report.gpu_busy;
    busy.ms.reset();
    kernel_trace* trace = kernel_trace::running();
    if (trace) {
        std::size_t dropped = 0;
        trace->take_busy(&dropped);
    } else if (profiler_injected()) {
        busy.note = "a profiler is injected (CUDA_INJECTION64_PATH) and owns CUPTI";
    } else if (req.timing.timer == timer_choice::events) {
        busy.note = "timing.timer is events: CUPTI was not started";
    } else {
        trace = kernel_trace::start(&busy.note);
    }
    if (!trace) return;
    busy.source = "cupti";
    busy.ms = 0.0;
    busy.note.clear();
}

}  // namespace

void stop_busy_clock(harness_report& report) {
    gpu_busy_report& busy = report.gpu_busy;
    kernel_trace* trace = kernel_trace::running();
    if (busy.source != "cupti" || !trace) return;
    std::size_t dropped = 0;
    const busy_time t = trace->take_busy(&dropped);
    busy.ms = static_cast<double>(t.busy_ns) * 1e-6;
    busy.kernels = t.kernels;
    if (dropped) busy.note = "CUPTI dropped " + std::to_string(dropped) + " records: a floor";
}

namespace {

// The clocks a request's cases are timed and watched with: CUPTI unless events were asked
// for, nothing is timed, or a profiler is injected (it owns CUPTI); NVML where it loads.
case_runner::clocks clocks_phase(const request& req, const harness_options& o,
                                 harness_report& report,
                                 const std::function<void(const char*)>& lap) {
    case_runner::clocks clocks;
    clocks.hold_stream = should_hold_stream(o);
    start_busy_clock(req, report);
    if (!any_measured(req)) {
        report.timer_note = "no case is measured";
        lap("cupti_init");
        return clocks;
    }
    if (req.timing.timer == timer_choice::events)
        report.timer_note = "timing.timer is events";
    else if (profiler_injected())
        report.timer_note =
            "a profiler is injected (CUDA_INJECTION64_PATH) and owns CUPTI; CUDA events time "
            "the launches";
    else if ((clocks.trace = kernel_trace::start(&report.timer_note))) {
        report.timer = "cupti";
        report.timer_library = clocks.trace->library();
    }
    clocks.trace_note = report.timer_note;
    lap("cupti_init");
    static const gpu_monitor monitor(report.device->uuid, report.device->pci_bus_id);
    report.gpu_monitor = monitor.available();
    report.gpu_monitor_note = monitor.note();
    clocks.monitor = &monitor;
    lap("gpu_monitor");
    return clocks;
}

// Every case after case `i` marked skipped, with `why`.
void skip_cases_after(std::size_t i, const std::string& why, harness_report& report) {
    for (std::size_t j = i + 1; j < report.cases.size(); ++j) {
        report.cases[j].status = case_run_status::skipped;
        report.cases[j].error = why;
    }
}

void run_cases_phase(const request& req, case_launcher& launcher, const case_runner::clocks& clocks,
                     harness_report& report) {
    case_runner runner(*report.device, device_session::on(req.device, *report.device), launcher,
                       req.timing, clocks);
    for (std::size_t i = 0; i < req.cases.size(); ++i) {
        case_outcome& slot = report.cases[i];
        try {
            slot = runner.run(req.cases[i]);
            if (slot.status == case_run_status::invalid_timing)
                report.fail(exit_code::case_failed, slot.error);
        } catch (const cuda_error& e) {
            slot.status = case_run_status::cuda_error;
            slot.error = e.what();
            if (!e.sticky()) {
                report.fail(exit_code::case_failed, "case '" + slot.name + "': " + e.what());
                continue;
            }
            report.fail(exit_code::context_lost,
                        "case '" + slot.name + "' lost the CUDA context: " + e.what());
            skip_cases_after(i, "skipped: context lost", report);
            return;
        } catch (const file_write_error& e) {
            // A full disk (or a read-only folder) fails the request, not the device: the case
            // ran, its files did not land, and the cases after it would meet the same disk.
            slot.error = e.what();
            report.fail(exit_code::internal_error, e.what());
            skip_cases_after(
                i, "skipped: case " + quote_value(slot.name) + " could not write its files",
                report);
            return;
        }
    }
}

}  // namespace

void run_kernel_phases(const request& req, const harness_options& o, harness_report& report,
                       const std::function<void(const char*)>& lap) {
    const module_handle module = load_module(report.compile->cubin.data());
    CUfunction kernel{};
    // Loaded, so its globals exist and its kernel may run: what it leaves behind decides
    // whether a worker may go on. The module itself unloads when this phase ends.
    report.retire_reason = worker_retire_reason(report.compile->cubin);
    CU_CALL(cuModuleGetFunction(&kernel, module.get(), report.compile->lowered_name.c_str()));
    report.attributes = read_attributes(kernel);
    lap("context_and_module");
    if (!check_cases_phase(req, kernel, report)) return;
    kernel_launcher launcher(kernel);
    const case_runner::clocks clocks = clocks_phase(req, o, report, lap);
    run_cases_phase(req, launcher, clocks, report);
    lap("run_cases");
}

namespace {

// The request's library loaded and its launcher made in the primary context, the response's
// vendor block filled in. Throws vendor_library_error where the library does not load.
std::unique_ptr<case_launcher> make_vendor_launcher(vendor_library library,
                                                    std::optional<vendor_report>& report) {
    const std::string name = k_vendor_libraries.name(library);
    if (library == vendor_library::cub) {
        auto launcher = std::make_unique<cub_launcher>(load_cub());
        report = vendor_report{name, launcher->api().file, launcher->api().version,
                               cub_launcher::k_math_mode, cub_launcher::notes()};
        return launcher;
    }
    if (library == vendor_library::cublaslt) {
        auto launcher = std::make_unique<cublaslt_launcher>(load_cublaslt());
        report = vendor_report{name, launcher->api().file, launcher->api().version,
                               cublaslt_launcher::k_math_mode, cublaslt_launcher::notes()};
        return launcher;
    }
    auto launcher = std::make_unique<cublas_launcher>(load_cublas());
    report = vendor_report{name, launcher->api().file, launcher->api().version,
                           cublas_launcher::k_math_mode, cublas_launcher::notes()};
    return launcher;
}

}  // namespace

void run_vendor_phases(const request& req, const harness_options& o, harness_report& report,
                       const std::function<void(const char*)>& lap) {
    for (const run_case& c : req.cases) {
        case_outcome& out = report.cases.emplace_back();
        out.name = c.name;
        out.measured = c.measure;
        out.entry = std::string(k_vendor_libraries.name(*req.vendor)) + ":" +
                    k_vendor_ops.name(c.vendor->op);
    }
    std::unique_ptr<case_launcher> launcher;
    try {
        launcher = make_vendor_launcher(*req.vendor, report.vendor);
    } catch (const vendor_library_error& e) {
        for (case_outcome& out : report.cases) out.error = std::string("not run: ") + e.what();
        report.fail(exit_code::internal_error, e.what());
        return;
    }
    lap("context_and_library");
    const case_runner::clocks clocks = clocks_phase(req, o, report, lap);
    run_cases_phase(req, *launcher, clocks, report);
    lap("run_cases");
}

}  // namespace cuopt
