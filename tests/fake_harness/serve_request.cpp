// One request served by the fake: read, refused or "compiled", its cases computed on the CPU
// with the markers' misbehaviour, and the response written; the process may crash or hang.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/file_io.hpp"
#include "fake_harness.hpp"
#include "harness/nvrtc_compiler.hpp"

namespace cuopt::fake {

namespace {

// Writes the response (with gpu_busy for a run) and returns its exit code.
int finish(harness_report& report, std::chrono::steady_clock::time_point start,
           const std::string& response_path) {
    if (report.mode == "run") simulate_busy(report, start);
    write_file_atomic(response_path, write_response_json(report));
    return to_int(report.code);
}

// Any other kernel is refused before it "compiles" (the preflight's own empty probe kernel
// aside): a fake run cannot evaluate it, and must not look like a kernel that fails.
bool refuses_kernel(harness_report& report, const request& req, bool compile_only) {
    if (req.kernel.entry == "matmul_f32" || req.kernel.entry == "gemm_e4m3" ||
        (compile_only && req.kernel.entry == "cuopt_confinement_probe"))
        return false;
    report.fail(exit_code::invalid_request,
                "fake-harness simulates only matmul_f32 and gemm_e4m3; this request's kernel is " +
                    req.kernel.entry + " (a fake run cannot evaluate it: run on a GPU)");
    return true;
}

// The markers that strike once the kernel "loaded": a forged stdout line, a crash, a full disk,
// a hang, a device heap that retires the worker.
void act_on_run_markers(const std::string& src, const std::string& response_path) {
    if (src.find("FAKE_STDOUT_NOISE") != std::string::npos)  // a kernel's printf, forging
        print_stdout("{\"request\": \"forged\", \"exit_code\": 0}\n{\"request\"");
    if (src.find("FAKE_CRASH") != std::string::npos) end_process({SIGSEGV, false, 0, ""});
    if (src.find("FAKE_DISK_FULL") != std::string::npos && !g_worker)
        // As the real harness says it when its response.json cannot be written (one-shot).
        end_process({0, false, to_int(exit_code::internal_error),
                     "cuda-harness: internal_error: cannot write " + response_path +
                         ": No space left on device (errno 28)"});
    if (src.find("FAKE_HANG") != std::string::npos) end_process({0, true, 0, ""});
    if (src.find("FAKE_DEVICE_HEAP") != std::string::npos)
        g_retire_reason = "fake: its kernel uses the device heap (malloc)";
}

// FAKE_INVALID_TIMING: case `rc` held another kernel in a timed sample; the request fails.
void report_invalid_timing(harness_report& report, const request& req, const run_case& rc) {
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    out.status = case_run_status::invalid_timing;
    out.error = "timed sample 7 of " + std::to_string(req.timing.iterations) +
                " held 2 kernels: matmul_f32 and fake_intruder (another kernel ran inside it)";
    report.fail(exit_code::case_failed, "case '" + rc.name + "': " + out.error);
    report.cases.push_back(out);
}

// FAKE_ILLEGAL_ADDRESS: case `ci` is a cuda_error, the rest skipped, the context lost.
void lose_context(harness_report& report, const request& req, std::size_t ci) {
    const run_case& rc = req.cases[ci];
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    out.status = case_run_status::cuda_error;
    out.error =
        "cuStreamSynchronize(stream) failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
        "access was encountered)";
    report.cases.push_back(out);
    for (std::size_t j = ci + 1; j < req.cases.size(); ++j) {
        case_outcome skipped;
        skipped.name = req.cases[j].name;
        skipped.error = "skipped: context lost";
        report.cases.push_back(skipped);
    }
    report.fail(exit_code::context_lost, "case '" + rc.name + "' lost the CUDA context");
}

// One case of the fake kernel: C computed from the checked launch's inputs, stored as the
// markers say, the inputs dumped where asked, and a measured case timed.
case_outcome run_fake_case(const request& req, const run_case& rc,
                           const std::filesystem::path& request_file, double defines_factor) {
    const std::string& src = req.kernel.source;
    case_outcome out;
    out.name = rc.name;
    out.measured = rc.measure;
    const std::uint64_t launch =
        rc.launch_index_base + (rc.measure ? req.timing.checked_offset() : 0);
    fake_gemm g = fake_kernel(req, rc, launch);
    miscompute_c(g, req, rc);
    out.outputs.push_back(store_c(g, req, rc));
    for (std::size_t i = 0; i < rc.args.size(); ++i) {  // an inout c has its values too
        const kernel_arg& in = rc.args[i];
        if (!in.input_dump_file) continue;
        const auto v = i == 0   ? g.a
                       : i == 1 ? g.b
                                : values_of(in, values_launch(in, req, rc, launch));
        out.outputs.push_back(write_values(in, *in.input_dump_file, v, "input_dump"));
    }
    out.checked_launch_index = launch;
    out.inputs_changed = inputs_changed(rc, src);
    if (rc.measure)
        time_case(out, req, src, fake_case_ms(req, rc, g, request_file, defines_factor));
    out.status = case_run_status::ok;
    return out;
}

// Every case in order, until a marker or a case the fake cannot run ends the request.
void run_cases(harness_report& report, const request& req) {
    const std::string& src = req.kernel.source;
    const double defines_factor = define_factor(req);
    for (std::size_t ci = 0; ci < req.cases.size(); ++ci) {
        const run_case& rc = req.cases[ci];
        if (rc.measure && src.find("FAKE_INVALID_TIMING") != std::string::npos &&
            report.code == exit_code::ok) {
            report_invalid_timing(report, req, rc);
            continue;
        }
        if (src.find("FAKE_ILLEGAL_ADDRESS") != std::string::npos) {
            lose_context(report, req, ci);
            return;
        }
        if (const std::string why = fake_kernel_problem(req, rc); !why.empty()) {
            report.fail(exit_code::invalid_request, why);
            return;
        }
        report.cases.push_back(run_fake_case(req, rc, report.request_file, defines_factor));
    }
}

// A request that was read: everything its response says, in the real harness's order
// (device, vendor or compile, clocks, cases).
void serve_request(harness_report& report, const request& req, const std::string& response_path,
                   bool compile_only) {
    report.entry = req.kernel.entry;
    report.timing = req.timing;
    report.device = fake_device_fingerprint();
    if (!compile_only && env_ms("CUOPT_FAKE_BROKEN_DEVICE") == req.device &&
        env_ms("CUOPT_FAKE_BROKEN_DEVICE")) {
        report.fail(exit_code::context_lost, "fake: GPU " + std::to_string(req.device) +
                                                 " is broken (CUDA_ERROR_ECC_UNCORRECTABLE)");
        return;
    }
    if (req.vendor) {  // no kernel: every case is a vendor_call, computed on the CPU
        if (compile_only)
            report.mode = "compile_only";
        else
            run_vendor_request(report, req);
        return;
    }
    if (refuses_kernel(report, req, compile_only)) return;
    const std::string& src = req.kernel.source;
    act_on_process_markers(report.request_folder, src);
    report.compile = fake_compile_result(req);
    if (!report.compile->ok) {
        const compile_result& c = *report.compile;
        report.fail(exit_code::compile_error,
                    describe_compile_failure(req.kernel.shown_name(), c.arch, c.log,
                                             "field compile.log of " + response_path));
        return;
    }
    if (compile_only) {
        report.mode = "compile_only";
        if (!g_cubin_out.empty()) write_file_atomic(g_cubin_out, "FAKE-CUBIN\n" + src);
        return;
    }
    act_on_run_markers(src, response_path);
    describe_clocks(report, req, src);
    if (src.find("FAKE_NO_CASES") != std::string::npos) return;
    run_cases(report, req);
}

}  // namespace

int serve_one(const std::string& request_arg, const std::string& response_path, bool compile_only) {
    const auto start = std::chrono::steady_clock::now();
    log_worker_request(request_arg);
    harness_report report;
    report.confinement = g_confinement;
    report.request_file = std::filesystem::absolute(request_arg);
    report.request_folder = report.request_file.parent_path();
    request req;
    try {
        req = read_request(request_arg, {}, g_read_root);
    } catch (const std::exception& e) {
        report.fail(exit_code::invalid_request, e.what());
        return finish(report, start, response_path);
    }
    const fake_trace trace(req, report.request_folder, compile_only);  // its line comes last
    serve_request(report, req, response_path, compile_only);
    return finish(report, start, response_path);
}

}  // namespace cuopt::fake
