#include "orchestrator/commands/oracle.hpp"

#include <algorithm>
#include <cmath>

#include "common/file_io.hpp"
#include "common/runner_process.hpp"
#include "common/sha256.hpp"
#include "orchestrator/commands/run_failure.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

void copy_input(const fs::path& from, const fs::path& run,
                std::map<std::string, std::string>& sha256) {
    copy_file_atomic(from, run / "inputs" / from.filename());
    sha256["inputs/" + from.filename().string()] = sha256_file_hex(from);
}

// "" when an oracle file of `arg` holds only finite values, else where it does not.
std::string non_finite_in(const fs::path& file, const manifest_arg& arg, const std::string& who,
                          const std::string& case_name) {
    if (!is_float(arg.type)) return "";
    const auto bytes = read_binary_file(file);
    const std::size_t n = bytes.size() / dtype_size(arg.type);
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(element_as_double(arg.type, bytes.data(), i)))
            return "case '" + case_name + "': " + who + " produced a NaN/Inf in '" + arg.name +
                   "' at element " + std::to_string(i);
    return "";
}

// PyTorch's forward on the inputs the (input-only) reference launch saw.
void run_torch(const oracle_setup& s, oracle_files& oracle) {
    const auto runner = make_child_process_runner();
    oracle_files made;
    try {
        made = run_torch_oracle(*s.torch, s.contract, s.run / s.folder, *runner);
    } catch (const python_error& e) {
        throw run_failure(exit_code::reference_failed, e.what());
    }
    for (const auto& [key, file] : made) {
        if (const std::string bad = non_finite_in(file, *s.contract.find_arg(key.second),
                                                  "PyTorch's forward", key.first);
            !bad.empty())
            throw run_failure(exit_code::reference_failed, bad);
        oracle[key] = file;
    }
}

// The reference, run on every case: its outputs become the oracle, its inputs the run's.
void run_reference(const oracle_setup& s, oracle_files& oracle,
                   std::map<std::string, std::string>& sha256) {
    sha256["reference"] =
        s.torch ? sha256_file_hex(s.torch->problem.source) : sha256_hex(s.reference->source);
    const attempt_result r = s.evaluator.evaluate(*s.reference, s.run / s.folder, nullptr);
    if (r.verdict != verdict::valid)
        throw run_failure(exit_code::reference_failed,
                          std::string(s.torch ? "the run that hands PyTorch its inputs fails: "
                                              : "the reference kernel fails: ") +
                              std::string(to_string(r.verdict)) + ": " + r.reason);
    if (s.torch) {
        run_torch(s, oracle);
    } else {
        if (const std::string bad = check_reference_outputs(r, s.contract); !bad.empty())
            throw run_failure(exit_code::reference_failed, bad);
        for (const auto& ce : r.cases)
            for (const auto& oc : ce.outputs) oracle[{ce.name, oc.arg}] = oc.file;
    }
    if (s.record_inputs)
        for (const auto& e : fs::directory_iterator(s.run / s.folder / "inputs"))
            copy_input(e.path(), s.run, sha256);
}

// The manifest's expected files (they win over the reference); every output must have one or the
// other.
void add_expected_files(const oracle_setup& s, oracle_files& oracle) {
    for (const manifest_case& mc : s.contract.cases)
        for (const manifest_arg& a : s.contract.args) {
            if (!a.has_output()) continue;
            const bool fixed = std::none_of(
                s.contract.args.begin(), s.contract.args.end(), [&](const manifest_arg& in) {
                    return in.has_input() && !s.contract.init_for(mc, in).file;
                });
            const auto it = mc.expected.find(a.name);
            if (it != mc.expected.end() && s.expected_for_fixed_inputs_only && !fixed &&
                oracle.count({mc.name, a.name}))
                continue;  // the reference ran on this case's new inputs
            if (it != mc.expected.end()) {
                const fs::path copy =
                    s.run / s.folder / "expected" / (mc.name + "." + a.name + ".bin");
                copy_file_atomic(it->second, copy);
                oracle[{mc.name, a.name}] = copy;
            } else if (!oracle.count({mc.name, a.name})) {
                throw run_failure(exit_code::invalid_request,
                                  "case '" + mc.name + "' output '" + a.name +
                                      "' has no oracle: pass --reference or give cases[].expected");
            }
        }
}

}  // namespace

std::string check_reference_outputs(const attempt_result& ref, const manifest& m) {
    for (const case_evaluation& ce : ref.cases)
        for (const output_check& oc : ce.outputs) {
            const manifest_arg* arg = m.find_arg(oc.arg);
            if (!arg) continue;
            const auto bytes = read_binary_file(oc.file);
            const std::size_t n = bytes.size() / dtype_size(arg->type);
            if (oc.unwritten)
                return "case '" + ce.name + "': the reference left " +
                       std::to_string(oc.unwritten) + " of " + std::to_string(n) +
                       " elements of '" + oc.arg + "' unwritten";
            if (const std::string bad = non_finite_in(oc.file, *arg, "the reference", ce.name);
                !bad.empty())
                return bad;
        }
    return "";
}

oracle_files prepare_oracle(const oracle_setup& s, std::map<std::string, std::string>& sha256) {
    oracle_files oracle;
    fs::create_directories(s.run / "inputs");
    for (const manifest_case& mc :
         s.record_inputs ? s.contract.cases : std::vector<manifest_case>{})
        for (const manifest_arg& a : s.contract.args)
            if (a.has_input())
                if (const auto& init = s.contract.init_for(mc, a); init.file)
                    copy_input(*init.file, s.run, sha256);
    if (s.reference) run_reference(s, oracle, sha256);
    add_expected_files(s, oracle);
    return oracle;
}

}  // namespace cuopt
