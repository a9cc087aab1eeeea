#pragma once
/// One regression gate from start to verdict: read the accepted run (its replay cases, the
/// accepted figures and kernel), time the kernel (and, with --kernel, the accepted kernel
/// beside it) in rounds on this machine, compare the machine with the one the figures came
/// from, judge, and with --accept record the new baseline. The caller writes the files.

#include <functional>
#include <string>

#include "orchestrator/gate/gate_record.hpp"

namespace cuopt {

/// Fills everything but `finished` and `wall_s`; `r.options`, `r.run` and `r.folder` must be
/// set (the folder exists). Never throws for what a gate can meet: that becomes the verdict.
void run_regression_gate(gate_record& r, const std::function<void(const std::string&)>& progress);

}  // namespace cuopt
