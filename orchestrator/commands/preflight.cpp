#include "orchestrator/commands/preflight.hpp"

#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt {

namespace fs = std::filesystem;

bool preflight_report::passed() const { return first_failure() == nullptr; }

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
    auto add = [&r](std::string name, bool ok, std::string detail, std::string fix = "") {
        r.checks.push_back({std::move(name), ok, std::move(detail), std::move(fix)});
        return ok;
    };
    for (const auto& [name, path, flag] : {std::tuple{"initial kernel", o.initial_kernel, "--initial-kernel"},
                                           std::tuple{"manifest", o.input_cases, "--input-cases"}}) {
        if (path.empty()) add(name, false, std::string("not given"), std::string("pass ") + flag + " FILE");
        else add(name, fs::is_regular_file(path), path, std::string("no such file; check ") + flag);
    }
    if (!o.reference.empty()) add("reference", fs::is_regular_file(o.reference), o.reference, "no such file; check --reference");
    if (!o.input_cases.empty() && fs::is_regular_file(o.input_cases)) {
        try {
            const manifest m = read_manifest(o.input_cases);
            add("manifest valid", true, std::to_string(m.cases.size()) + " cases, " + std::to_string(m.args.size()) + " args");
        } catch (const std::exception& e) {
            add("manifest valid", false, e.what(), "correct the field named above (schemas/manifest.schema.json)");
        }
    }
    const bool harness_ok = fs::is_regular_file(o.harness);
    add("harness", harness_ok, o.harness, "build it (tools/setup.sh) or pass --harness PATH");
    if (harness_ok && fs::is_regular_file(o.initial_kernel)) {
        // NVRTC and the toolkit headers, proven by compiling the initial kernel (no GPU needed).
        const fs::path tmp = fs::temp_directory_path() / ("cuda-optimizer-preflight-" + std::to_string(::getpid()));
        fs::create_directories(tmp);
        const std::string source = read_text_file(o.initial_kernel);
        write_file_atomic(tmp / "kernel.cu", source);
        write_file_atomic(tmp / "request.json", R"({ "schema_version": 1, "kernel": { "source_file": "kernel.cu", "entry": ")" +
                                                   first_kernel_name(source) +
                                                   R"(" }, "cases": [ { "name": "compile", "launch": { "grid": [1], "block": [1] }, "args": [] } ] })");
        const process_result p = runner.run({o.harness, (tmp / "request.json").string(), "--compile-only", "--quiet"},
                                            std::chrono::seconds(120));
        std::string first_error;
        try {
            const rapidjson::Document d = parse_json(read_text_file(tmp / "response.json"), "preflight response");
            if (d["error"].IsString()) first_error = d["error"].GetString();
            if (d["compile"].IsObject()) {
                const std::string log = d["compile"]["log"].GetString();
                const auto pos = log.find("error");
                if (p.exit_code == 10 && pos != std::string::npos)
                    first_error = log.substr(log.rfind('\n', pos) + 1, log.find('\n', pos) - log.rfind('\n', pos) - 1);
            }
        } catch (const std::exception&) {
            first_error = p.describe();
        }
        add("CUDA toolkit", p.exit_code == 0, p.exit_code == 0 ? "NVRTC compiles the initial kernel" : first_error,
            p.exit_code == 10 ? "fix the initial kernel" : "install the CUDA toolkit (NVRTC) or set CUDA_HOME");
        std::error_code ec;
        fs::remove_all(tmp, ec);
    }
    if (harness_ok) {
        const process_result p = runner.run({o.harness, "--device-info", "--device", std::to_string(o.device)},
                                            std::chrono::seconds(60));
        std::string line = p.stderr_text.substr(0, p.stderr_text.find('\n'));
        if (line.rfind("cuda-harness: ", 0) == 0) line = line.substr(14);
        if (p.exit_code == 14) {
            add("CUDA driver", false, line, "install the NVIDIA driver (libcuda.so.1), or run on a machine with a GPU");
        } else if (p.exit_code == 15) {
            add("CUDA driver", true, "loaded");
            add("GPU", false, line, "pick an existing device with --device, or run on a machine with a GPU");
        } else if (p.exit_code != 0) {
            add("CUDA driver", false, "cuda-harness --device-info: " + p.describe() + " " + line,
                "run cuda-harness --device-info by hand to see why");
        } else {
            add("CUDA driver", true, "loaded");
            try {
                const rapidjson::Document d = parse_json(p.stdout_text, "device info");
                add("GPU", true, std::string(d["name"].GetString()) + " (" + d["arch"].GetString() + ", " +
                                     std::to_string(d["sm_count"].GetInt()) + " SMs)");
                r.device_json = p.stdout_text;
            } catch (const std::exception& e) {
                add("GPU", false, e.what(), "run cuda-harness --device-info by hand to see why");
            }
        }
    }
    return r;
}

}  // namespace cuopt
