// The preflight's contract checks: the files given, the manifest and its holdout, --signature
// against the manifest, the kernel's entry (and the reference's) and an oracle for every output.
#include <algorithm>
#include <filesystem>

#include "common/file_io.hpp"
#include "orchestrator/commands/preflight_checks.hpp"
#include "orchestrator/evaluation/torch_oracle.hpp"

namespace cuopt::preflight {

namespace fs = std::filesystem;

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

namespace {

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

}  // namespace

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

}  // namespace cuopt::preflight
