#pragma once
/// The preflight's checks, one concern to a file: the compiles (preflight_compiles), the
/// tunables against the kernel (preflight_tunables) and the contract: files, manifest,
/// signature, entry and oracle (preflight_contract). run_preflight (preflight.cpp) runs them.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/cli_value_checks.hpp"
#include "common/exit_codes.hpp"
#include "common/runner_process.hpp"
#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/commands/preflight.hpp"
#include "orchestrator/contract/kernel_signature.hpp"
#include "orchestrator/contract/manifest.hpp"

namespace cuopt::preflight {

/// Adds one row to the report; returns `ok`.
using add_check = std::function<bool(std::string name, bool ok, std::string detail, std::string fix,
                                     exit_code code)>;

inline std::chrono::milliseconds timeout_of(const optimizer_options& o) {
    return milliseconds_of(o.timeout_s);
}

/// The harness's confinement, from its compile of an empty kernel of our own (so that it is
/// known before any kernel of the user's or a job's reaches the harness), and whether the run
/// may go on with it.
bool check_confinement(const optimizer_options& o, process_runner& runner, const add_check& add,
                       preflight_report& r);

/// NVRTC and the toolkit headers, proven by compiling the initial kernel (with its tunables'
/// first values, as optimize does) through the compiling harness; then the reference.
void check_compiles(const optimizer_options& o, process_runner& runner, const std::string& entry,
                    const std::optional<manifest>& m, const preflight_compiler& pc,
                    const add_check& add, preflight_report& r);

/// The manifest's tunables against the initial kernel's source: each is read by the kernel or
/// the launch, none is #defined outside its own `#ifndef` guard (the define would override every
/// value), and a default the kernel gives one in that guard is its first value.
void check_tunables(const std::string& kernel, const manifest& m, const add_check& add);

/// A file option: given (when required) and a regular file; a folder says so.
bool check_file(const add_check& add, const std::string& name, const std::string& path,
                const std::string& flag, const std::string& config);

/// The manifest, its holdout, the signature against it and the oracle it needs.
std::optional<manifest> check_contract(const optimizer_options& o, const add_check& add);

/// --signature: it parses and the manifest's args agree with it.
std::optional<kernel_signature> check_signature_flag(const optimizer_options& o,
                                                     const std::optional<manifest>& m,
                                                     const add_check& add);

/// The kernel's entry: the signature's name, which the initial kernel must define, else the
/// first __global__ function in it. "" when there is none (the check failed).
std::string check_entry(const optimizer_options& o, const std::optional<kernel_signature>& sig,
                        const add_check& add);

/// With --signature, the reference defines a kernel of the signature's name.
void check_reference_entry(const optimizer_options& o, const kernel_signature& sig,
                           const add_check& add);

}  // namespace cuopt::preflight
