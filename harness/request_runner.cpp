#include "harness/request_runner.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>

#include "common/device_facts.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/message_text.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/cuda_driver.hpp"
#include "harness/device_session.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/request_reader.hpp"
#include "harness/run_phases.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_fallback_arch = "sm_90";

// What a one-shot harness prints on stderr once the response is written: the status, and
// each measured case's median.
std::string summary_lines(const harness_report& report, const std::filesystem::path& response) {
    std::string text = "cuda-harness: " + std::string(k_response_statuses.name(report.status)) +
                       " (exit " + std::to_string(to_int(report.code)) + ", " +
                       exit_code_name(report.code) + "); response: " + response.string() + "\n";
    for (const auto& c : report.cases)
        if (c.status == case_run_status::ok && c.measured) {
            char line[256];
            std::snprintf(line, sizeof line, "  %-24s median %.6f ms over %d launches\n",
                          c.name.c_str(), c.stats_ms.median, c.iterations);
            text += line;
        }
    return text;
}

std::optional<request> read_phase(const harness_options& o, harness_report& report) {
    try {
        request req = read_request(o.request, {response_path(o)}, harness_root(o));
        report.upstream_layout = req.upstream_layout;
        report.entry = req.vendor ? k_vendor_libraries.name(*req.vendor) : req.kernel.entry;
        report.timing = req.timing;
        return req;
    } catch (const json_error& e) {
        report.fail(exit_code::invalid_request, e.what());
    } catch (const response_overlap_error& e) {
        report.fail(exit_code::usage, e.what());
        report.response_withheld = true;
    } catch (const fs::filesystem_error& e) {
        report.fail(exit_code::invalid_request, e.what());
    }
    return std::nullopt;
}

// The device the request names, or why there is none (recorded, not thrown).
std::optional<device_fingerprint> device_phase(int index, std::string* why, exit_code* code) {
    try {
        return query_device(index);
    } catch (const no_driver_error& e) {
        *why = e.what();
        *code = exit_code::no_driver;
    } catch (const no_device_error& e) {
        *why = e.what();
        *code = exit_code::no_device;
    }
    return std::nullopt;
}

// --cubin-out: the compiled cubin, for a disassembler (the optimizer's instruction audit).
bool write_cubin(const compile_result& c, const harness_options& o, harness_report& report) {
    if (o.cubin_out.empty() || !o.compile_only) return true;
    try {
        write_file_atomic(o.cubin_out, c.cubin.data(), c.cubin.size());
        return true;
    } catch (const std::exception& e) {
        report.fail(exit_code::internal_error, std::string("--cubin-out: ") + e.what());
        return false;
    }
}

bool compile_phase(const request& req, const std::string& arch, const harness_options& o,
                   harness_report& report) {
    std::unique_ptr<cubin_cache> cache;
    if (!o.no_cache) cache = std::make_unique<cubin_cache>(cubin_cache::folder_for(o.cache_dir));
    const bool confined = compiles_confined();
    report.compile =
        compile_cached(req.kernel, arch, cache.get(), confined ? &report.request_folder : nullptr);
    const compile_result& c = *report.compile;
    if (c.entry_missing) {
        report.fail(exit_code::invalid_request,
                    req.file.filename().string() +
                        ": field kernel.entry: no __global__ function '" + req.kernel.entry +
                        "' in " + req.kernel.shown_name());
        return false;
    }
    if (!c.ok) {
        report.fail(exit_code::compile_error,
                    !c.problem.empty() ? c.problem
                                       : describe_compile_failure(
                                             req.kernel.shown_name(), arch, c.log,
                                             "field compile.log of " + response_path(o).string()));
        return false;
    }
    return write_cubin(c, o, report);
}

// Writes the response file; "" when it is written, else the one line saying why not ("cannot
// write PATH: No space left on device (errno 28)").
std::string write_response(const fs::path& response, const harness_report& report) {
    try {
        write_file_atomic(response, write_response_json(report));
        return "";
    } catch (const file_write_error& e) {
        return write_failure_line(response, e);
    } catch (const std::exception& e) {  // the document itself could not be made (memory)
        return "cannot write " + response.string() + ": " + e.what();
    }
}

}  // namespace

harness_report run_request(const harness_options& o) {
    const auto start = std::chrono::steady_clock::now();
    harness_report report;
    report.request_file = fs::absolute(o.request);
    report.request_folder = report.request_file.parent_path();
    report.mode = o.compile_only ? "compile_only" : "run";
    report.confinement = process_confinement();
    auto phase_start = start;
    // Closes the current phase: its name and the milliseconds since the previous one.
    auto lap = [&](const char* name) {
        const auto now = std::chrono::steady_clock::now();
        report.phases_ms.emplace_back(
            name, std::chrono::duration<double, std::milli>(now - phase_start).count());
        phase_start = now;
    };
    auto finish = [&] {
        stop_busy_clock(report);
        report.wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return report;
    };
    // NVML starts on its own thread while the driver starts (nvmlInit takes ~8 ms on the
    // H200); the cases wait for it only if it is still loading when they start. (Loading
    // libcupti the same way saved nothing measurable: its ~12 ms is the subscription.)
    std::future<void> nvml;
    try {
        const std::optional<request> req = read_phase(o, report);
        lap("read_request");
        if (!req) return finish();
        if (!o.compile_only && any_measured(*req))
            nvml = std::async(std::launch::async, [] { load_gpu_monitor(); });

        // The device decides the arch; without one, still compile (for --arch or sm_90)
        // so a bad kernel is reported as such before "no driver". A vendor request has
        // nothing to compile.
        std::string why;
        exit_code device_code = exit_code::ok;
        if (!o.compile_only || (o.arch.empty() && !req->vendor))
            report.device = device_phase(req->device, &why, &device_code);
        lap("driver_init");
        const std::string given = !o.arch.empty() ? o.arch
                                  : report.device ? report.device->arch()
                                                  : k_fallback_arch;
        const std::string arch = req->kernel.arch_specific ? arch_specific_target(given) : given;
        const bool compiled = req->vendor || compile_phase(*req, arch, o, report);
        if (!req->vendor) lap("compile");
        if (!compiled || o.compile_only) return finish();
        if (!report.device) {
            report.fail(device_code, why);
            return finish();
        }

        device_session::on(req->device, *report.device);  // the context, current from here on
        if (req->vendor)
            run_vendor_phases(*req, o, report, lap);
        else
            run_kernel_phases(*req, o, report, lap);
    } catch (const cuda_error& e) {
        report.fail(e.sticky() ? exit_code::context_lost : exit_code::case_failed, e.what());
    } catch (const std::exception& e) {
        report.fail(exit_code::internal_error, e.what());
    }
    return finish();
}

namespace {

// Whether what lies at `response` may be replaced: nothing, a link (the atomic rename
// replaces the link, never its target), an empty file or an earlier response. "" when it may;
// anything it cannot look at or read is refused, never replaced unseen.
std::string replaced_file_problem(const fs::path& response, const char* response_flag) {
    const std::string named = std::string(response_flag) + " " + quote_value(response.string());
    struct stat st {};
    if (::lstat(response.c_str(), &st) != 0)
        return errno == ENOENT ? ""
                               : named + ": cannot look at it (" + std::strerror(errno) +
                                     "); expected a new path or an earlier response";
    if (S_ISLNK(st.st_mode)) return "";
    if (!S_ISREG(st.st_mode))
        return named + " exists and is no regular file; expected a new path or an earlier response";
    if (st.st_size == 0) return "";
    const untrusted_read r = read_untrusted_file(response, 64u << 20);
    if (r.refused == untrusted_read::refusal::cannot_open)
        return named + " exists and cannot be read (" + std::strerror(r.error) +
               ") to see that it is an earlier response; expected a new path or an earlier one";
    if (r.refused == untrusted_read::refusal::none) {
        rapidjson::Document doc;
        if (try_parse_json(doc, r.text).empty() && doc.IsObject() && doc.HasMember("tool") &&
            doc["tool"].IsObject() && doc["tool"].HasMember("name") &&
            doc["tool"]["name"] == "cuda-harness" && doc.HasMember("status"))
            return "";
    }
    return named +
           " exists and is not an earlier cuda-harness response; the harness replaces "
           "only its own responses, expected a new path or an earlier response";
}

}  // namespace

std::string path_arguments_problem(const harness_options& o, const char* response_flag) {
    std::error_code ec;
    // Every path is shown quoted and cut (quote_value): a worker line's paths are anyone's text.
    if (fs::is_directory(o.request, ec))
        return quote_value(o.request) +
               ": is a directory; expected REQUEST.json, a request file such as " +
               quote_value((fs::path(o.request) / "request.json").string());
    const fs::path response = response_path(o);
    const std::string response_named =
        (o.response.empty() ? std::string("the response path") : std::string(response_flag)) + " " +
        quote_value(response.string());
    if (fs::is_directory(response, ec))
        return response_named + ": is a directory; expected a file path such as " +
               quote_value((response / "response.json").string());
    const fs::path root = harness_root(o), request = resolved_path(o.request);
    if (!o.unconfined && !lies_within(request, root))
        return quote_value(o.request) + ": leads to " + quote_value(request.string()) +
               ", outside " + root.string() +
               ", the folder the harness reads (--root); expected the request's own path, or "
               "--root naming a folder that holds it";
    if (resolved_path(response) == request)
        return response_named + " is the request itself; expected a response path of its own";
    return replaced_file_problem(response, response_flag);
}

served_request serve_request(const harness_options& o) {
    const auto start = std::chrono::steady_clock::now();
    served_request s;
    const std::filesystem::path response = response_path(o);
    const harness_report report = run_request(o);
    s.code = report.code;
    s.status = k_response_statuses.name(report.status);
    s.retire_reason = report.retire_reason;
    if (report.response_withheld) {
        s.status = "usage";
        s.messages = "cuda-harness: usage: " + report.error + "; no response written\n";
    } else if (const std::string failed = write_response(response, report); !failed.empty()) {
        // The caller has no response to read: this line is all it gets, so it is the only one.
        s.code = exit_code::internal_error;
        s.status = k_response_statuses.name(status_for(s.code));
        s.messages = "cuda-harness: " + s.status + ": " + failed;
        if (report.code != exit_code::ok)
            s.messages += " (the request itself ended " +
                          std::string(k_response_statuses.name(report.status)) + ")";
        s.messages += "\n";
    } else {
        if (!report.error.empty())
            s.messages += "cuda-harness: " + s.status + ": " + report.error + "\n";
        if (!o.quiet) s.messages += summary_lines(report, response);
    }
    s.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return s;
}

}  // namespace cuopt
