// The preflight's compiles: the harness's confinement (an empty kernel of our own), the
// initial kernel and the reference through --compile-only, and with --all-configurations every
// configuration of the tunables.
#include <algorithm>
#include <filesystem>

#include "common/file_io.hpp"
#include "common/temporary_folder.hpp"
#include "orchestrator/commands/confinement_policy.hpp"
#include "orchestrator/commands/preflight_checks.hpp"
#include "orchestrator/contract/request_writer.hpp"
#include "orchestrator/contract/response_reader.hpp"

namespace cuopt::preflight {

namespace fs = std::filesystem;

namespace {

struct compile_outcome {
    int exit = 0;
    std::string first_error;  // the log's first error line, or why the harness failed
    confinement confined;     // how the harness that compiled it was confined
};

using kernel_defines = std::vector<std::pair<std::string, std::string>>;

// One source through `harness` --compile-only (NVRTC; no GPU needed), named as the user's file
// so an error line points at it; for the architecture-specific target where `m` asks for it.
compile_outcome compile_only(const optimizer_options& o, process_runner& runner,
                             const std::string& harness, const std::string& file,
                             const std::string& entry, const kernel_defines& defines = {},
                             const manifest* m = nullptr) {
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
    req.kernel.arch_specific = m && m->arch_specific;
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

}  // namespace

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

namespace {

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
constexpr std::uint64_t k_failures_shown = 20;  // rows; the last row counts them all

// Configuration `index` of the tunables (0 is the first values), the last tunable (by name)
// counting fastest, as -D defines sorted by name.
kernel_defines configuration(const manifest& m, std::uint64_t index) {
    kernel_defines out(m.tunables.size());
    std::size_t j = out.size();
    for (auto it = m.tunables.rbegin(); it != m.tunables.rend(); ++it) {
        out[--j] = {it->first, std::to_string(it->second[index % it->second.size()])};
        index /= it->second.size();
    }
    return out;
}

// "BLOCK_X=16 TILE_K=32": a configuration as a failure line names it.
std::string configuration_text(const kernel_defines& defines) {
    std::string out;
    for (const auto& [name, value] : defines) out += (out.empty() ? "" : " ") + name + "=" + value;
    return out;
}

// check --all-configurations: the initial kernel compiled in every configuration but the first
// (compiled already), in order. A row for each that fails to compile (the first 20), then one
// counting them; a harness that fails another way ends it at once.
void check_every_configuration(const optimizer_options& o, process_runner& runner,
                               const std::string& harness, const std::string& entry,
                               const manifest& m, std::uint64_t count, const add_check& add) {
    if (count > k_max_configurations)
        return void(add("every configuration", false,
                        std::to_string(count) + " configurations, over the " +
                            std::to_string(k_max_configurations) + " --all-configurations compiles",
                        "narrow the manifest's tunables, or check without --all-configurations",
                        exit_code::usage));
    std::uint64_t refused = 0, failed = 0;
    std::string first_refused;
    for (std::uint64_t i = 1; i < count; ++i) {
        const kernel_defines defines = configuration(m, i);
        const compile_outcome k =
            compile_only(o, runner, harness, o.initial_kernel, entry, defines, &m);
        const bool compile_error = k.exit == to_int(exit_code::compile_error);
        // A kernel's own static_assert refusing a combination is its rule, as the search
        // treats it (a compile error that costs no GPU time); any other error is a bug.
        if (compile_error && k.first_error.find("static assertion failed") != std::string::npos) {
            if (refused++ == 0) first_refused = configuration_text(defines);
        } else if (k.exit != 0 && (failed++ < k_failures_shown || !compile_error)) {
            add("every configuration", false, configuration_text(defines) + ": " + k.first_error,
                compile_error ? "" : "run cuda-harness --compile-only by hand to see why",
                exit_code::initial_failed);
            if (!compile_error) return;
        }
    }
    if (failed)
        return void(add("every configuration", false,
                        std::to_string(failed) + " of " + std::to_string(count) +
                            " configurations do not compile" +
                            (failed > k_failures_shown
                                 ? " (the first " + std::to_string(k_failures_shown) + " above)"
                                 : std::string(" (above)")),
                        "fix the kernel for those configurations, or drop their values from the "
                        "tunables",
                        exit_code::initial_failed));
    add("every configuration", true,
        std::to_string(count - refused) + " of " + std::to_string(count) + " compile" +
            (refused ? "; " + std::to_string(refused) +
                           " refused by the kernel's own static_assert (the first: " +
                           first_refused + ")"
                     : std::string()),
        "", exit_code::ok);
}

}  // namespace

// NVRTC and the toolkit headers, proven by compiling the initial kernel (with its tunables'
// first values, as optimize does) through the compiling harness; then the reference. Where that
// harness is not the run's own, the run's harness is asked first whether it takes the kernel.
void check_compiles(const optimizer_options& o, process_runner& runner, const std::string& entry,
                    const std::optional<manifest>& m, const preflight_compiler& pc,
                    const add_check& add, preflight_report& r) {
    const kernel_defines defines = initial_defines(m);
    const manifest* spec = m ? &*m : nullptr;
    const std::string harness = pc.harness.empty() ? o.harness : pc.harness;
    std::error_code ec;
    const bool own =
        pc.unavailable.empty() && (harness == o.harness || fs::equivalent(harness, o.harness, ec));
    if (!own &&
        !check_harness_takes(
            compile_only(o, runner, o.harness, o.initial_kernel, entry, defines, spec), add))
        return;
    if (!pc.unavailable.empty()) return add_not_compiled(o, pc.unavailable, r);
    const compile_outcome k =
        compile_only(o, runner, harness, o.initial_kernel, entry, defines, spec);
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
    const compile_outcome ref = compile_only(o, runner, harness, o.reference,
                                             reference_entry(o.reference, entry), defines, spec);
    add("reference compiles", ref.exit == 0, ref.exit == 0 ? o.reference : ref.first_error,
        "fix the reference kernel", exit_code::reference_failed);
}

}  // namespace cuopt::preflight
