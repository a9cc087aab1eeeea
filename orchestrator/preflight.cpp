#include "orchestrator/preflight.hpp"

#include <filesystem>
#include <sstream>

#include "common/json_document.hpp"
#include "orchestrator/manifest.hpp"

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
