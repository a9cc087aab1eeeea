#pragma once
/// The gate's files as JSON: GATE/gate.json (schemas/gate.schema.json), the record of one
/// gate; and RUN/gate-baseline.json (schemas/gate-baseline.schema.json) with its copy of the
/// kernel, RUN/gate-baseline.cu, the baseline `--accept` records for later gates. Each is
/// checked against its schema before it is written.

#include <string>

#include "orchestrator/gate/gate_record.hpp"

namespace cuopt {

/// gate.json's text (schema-checked: a failure is a bug, std::logic_error).
std::string gate_json(const gate_record& r);

/// Writes RUN/gate-baseline.json and RUN/gate-baseline.cu from the kernel's valid runs.
void write_gate_baseline(const gate_record& r);

}  // namespace cuopt
