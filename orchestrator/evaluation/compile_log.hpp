#pragma once
/// NVRTC logs can run to megabytes (a template error repeated per instantiation); what
/// goes into history.json and to a model is the error lines and the end of the log,
/// within a budget, with a note saying how much there was.

#include <cstddef>
#include <string>

namespace cuopt {

/// The log itself when it fits the budget; else its error lines (up to half the budget),
/// a "[... N bytes in all; end of log:]" marker and the last half-budget of the log.
std::string trim_compile_log(const std::string& log, std::size_t budget);

/// A compile error's reason in one line: the log's first `max_lines` error lines
/// (`initial.cu(12): error: identifier "x" is undefined`), joined by "; ", with a count of
/// the rest; "" when the log has no error line (the harness's own message says more then).
std::string first_compile_errors(const std::string& log, std::size_t max_lines = 3);

}  // namespace cuopt
