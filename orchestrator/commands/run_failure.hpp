#pragma once
/// A phase of a command that cannot go on: its exit code and a one-line message that
/// says what to fix. Each command catches it once, at its boundary.

#include <stdexcept>
#include <string>

#include "common/exit_codes.hpp"

namespace cuopt {

class run_failure : public std::runtime_error {
  public:
    run_failure(exit_code code, const std::string& message)
        : std::runtime_error(message), m_code(code) {}
    exit_code code() const { return m_code; }

  private:
    exit_code m_code;
};

}  // namespace cuopt
