#pragma once
/// An imported problem's sizes as integer-expression variables, which both reading the PyTorch
/// side's answer (problem_introspection) and writing the manifest (problem_folder) evaluate over.

#include <vector>

#include "orchestrator/commands/problem_import.hpp"
#include "orchestrator/contract/integer_expression.hpp"

namespace cuopt::problem_import {

/// Each axis at its value, or at its small one (the correctness case's) when `small`.
inline expression_variables values_of(const std::vector<imported_axis>& axes, bool small) {
    expression_variables v;
    for (const imported_axis& a : axes) v[a.name] = small ? a.small : a.value;
    return v;
}

}  // namespace cuopt::problem_import
