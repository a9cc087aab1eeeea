#include "orchestrator/commands/preflight.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/temporary_folder.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/commands/preflight_checks.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"
#include "orchestrator/evidence/instruction_audit.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using preflight::add_check;
using preflight::timeout_of;

bool preflight_report::passed() const {
    return first_failure() == nullptr;
}

namespace {

// DIR takes a file, proven by writing one that has no name (O_TMPFILE): a check killed midway,
// as serve's jobs are when the daemon is SIGKILLed, leaves nothing in the folder. Where the
// filesystem has no unnamed files, a mkdtemp folder (no name to plant) with a file in it,
// removed again.
void prove_writable(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        throw file_write_error(dir.string() + ": cannot write (" + std::strerror(errno) + ")",
                               errno);
    if (fd < 0) {
        const temporary_folder probe(".cuda-optimizer-write-test", dir);
        write_file_atomic(probe / "probe.json", "ok");
        return;
    }
    // fsync too: a full disk may show only there.
    errno = EIO;  // a short write sets none
    const bool wrote = ::write(fd, "ok", 2) == 2 && ::fsync(fd) == 0;
    const int error = errno;
    ::close(fd);
    if (!wrote)
        throw file_write_error(dir.string() + ": cannot write (" + std::strerror(error) + ")",
                               error);
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
        if (fs::create_directories(dir, ec); ec)
            throw file_write_error(dir.string() + ": cannot create (" + ec.message() + ")");
        prove_writable(dir);
    } catch (const std::exception& e) {
        why = e.what();
    }
    for (const fs::path& p : made) fs::remove(p, ec);
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        why = o.results_dir + " is a file, not a folder";
    add("results folder", why.empty(), why.empty() ? o.results_dir : "cannot write: " + why,
        "pass --results-dir DIR naming a folder you can write", exit_code::io_error);
}

// The driver and one device, through cuda-harness --device-info; with several (--devices) each
// device's check is named "GPU N".
void check_device(const optimizer_options& o, int device, process_runner& runner,
                  const add_check& add, preflight_report& r) {
    const process_result p =
        runner.run({o.harness, "--device-info", "--measure", "--device", std::to_string(device)},
                   timeout_of(o));
    const bool several = devices_of(o).size() > 1;
    const std::string gpu = several ? "GPU " + std::to_string(device) : "GPU";
    const bool first = device == devices_of(o).front();
    std::string line = p.stderr_text.substr(0, p.stderr_text.find('\n'));
    if (line.rfind("cuda-harness: ", 0) == 0) line = line.substr(14);
    if (p.exit_code == to_int(exit_code::no_driver)) {
        if (!first) return;  // said once
        add("CUDA driver", false, line,
            "install the NVIDIA driver (libcuda.so.1), or run on a machine with a GPU",
            exit_code::preflight_failed);
    } else if (p.exit_code == to_int(exit_code::no_device)) {
        if (first) add("CUDA driver", true, "loaded", "", exit_code::ok);
        add(gpu, false, line,
            std::string("pick an existing device with --device") + (several ? "s" : "") +
                ", or run on a machine with a GPU",
            exit_code::preflight_failed);
    } else if (p.exit_code != 0) {
        add(first ? "CUDA driver" : gpu, false,
            "cuda-harness --device-info: " + p.describe() + " " + line,
            "run cuda-harness --device-info by hand to see why", exit_code::preflight_failed);
    } else {
        if (first) add("CUDA driver", true, "loaded", "", exit_code::ok);
        try {
            const rapidjson::Document doc = parse_json(p.stdout_text, "device info");
            const json_field d(doc, "device info");
            add(gpu, true,
                d.text("name") + " (" + d.text("arch") + ", " +
                    std::to_string(d.integer<int>("sm_count")) + " SMs)",
                "", exit_code::ok);
            if (first) r.device = read_device_facts(p.stdout_text);
            r.devices.push_back(read_device_facts(p.stdout_text));
        } catch (const std::exception& e) {
            add(gpu, false, e.what(), "run cuda-harness --device-info by hand to see why",
                exit_code::preflight_failed);
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
        s << (c.skipped ? "  skip  " : c.passed ? "  ok    " : "  FAIL  ") << c.name;
        for (std::size_t i = c.name.size(); i < 20; ++i) s << ' ';
        s << c.detail << "\n";
        if (!c.passed && !c.fix.empty()) s << "        fix: " << c.fix << "\n";
    }
    return s.str();
}

preflight_report run_preflight(const optimizer_options& o, process_runner& runner,
                               const preflight_compiler& compiler) {
    preflight_report r;
    const add_check add = [&r](std::string name, bool ok, std::string detail, std::string fix,
                               exit_code code) {
        r.checks.push_back({std::move(name), ok, std::move(detail), std::move(fix), code});
        return ok;
    };
    // An imported problem without an initial kernel: PyTorch eager is the baseline, and the
    // kernel that hands PyTorch its inputs proves NVRTC in its place.
    const bool eager = o.initial_kernel.empty() && !o.torch_reference.empty();
    std::optional<temporary_folder> scratch;
    optimizer_options with_kernel = o;
    if (eager && !o.signature.empty()) {
        scratch.emplace("cuopt-preflight");
        with_kernel.initial_kernel = (scratch->path() / "pytorch-inputs.cu").string();
        write_file_atomic(with_kernel.initial_kernel, inputs_only_kernel(o.signature));
        add("initial kernel", true, "PyTorch eager (" + o.torch_reference + "'s forward)", "",
            exit_code::ok);
    }
    const bool kernel_ok = eager ? !with_kernel.initial_kernel.empty()
                                 : preflight::check_file(add, "initial kernel", o.initial_kernel,
                                                         "--initial-kernel", o.config);
    const bool manifest_ok =
        preflight::check_file(add, "manifest", o.input_cases, "--input-cases", o.config);
    if (!o.reference.empty())
        preflight::check_file(add, "reference", o.reference, "--reference", o.config);
    if (!o.torch_reference.empty())
        preflight::check_file(add, "PyTorch reference", o.torch_reference, "--torch-reference",
                              o.config);
    const std::optional<manifest> m =
        manifest_ok ? preflight::check_contract(o, add) : std::optional<manifest>();
    const auto sig = preflight::check_signature_flag(o, m, add);
    const std::string entry = kernel_ok ? preflight::check_entry(with_kernel, sig, add) : "";
    if (sig && o.torch_reference.empty()) preflight::check_reference_entry(o, *sig, add);
    if (m && kernel_ok && !eager) preflight::check_tunables(o.initial_kernel, *m, add);
    check_results_folder(o, add);
    if (!o.sanitizer.empty() && !o.no_sanitizer)
        add("sanitizer", find_compute_sanitizer(o.sanitizer) == fs::path(o.sanitizer), o.sanitizer,
            "no such file; pass the compute-sanitizer binary, or --no-sanitizer",
            exit_code::preflight_failed);
    if (!o.cuobjdump.empty())
        add("cuobjdump", !find_disassembler(o.cuobjdump).empty(), o.cuobjdump,
            "no such file; pass the CUDA toolkit's cuobjdump", exit_code::preflight_failed);
    const bool harness_ok = fs::is_regular_file(o.harness);
    add("harness", harness_ok, o.harness, "build it (tools/setup.sh) or pass --harness PATH",
        exit_code::preflight_failed);
    // A daemon job's own kernels are untrusted too: none reaches a harness the run refuses.
    const bool may_compile =
        harness_ok && (preflight::check_confinement(o, runner, add, r) || !o.daemon_job);
    if (may_compile && !entry.empty())
        preflight::check_compiles(with_kernel, runner, entry, m, compiler, add, r);
    if (harness_ok)
        for (int device : devices_of(o)) check_device(o, device, runner, add, r);
    return r;
}

}  // namespace cuopt
