#include "orchestrator/commands/preflight.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"

namespace cuopt {

namespace fs = std::filesystem;

bool preflight_report::passed() const {
    return first_failure() == nullptr;
}

namespace {

using add_check =
    std::function<bool(std::string name, bool ok, std::string detail, std::string fix)>;

std::chrono::milliseconds timeout_of(const optimizer_options& o) {
    return std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
}

// NVRTC and the toolkit headers, proven by compiling the initial kernel (no GPU needed).
void check_toolkit(const optimizer_options& o, process_runner& runner, const add_check& add) {
    const fs::path tmp =
        fs::temp_directory_path() / ("cuda-optimizer-preflight-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    const std::string source = read_text_file(o.initial_kernel);
    write_file_atomic(tmp / "kernel.cu", source);
    request req;
    req.kernel.source_name = "kernel.cu";
    req.kernel.entry = first_kernel_name(source);
    req.cases.emplace_back().name = "compile";
    write_file_atomic(tmp / "request.json", write_request_json(req));
    const process_result p = runner.run(
        {o.harness, (tmp / "request.json").string(), "--compile-only", "--quiet"}, timeout_of(o));
    const bool rejected = p.exit_code == to_int(exit_code::compile_error);
    std::string first_error;
    try {
        const harness_response response = read_response(tmp / "response.json");
        first_error = response.error;
        const std::string log = response.compile ? response.compile->log : "";
        const auto pos = log.find("error");
        if (rejected && pos != std::string::npos)
            first_error = log.substr(log.rfind('\n', pos) + 1,
                                     log.find('\n', pos) - log.rfind('\n', pos) - 1);
    } catch (const std::exception&) {
        first_error = p.describe();
    }
    add("CUDA toolkit", p.exit_code == 0,
        p.exit_code == 0 ? "NVRTC compiles the initial kernel" : first_error,
        rejected ? "fix the initial kernel" : "install the CUDA toolkit (NVRTC) or set CUDA_HOME");
    std::error_code ec;
    fs::remove_all(tmp, ec);
}

// The results folder can be made and takes a file: proven by doing it, then undoing it
// (folders this check made are removed again, so a check leaves no trace).
void check_results_folder(const optimizer_options& o, const add_check& add) {
    const fs::path dir = fs::absolute(o.results_dir);
    std::vector<fs::path> made;  // innermost first
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && !fs::exists(p, ec) && p != p.parent_path();
         p = p.parent_path())
        made.push_back(p);
    std::string why;
    try {
        write_file_atomic(dir / (".cuda-optimizer-write-test-" + std::to_string(::getpid())), "ok");
        fs::remove(dir / (".cuda-optimizer-write-test-" + std::to_string(::getpid())), ec);
    } catch (const std::exception& e) {
        why = e.what();
    }
    for (const fs::path& p : made) fs::remove(p, ec);
    add("results folder", why.empty(), why.empty() ? o.results_dir : "cannot write: " + why,
        "pass --results-dir DIR in a folder you can write");
}

// --holdout-cases: it reads, and its args agree with the manifest's.
void check_holdout(const optimizer_options& o, const manifest& m, const add_check& add) {
    if (o.holdout_cases.empty()) return;
    try {
        const manifest h = read_holdout_manifest(o.holdout_cases, m);
        add("holdout valid", true, std::to_string(h.cases.size()) + " hidden case(s)", "");
    } catch (const std::exception& e) {
        add("holdout valid", false, e.what(),
            "correct the field named above (manifest format; it may give only cases)");
    }
}

// The driver and the device, through cuda-harness --device-info.
void check_device(const optimizer_options& o, process_runner& runner, const add_check& add,
                  preflight_report& r) {
    const process_result p =
        runner.run({o.harness, "--device-info", "--measure", "--device", std::to_string(o.device)},
                   timeout_of(o));
    std::string line = p.stderr_text.substr(0, p.stderr_text.find('\n'));
    if (line.rfind("cuda-harness: ", 0) == 0) line = line.substr(14);
    if (p.exit_code == to_int(exit_code::no_driver)) {
        add("CUDA driver", false, line,
            "install the NVIDIA driver (libcuda.so.1), or run on a machine with a GPU");
    } else if (p.exit_code == to_int(exit_code::no_device)) {
        add("CUDA driver", true, "loaded", "");
        add("GPU", false, line,
            "pick an existing device with --device, or run on a machine with a GPU");
    } else if (p.exit_code != 0) {
        add("CUDA driver", false, "cuda-harness --device-info: " + p.describe() + " " + line,
            "run cuda-harness --device-info by hand to see why");
    } else {
        add("CUDA driver", true, "loaded", "");
        try {
            const rapidjson::Document d = parse_json(p.stdout_text, "device info");
            if (!d.IsObject() || !d.HasMember("name") || !d["name"].IsString() ||
                !d.HasMember("arch") || !d["arch"].IsString() || !d.HasMember("sm_count") ||
                !d["sm_count"].IsInt())
                throw json_error("device info: expected an object with name, arch and sm_count");
            add("GPU", true,
                std::string(d["name"].GetString()) + " (" + d["arch"].GetString() + ", " +
                    std::to_string(d["sm_count"].GetInt()) + " SMs)",
                "");
            r.device_json = p.stdout_text;
        } catch (const std::exception& e) {
            add("GPU", false, e.what(), "run cuda-harness --device-info by hand to see why");
        }
    }
}

}  // namespace

const preflight_check* preflight_report::first_failure() const {
    for (const auto& c : checks)
        if (!c.passed) return &c;
    return nullptr;
}

std::string preflight_report::table() const {
    std::ostringstream s;
    for (const auto& c : checks) {
        s << (c.passed ? "  ok    " : "  FAIL  ") << c.name;
        for (std::size_t i = c.name.size(); i < 16; ++i) s << ' ';
        s << c.detail << "\n";
        if (!c.passed && !c.fix.empty()) s << "        fix: " << c.fix << "\n";
    }
    return s.str();
}

preflight_report run_preflight(const optimizer_options& o, process_runner& runner) {
    preflight_report r;
    const add_check add = [&r](std::string name, bool ok, std::string detail, std::string fix) {
        r.checks.push_back({std::move(name), ok, std::move(detail), std::move(fix)});
        return ok;
    };
    for (const auto& [name, path, flag] :
         {std::tuple{"initial kernel", o.initial_kernel, "--initial-kernel"},
          std::tuple{"manifest", o.input_cases, "--input-cases"}}) {
        if (path.empty())
            add(name, false, std::string("not given"), std::string("pass ") + flag + " FILE");
        else
            add(name, fs::is_regular_file(path), path, std::string("no such file; check ") + flag);
    }
    if (!o.reference.empty())
        add("reference", fs::is_regular_file(o.reference), o.reference,
            "no such file; check --reference");
    if (!o.input_cases.empty() && fs::is_regular_file(o.input_cases)) {
        try {
            const manifest m = read_manifest(o.input_cases);
            add("manifest valid", true,
                std::to_string(m.cases.size()) + " cases, " + std::to_string(m.args.size()) +
                    " args",
                "");
            check_holdout(o, m, add);
        } catch (const std::exception& e) {
            add("manifest valid", false, e.what(),
                "correct the field named above (schemas/manifest.schema.json)");
        }
    }
    check_results_folder(o, add);
    if (!o.sanitizer.empty() && !o.no_sanitizer)
        add("sanitizer", find_compute_sanitizer(o.sanitizer) == fs::path(o.sanitizer), o.sanitizer,
            "no such file; pass the compute-sanitizer binary, or --no-sanitizer");
    const bool harness_ok = fs::is_regular_file(o.harness);
    add("harness", harness_ok, o.harness, "build it (tools/setup.sh) or pass --harness PATH");
    if (harness_ok && fs::is_regular_file(o.initial_kernel)) check_toolkit(o, runner, add);
    if (harness_ok) check_device(o, runner, add, r);
    return r;
}

}  // namespace cuopt
