#include "orchestrator/commands/preflight.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/temporary_folder.hpp"
#include "orchestrator/commands/confinement_policy.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/contract/manifest.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/contract/response_reader.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"
#include "orchestrator/evidence/instruction_audit.hpp"
#include "orchestrator/evidence/sanitizer_report.hpp"

namespace cuopt {

namespace fs = std::filesystem;

bool preflight_report::passed() const {
    return first_failure() == nullptr;
}

namespace {

using add_check = std::function<bool(std::string name, bool ok, std::string detail, std::string fix,
                                     exit_code code)>;

std::chrono::milliseconds timeout_of(const optimizer_options& o) {
    return milliseconds_of(o.timeout_s);
}

struct compile_outcome {
    int exit = 0;
    std::string first_error;  // the log's first error line, or why the harness failed
    confinement confined;     // how the harness that compiled it was confined
};

using kernel_defines = std::vector<std::pair<std::string, std::string>>;

// One source through `harness` --compile-only (NVRTC; no GPU needed), named as the user's file
// so an error line points at it.
compile_outcome compile_only(const optimizer_options& o, process_runner& runner,
                             const std::string& harness, const std::string& file,
                             const std::string& entry, const kernel_defines& defines = {}) {
    // mkdtemp (0700, a name nobody can predict): $TMPDIR is shared, and a folder another user
    // made there beforehand could hold links where our files go.
    const temporary_folder scratch("cuda-optimizer-preflight");
    const fs::path& tmp = scratch.path();
    const std::string name = fs::path(file).filename().string();
    write_file_atomic(tmp / name, read_text_file(file));
    request req;
    req.kernel.source_name = name;
    req.kernel.entry = entry;
    req.kernel.defines = defines;
    req.cases.emplace_back().name = "compile";
    write_file_atomic(tmp / "request.json", write_request_json(req));
    const process_result p = runner.run(
        {harness, (tmp / "request.json").string(), "--compile-only", "--quiet"}, timeout_of(o));
    compile_outcome out{p.exit_code, "", {}};
    try {
        const harness_response response = read_response(tmp / "response.json");
        out.confined = response.confinement;
        out.first_error = response.error;
        const std::string log = response.compile ? response.compile->log : "";
        const auto pos = log.find("error");
        if (p.exit_code == to_int(exit_code::compile_error) && pos != std::string::npos)
            out.first_error = log.substr(log.rfind('\n', pos) + 1,
                                         log.find('\n', pos) - log.rfind('\n', pos) - 1);
    } catch (const std::exception&) {
        out.first_error = p.describe();
        out.confined.reason = "cuda-harness " + p.describe() + " and wrote no readable response";
    }
    return out;
}

// The harness's confinement, from its compile of an empty kernel of our own (so that it is
// known before any kernel of the user's or a job's reaches the harness), and whether the run
// may go on with it.
bool check_confinement(const optimizer_options& o, process_runner& runner, const add_check& add,
                       preflight_report& r) {
    const temporary_folder probe("cuda-optimizer-probe");
    write_file_atomic(probe / "confinement_probe.cu",
                      "extern \"C\" __global__ void cuopt_confinement_probe() {}\n");
    const confinement& c = r.harness_confinement =
        compile_only(o, runner, o.harness, (probe / "confinement_probe.cu").string(),
                     "cuopt_confinement_probe")
            .confined;
    if (const std::string refused = unconfined_refusal(c, o); !refused.empty())
        return add("confinement", false, refused, unconfined_fix(o), exit_code::unconfined_refused);
    return add("confinement", true,
               c.confined() ? "Landlock ABI " + std::to_string(c.abi) +
                                  ": a kernel reaches only its request folder, the CUDA toolkit "
                                  "and the driver"
                            : "none: " + unconfined_warning(c, o),
               "", exit_code::ok);
}

// The initial kernel's -D defines as optimize compiles it: each tunable's first value, sorted
// by name (attempt_evaluator::make_request); the reference is compiled with the same.
kernel_defines initial_defines(const std::optional<manifest>& m) {
    kernel_defines out;
    if (m)
        for (const auto& [name, value] : m->default_tunables())
            out.emplace_back(name, std::to_string(value));
    return out;
}

// The reference's entry: the initial kernel's where it defines one of that name, else its first.
std::string reference_entry(const std::string& reference, const std::string& entry) {
    const auto names = kernel_names(read_text_file(reference));
    if (std::find(names.begin(), names.end(), entry) != names.end()) return entry;
    return names.empty() ? "" : names.front();
}

// A harness that refuses the request itself (exit 11 before it compiles anything): a stand-in
// that simulates one kernel says which it cannot run. False when it refused.
bool check_harness_takes(const compile_outcome& k, const add_check& add) {
    if (k.exit != to_int(exit_code::invalid_request)) return true;
    return add("harness runs it", false, k.first_error,
               "run it where the harness can: on a GPU, with cuda-harness",
               exit_code::preflight_failed);
}

// Rows for what was not compiled, and why (check without a harness that compiles).
void add_not_compiled(const optimizer_options& o, const std::string& why, preflight_report& r) {
    for (const char* name : {"initial compiles", "reference compiles"}) {
        if (name[0] == 'r' && o.reference.empty()) continue;
        r.checks.push_back({name, true, "not compiled: " + why, "", exit_code::ok, true});
    }
}

// Whether `name` appears as a whole identifier in `text`.
bool names(const std::string& text, const std::string& name) {
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        const auto word = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        if ((at == 0 || !word(text[at - 1])) &&
            (at + name.size() == text.size() || !word(text[at + name.size()])))
            return true;
    }
    return false;
}

// Every launch expression of the manifest, one per line.
std::string launch_text(const manifest& m) {
    std::string out;
    auto add = [&out](const launch_expressions& l) {
        for (const auto& e : l.grid) out += e + "\n";
        for (const auto& e : l.block) out += e + "\n";
        out += l.dynamic_shared_bytes + "\n";
    };
    add(m.launch);
    if (m.reference_launch) add(*m.reference_launch);
    for (const manifest_case& c : m.cases)
        if (c.launch) add(*c.launch);
    return out;
}

// `source` without its comments (/* */ and //), each comment's newlines kept so line numbers
// stay; string literals are not told apart (a kernel's tunables do not live in them).
std::vector<std::string> code_lines(const std::string& source) {
    std::string code;
    for (std::size_t i = 0; i < source.size(); ++i) {
        if (source.compare(i, 2, "/*") == 0) {
            const std::size_t end = source.find("*/", i + 2);
            const std::size_t stop = end == std::string::npos ? source.size() : end + 2;
            code.append(static_cast<std::size_t>(
                            std::count(source.begin() + i, source.begin() + stop, '\n')),
                        '\n');
            i = stop - 1;
        } else if (source.compare(i, 2, "//") == 0) {
            i = std::min(source.find('\n', i), source.size()) - 1;
        } else {
            code += source[i];
        }
    }
    std::vector<std::string> lines;
    std::istringstream in(code);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The kernel's own default for `name`: the integer of a `#define NAME VALUE` right after
// `#ifndef NAME` (what -DNAME=... overrides), with its 1-based line; nullopt where there is
// none or its value is no plain integer literal (an expression is left unchecked).
std::optional<std::pair<long long, std::size_t>> guarded_default(
    const std::vector<std::string>& lines, const std::string& name) {
    static const std::regex k_ifndef(R"(^\s*#\s*ifndef\s+(\w+)\s*$)");
    static const std::regex k_define(
        R"(^\s*#\s*define\s+(\w+)\s+\(?\s*(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))[uUlL]*\s*\)?\s*$)");
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        std::smatch g, d;
        if (!std::regex_match(lines[i], g, k_ifndef) || g[1] != name) continue;
        if (!std::regex_match(lines[i + 1], d, k_define) || d[1] != name) continue;
        const std::string text = d[2];
        errno = 0;
        char* end = nullptr;
        const long long value = std::strtoll(text.c_str(), &end, 0);  // 0x10, 010 as C reads them
        if (errno == 0 && end && *end == '\0') return std::pair{value, i + 2};
    }
    return std::nullopt;
}

// The manifest's tunables against the initial kernel's source (comments left out): each is read
// by the kernel or the launch, and where the kernel gives one a default inside its own
// `#ifndef` guard, that default is its first value (the first configuration is the initial
// kernel as written, what best.cu and the guide rely on).
void check_tunables(const std::string& kernel, const manifest& m, const add_check& add) {
    if (m.tunables.empty()) return;
    const std::vector<std::string> lines = code_lines(read_text_file(kernel));
    const std::string launches = launch_text(m);
    const std::string file = fs::path(kernel).filename().string();
    for (const auto& [name, values] : m.tunables) {
        // Its own guard, default and #undef are no reads of it; any other line naming it is
        // (code, #if, another macro's definition).
        const std::regex own(R"(^\s*#\s*(ifndef|ifdef|undef|define)\s+)" + name + R"(\b.*)");
        if (const auto d = guarded_default(lines, name); d && d->first != values.front())
            return void(add("tunables", false,
                            "'" + name + "': first value " + std::to_string(values.front()) +
                                " but " + file + " line " + std::to_string(d->second) +
                                " #defines " + name + " " + std::to_string(d->first),
                            "make the kernel's default the tunable's first value: the first "
                            "configuration is the initial kernel as written",
                            exit_code::invalid_request));
        bool read = names(launches, name);
        for (const std::string& line : lines)
            if (names(line, name) && !std::regex_match(line, own)) read = true;
        if (!read)
            return void(add("tunables", false,
                            "'" + name + "' is read by neither " + file + " nor the launch",
                            "drop it from the manifest's tunables, or use it in the kernel",
                            exit_code::invalid_request));
    }
    add("tunables", true,
        std::to_string(m.tunables.size()) +
            " read by the kernel or the launch, first values "
            "its defaults",
        "", exit_code::ok);
}

// How many configurations the tunables span (saturating at 2^63).
std::uint64_t configuration_count(const manifest& m) {
    std::uint64_t n = 1;
    for (const auto& [name, values] : m.tunables)
        n = n > (std::uint64_t{1} << 62) / std::max<std::size_t>(values.size(), 1)
                ? std::uint64_t{1} << 63
                : n * values.size();
    return n;
}

constexpr std::uint64_t k_max_configurations = 10000;

// check --all-configurations: the initial kernel compiled in every configuration but the first
// (compiled already), in order; the first that fails is the row's detail.
void check_every_configuration(const optimizer_options& o, process_runner& runner,
                               const std::string& harness, const std::string& entry,
                               const manifest& m, std::uint64_t count, const add_check& add) {
    if (count > k_max_configurations) {
        add("every configuration", false,
            std::to_string(count) + " configurations, over the " +
                std::to_string(k_max_configurations) + " --all-configurations compiles",
            "narrow the manifest's tunables, or check without --all-configurations",
            exit_code::usage);
        return;
    }
    std::vector<std::size_t> at(m.tunables.size(), 0);
    std::uint64_t refused = 0;
    std::string first_refused;
    for (std::uint64_t i = 1; i < count; ++i) {
        std::size_t t = 0;  // the next configuration: the last tunable counts fastest
        for (auto it = m.tunables.rbegin(); it != m.tunables.rend(); ++it, ++t) {
            std::size_t& digit = at[at.size() - 1 - t];
            if (++digit < it->second.size()) break;
            digit = 0;
        }
        kernel_defines defines;
        std::string shown;
        std::size_t j = 0;
        for (const auto& [name, values] : m.tunables) {
            defines.emplace_back(name, std::to_string(values[at[j++]]));
            shown += (shown.empty() ? "" : " ") + name + "=" + defines.back().second;
        }
        const compile_outcome k =
            compile_only(o, runner, harness, o.initial_kernel, entry, defines);
        // A kernel's own static_assert refusing a combination is its rule, as the search
        // treats it (a compile error that costs no GPU time); any other error is a bug.
        if (k.exit == to_int(exit_code::compile_error) &&
            k.first_error.find("static assertion failed") != std::string::npos) {
            if (refused++ == 0) first_refused = shown;
        } else if (k.exit != 0) {
            add("every configuration", false, shown + ": " + k.first_error,
                "fix the kernel for that configuration, or drop the value from the tunables",
                exit_code::initial_failed);
            return;
        }
    }
    add("every configuration", true,
        std::to_string(count - refused) + " of " + std::to_string(count) + " compile" +
            (refused ? "; " + std::to_string(refused) +
                           " refused by the kernel's own static_assert (the first: " +
                           first_refused + ")"
                     : std::string()),
        "", exit_code::ok);
}

// NVRTC and the toolkit headers, proven by compiling the initial kernel (with its tunables'
// first values, as optimize does) through the compiling harness; then the reference. Where that
// harness is not the run's own, the run's harness is asked first whether it takes the kernel.
void check_compiles(const optimizer_options& o, process_runner& runner, const std::string& entry,
                    const std::optional<manifest>& m, const preflight_compiler& pc,
                    const add_check& add, preflight_report& r) {
    const kernel_defines defines = initial_defines(m);
    const std::string harness = pc.harness.empty() ? o.harness : pc.harness;
    std::error_code ec;
    const bool own =
        pc.unavailable.empty() && (harness == o.harness || fs::equivalent(harness, o.harness, ec));
    if (!own && !check_harness_takes(
                    compile_only(o, runner, o.harness, o.initial_kernel, entry, defines), add))
        return;
    if (!pc.unavailable.empty()) return add_not_compiled(o, pc.unavailable, r);
    const compile_outcome k = compile_only(o, runner, harness, o.initial_kernel, entry, defines);
    if (own && !check_harness_takes(k, add)) return;
    const bool rejected = k.exit == to_int(exit_code::compile_error);
    if (k.exit != 0 && !rejected && !own)
        return add_not_compiled(o, harness + " cannot compile: " + k.first_error, r);
    add("CUDA toolkit", k.exit == 0 || rejected,
        k.exit == 0 || rejected ? "NVRTC compiles" + (own ? "" : " (through " + harness + ")")
                                : k.first_error,
        "install the CUDA toolkit 12.4 or newer (NVRTC), or set CUDAToolkit_ROOT when building",
        exit_code::preflight_failed);
    if (k.exit != 0 && !rejected) return;
    const std::uint64_t configurations = m ? configuration_count(*m) : 1;
    add("initial compiles", k.exit == 0,
        k.exit != 0 ? k.first_error
        : configurations > 1 && !o.all_configurations
            ? o.initial_kernel + " (the first of " + std::to_string(configurations) +
                  " configurations; --all-configurations compiles every one)"
            : o.initial_kernel,
        "fix the initial kernel", exit_code::initial_failed);
    if (k.exit == 0 && o.all_configurations && m)
        check_every_configuration(o, runner, harness, entry, *m, configurations, add);
    if (o.reference.empty() || !fs::is_regular_file(o.reference)) return;
    const compile_outcome ref =
        compile_only(o, runner, harness, o.reference, reference_entry(o.reference, entry), defines);
    add("reference compiles", ref.exit == 0, ref.exit == 0 ? o.reference : ref.first_error,
        "fix the reference kernel", exit_code::reference_failed);
}

// The kernel's entry: the signature's name, which the initial kernel must define, else the
// first __global__ function in it. "" when there is none (the check failed).
std::string check_entry(const optimizer_options& o, const std::optional<kernel_signature>& sig,
                        const add_check& add) {
    const auto names = kernel_names(read_text_file(o.initial_kernel));
    if (names.empty()) {
        add("kernel entry", false, "no __global__ function found in " + o.initial_kernel,
            "write the kernel as a __global__ void function (and pass --signature naming it)",
            exit_code::invalid_request);
        return "";
    }
    if (!sig)
        return add("kernel entry", true, names.front(), "", exit_code::ok) ? names.front() : "";
    if (std::find(names.begin(), names.end(), sig->entry) == names.end()) {
        std::string found;
        for (const std::string& n : names) found += (found.empty() ? "" : ", ") + n;
        add("kernel entry", false,
            "--signature names '" + sig->entry + "' but " + o.initial_kernel +
                " defines no __global__ function of that name (it has: " + found + ")",
            "make --signature and the kernel agree on the function's name",
            exit_code::invalid_request);
        return "";
    }
    add("kernel entry", true, sig->entry, "", exit_code::ok);
    return sig->entry;
}

// With --signature the run launches the reference by the signature's name too (as optimize
// does): a reference that defines no kernel of that name would fail only on a GPU (exit 22).
void check_reference_entry(const optimizer_options& o, const kernel_signature& sig,
                           const add_check& add) {
    if (o.reference.empty() || !fs::is_regular_file(o.reference)) return;
    const auto names = kernel_names(read_text_file(o.reference));
    if (std::find(names.begin(), names.end(), sig.entry) != names.end()) return;
    std::string found;
    for (const std::string& n : names) found += (found.empty() ? "" : ", ") + n;
    add("reference entry", false,
        "--signature names '" + sig.entry + "' but " + o.reference +
            " defines no __global__ function of that name (it has: " +
            (found.empty() ? std::string("none") : found) + ")",
        "name the reference's kernel as the signature does: the run launches it by that name",
        exit_code::reference_failed);
}

// --signature: it parses and the manifest's args agree with it.
std::optional<kernel_signature> check_signature_flag(const optimizer_options& o,
                                                     const std::optional<manifest>& m,
                                                     const add_check& add) {
    if (o.signature.empty()) return std::nullopt;
    kernel_signature sig;
    try {
        sig = parse_kernel_signature(o.signature);
    } catch (const std::invalid_argument& e) {
        add("signature", false, std::string("--signature: ") + e.what(),
            "write it as 'void NAME(TYPE NAME, ...)'", exit_code::invalid_request);
        return std::nullopt;
    }
    if (m) {
        const std::string problems = check_signature(sig, *m);
        std::string one_line = problems;
        std::replace(one_line.begin(), one_line.end(), '\n', ';');
        while (!one_line.empty() && one_line.back() == ';') one_line.pop_back();
        add("signature", problems.empty(),
            problems.empty() ? sig.entry + ", " + std::to_string(sig.params.size()) + " params"
                             : o.input_cases + " disagrees with --signature: " + one_line,
            "make the manifest's args and --signature agree (order, pointer or scalar, type)",
            exit_code::invalid_request);
    }
    return sig;
}

// Every output of every case has an oracle: the reference, or the manifest's expected files.
void check_oracle(const optimizer_options& o, const manifest& m, const add_check& add) {
    if (!o.reference.empty()) return;
    if (!o.torch_reference.empty()) {
        try {
            read_torch_problem(o.torch_reference, m);
            add("oracle", true, "PyTorch: " + o.torch_reference, "", exit_code::ok);
        } catch (const std::exception& e) {
            add("oracle", false, e.what(), "run cuda-optimizer import again, or fix the field",
                exit_code::invalid_request);
        }
        return;
    }
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_output() && !mc.expected.count(a.name)) {
                add("oracle", false,
                    "case '" + mc.name + "' output '" + a.name +
                        "' has no oracle: no --reference and no cases[].expected",
                    "pass --reference FILE.cu (a reviewed kernel) or --torch-reference "
                    "pytorch.json, or "
                    "give expected files",
                    exit_code::invalid_request);
                return;
            }
    add("oracle", true, "the manifest's expected files", "", exit_code::ok);
}

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

// --holdout-cases: it reads, and its args agree with the manifest's.
void check_holdout(const optimizer_options& o, const manifest& m, const add_check& add) {
    if (o.holdout_cases.empty()) return;
    try {
        const manifest h = read_holdout_manifest(o.holdout_cases, m);
        add("holdout valid", true, std::to_string(h.cases.size()) + " hidden case(s)", "",
            exit_code::ok);
    } catch (const std::exception& e) {
        add("holdout valid", false, e.what(),
            "correct the field named above (manifest format; it may give only cases)",
            exit_code::invalid_request);
    }
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
            if (first) r.device_json = p.stdout_text;
            r.devices_json.push_back(p.stdout_text);
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

namespace {

// A file option: given (when required) and a regular file; a folder says so.
bool check_file(const add_check& add, const std::string& name, const std::string& path,
                const std::string& flag, const std::string& config) {
    // Where a --config file gave the path, the fix names its key too ("reference" for
    // --reference): that is where the user wrote it.
    std::string where = flag;
    if (!config.empty()) {
        std::string key = flag.substr(2);
        std::replace(key.begin(), key.end(), '-', '_');
        where += " (\"" + key + "\" in " + config + ")";
    }
    std::error_code ec;
    if (path.empty())
        return add(name, false, "not given", "pass " + flag + " FILE", exit_code::usage);
    if (fs::is_directory(path, ec))
        return add(name, false, path + " is a directory", "pass a file to " + where,
                   exit_code::invalid_request);
    return add(name, fs::is_regular_file(path, ec), path, "no such file; check " + where,
               exit_code::invalid_request);
}

// The manifest, its holdout, the signature against it and the oracle it needs.
std::optional<manifest> check_contract(const optimizer_options& o, const add_check& add) {
    std::optional<manifest> m;
    try {
        m = read_manifest(o.input_cases);
        add("manifest valid", true,
            std::to_string(m->cases.size()) + " cases, " + std::to_string(m->args.size()) + " args",
            "", exit_code::ok);
        check_holdout(o, *m, add);
        check_oracle(o, *m, add);
    } catch (const std::exception& e) {
        add("manifest valid", false, e.what(),
            "correct the field named above (schemas/manifest.schema.json)",
            exit_code::invalid_request);
    }
    return m;
}

}  // namespace

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
    const bool kernel_ok =
        eager ? !with_kernel.initial_kernel.empty()
              : check_file(add, "initial kernel", o.initial_kernel, "--initial-kernel", o.config);
    const bool manifest_ok = check_file(add, "manifest", o.input_cases, "--input-cases", o.config);
    if (!o.reference.empty()) check_file(add, "reference", o.reference, "--reference", o.config);
    if (!o.torch_reference.empty())
        check_file(add, "PyTorch reference", o.torch_reference, "--torch-reference", o.config);
    const std::optional<manifest> m =
        manifest_ok ? check_contract(o, add) : std::optional<manifest>();
    const auto sig = check_signature_flag(o, m, add);
    const std::string entry = kernel_ok ? check_entry(with_kernel, sig, add) : "";
    if (sig && o.torch_reference.empty()) check_reference_entry(o, *sig, add);
    if (m && kernel_ok && !eager) check_tunables(o.initial_kernel, *m, add);
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
    const bool may_compile = harness_ok && (check_confinement(o, runner, add, r) || !o.daemon_job);
    if (may_compile && !entry.empty())
        check_compiles(with_kernel, runner, entry, m, compiler, add, r);
    if (harness_ok)
        for (int device : devices_of(o)) check_device(o, device, runner, add, r);
    return r;
}

}  // namespace cuopt
