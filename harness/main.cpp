// cuda-harness: read one request, compile it with NVRTC, launch and time it through
// the CUDA Driver API, dump the outputs, write one response. See README.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/process_life.hpp"
#include "common/tool_version.hpp"
#include "harness/confined_compile.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/cuda_driver.hpp"
#include "harness/device_measurement.hpp"
#include "harness/harness_options.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "harness/request_runner.hpp"
#include "harness/worker_loop.hpp"

namespace {

using cuopt::exit_code;
using cuopt::harness_options;

void define_options(CLI::App& app, harness_options& o) {
    app.add_option("request", o.request, "Request JSON to compile, run and time")
        ->type_name("REQUEST.json");
    app.add_option("--response", o.response,
                   "Where to write the response (default: response.json beside the request)")
        ->type_name("FILE");
    app.add_flag("--device-info", o.device_info, "Print the device fingerprint as JSON and exit");
    app.add_option("--device", o.device, "Device index for --device-info")
        ->check(cuopt::whole_number_from(0, 1023));
    app.add_flag("--measure", o.measure,
                 "With --device-info: add the measured copy bandwidth (cached per device and "
                 "driver) and the peak arithmetic rates");
    app.add_flag("--remeasure", o.remeasure,
                 "With --device-info: measure the bandwidth again instead of using the cache "
                 "(implies --measure)");
    app.add_flag("--compile-only", o.compile_only,
                 "Compile with NVRTC only; needs no GPU or driver");
    app.add_option("--arch", o.arch,
                   "Target for --compile-only, e.g. sm_90 (default: the device's, else sm_90)")
        ->check(CLI::Validator([](std::string& v) { return cuopt::check_arch(v); }, "sm_XY"));
    app.add_option("--cubin-out", o.cubin_out,
                   "With --compile-only: write the compiled cubin to FILE (for cuobjdump)")
        ->type_name("FILE");
    app.add_flag("--no-cache", o.no_cache,
                 "Always run NVRTC (and --measure); never read or write the cache");
    app.add_option(
           "--cache-dir", o.cache_dir,
           "Cache folder for cubins and --measure results (default: $CUDA_HARNESS_CACHE_DIR, else "
           "$XDG_CACHE_HOME/cuda-harness, else ~/.cache/cuda-harness)")
        ->type_name("DIR");
    app.add_flag("--quiet", o.quiet, "No summary line on stderr");
    app.add_flag("--no-stream-hold", o.no_stream_hold,
                 "Queue timed launches without holding the stream (automatic under ncu, which "
                 "serialises launches)");
    app.add_flag("--worker", o.worker,
                 "Serve many requests in one process: request paths (or {\"request\": PATH, "
                 "\"response\": PATH}) on stdin, one JSON reply line each on stdout; freed "
                 "device memory is zeroed; exits after a sticky CUDA error");
    app.add_option("--root", o.root,
                   "The folder tree this harness may read and write once it confines itself "
                   "(default: the request's folder; with --worker, the current folder: requests "
                   "outside it are refused)")
        ->type_name("DIR");
    app.add_flag("--unconfined", o.unconfined,
                 "Do not confine this process with Landlock (an #include or a compile option can "
                 "then read any file you can): for your own trusted kernels only");
    app.footer(R"(
Example:
  cuda-harness examples/harness/matmul/request.json

Exit codes: 0 ok; 10 the kernel does not compile (the log is in the response); 11 the request
is invalid (the message names the field); 12 a case failed with a recoverable CUDA error; 13 a
sticky CUDA error (illegal address, ...): the remaining cases skipped; 14 no CUDA driver; 15 no
such device; 64 bad command line; 70 internal error: a file that cannot be written (the message
names it and the system's reason), else a bug (please report it).
)");
    app.set_version_flag("--version", std::string("cuda-harness ") + cuopt::tool_version() +
                                          " (commit " + cuopt::tool_commit() + ")");
}

int print_device_info(const harness_options& o) {
    try {
        const cuopt::device_fingerprint device = cuopt::query_device(o.device);
        if (!o.measure && !o.remeasure) {
            std::cout << cuopt::write_device_json(device);
            return 0;
        }
        std::optional<std::filesystem::path> cache;
        if (!o.no_cache) cache = cuopt::cubin_cache::folder_for(o.cache_dir);
        const cuopt::device_measurement m = cuopt::measure_device(device, cache, o.remeasure);
        std::cout << cuopt::write_device_json(device, &m);
        return 0;
    } catch (const cuopt::no_driver_error& e) {
        std::cerr << "cuda-harness: " << e.what() << "\n";
        return to_int(exit_code::no_driver);
    } catch (const cuopt::no_device_error& e) {
        std::cerr << "cuda-harness: " << e.what() << "\n";
        return to_int(exit_code::no_device);
    } catch (const std::exception& e) {
        std::cerr << "cuda-harness: " << e.what() << "\n";
        return to_int(exit_code::internal_error);
    }
}

// --cubin-out without --compile-only, or request and response paths that cannot be served
// (cuopt::path_arguments_problem): usage errors, found before anything is compiled or written.
std::string check_file_arguments(const harness_options& o) {
    if (!o.cubin_out.empty() && !o.compile_only)
        return "--cubin-out writes the cubin of a --compile-only run: add --compile-only";
    return cuopt::path_arguments_problem(o, "--response");
}

// The one-shot harness's exception boundary: serve_request records every failure (a full disk
// too) in the response and its messages, and anything that still escapes is an internal error
// said in one line, never a std::terminate (SIGABRT) that says nothing.
int run(const harness_options& o) {
    try {
        const cuopt::served_request s = cuopt::serve_request(o);
        std::cerr << s.messages;
        return to_int(s.code);
    } catch (const std::exception& e) {
        std::cerr << "cuda-harness: internal_error: " << e.what() << "\n";
        return to_int(exit_code::internal_error);
    }
}

}  // namespace

int main(int argc, char** argv) {
    // A confined compile (harness/confined_compile.hpp): this program started by itself.
    // Exits without exit-time handlers (a sanitizer's leak check would need /proc, denied here).
    if (argc == 2 && std::string(argv[1]) == "--compile-child")
        std::_Exit(cuopt::serve_compile_child());
    cuopt::die_with_parent_if_asked();
    CLI::App app{"cuda-harness: compile, launch, time and dump one CUDA kernel request"};
    harness_options options;
    define_options(app, options);
    if (const auto done = cuopt::parse_command_line(app, argc, argv)) return *done;
    if (options.device_info) return print_device_info(options);
    if (options.worker) {
        if (!options.request.empty() || !options.response.empty()) {
            std::cerr << "cuda-harness: --worker reads its requests from stdin: give no "
                         "REQUEST.json and no --response on the command line\n";
            return to_int(exit_code::usage);
        }
        const int code = cuopt::serve_worker_on_stdio(options);
        std::cout.flush();
        std::fflush(nullptr);
        std::_Exit(code);
    }
    if (options.request.empty()) {
        std::cerr << "cuda-harness: expected REQUEST.json (or --device-info); see --help\n";
        return to_int(exit_code::usage);
    }
    if (const std::string bad = check_file_arguments(options); !bad.empty()) {
        std::cerr << "cuda-harness: " << bad << "\n";
        return to_int(exit_code::usage);
    }
    if (!cuopt::confine_harness_or_say(options)) return to_int(exit_code::internal_error);
    const int code = run(options);
    // Skip static destructors and the driver's exit-time teardown: everything is written.
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(code);
}
