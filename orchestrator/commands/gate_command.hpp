#pragma once
/// `cuda-optimizer gate`: the regression gate a CI job runs on a GPU machine. Reruns an
/// accepted run's kernel (or a new version of it) on the run's replay requests and exits 0
/// (pass), 1 (fail) or 2 (cannot judge), with GATE/gate.json and gate.html saying why.

#include <CLI/CLI.hpp>

#include "orchestrator/gate/gate_record.hpp"

namespace cuopt {

/// The gate's subcommand and its options (each with its default and one line of help).
CLI::App* add_gate_command(CLI::App& app, gate_options& o);

/// Runs the gate; returns its exit code (64 for an --out that cannot be used).
int run_gate(gate_options o);

}  // namespace cuopt
