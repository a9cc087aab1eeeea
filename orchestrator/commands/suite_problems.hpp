#pragma once
/// The suite's problems: what DIR holds (problem folders, and files `import` turns into one) and
/// how one problem runs, imported first where it must be, through `optimize` in a child of this
/// same binary; its failure a record.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/runner_process.hpp"
#include "orchestrator/commands/suite_command.hpp"

namespace cuopt::suite {

/// One problem of the deck: a problem folder, or a file `import` turns into one.
struct suite_problem {
    std::string name;
    std::filesystem::path source;
    bool imported = false;
};

/// This binary, from /proc/self/exe.
std::filesystem::path self_path();

/// DIR's problems, sorted by name: each subfolder with a config.json, each .py and .json file.
/// A file whose stem a folder already took keeps its whole file name.
std::vector<suite_problem> find_problems(const std::filesystem::path& dir,
                                         const std::filesystem::path& results);

/// The problem's folder: DIR/NAME, or R/problems/NAME made by import (kept from an earlier
/// suite run when its config.json is there). nullopt, with `r` failed, when import fails.
std::optional<std::filesystem::path> problem_folder(const suite_problem& p, const suite_options& o,
                                                    process_runner& runner, suite_record& r);

/// The problem's optimize run, as a record (imported first where it is a file).
suite_record run_problem(const suite_problem& p, const suite_options& o, process_runner& runner);

}  // namespace cuopt::suite
