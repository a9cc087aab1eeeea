#pragma once
/// A process_runner without processes, after ninja's FakeCommandRunner: each run is a
/// fake-harness command line served inside the test process by the fake's own code
/// (tests/fake_harness/), so the search, evaluation and evidence unit tests go through the whole
/// file contract (request in, outputs and response out, exit codes) without starting a child.
/// A marker that crashes, hangs or exits the fake comes back at once as the result a real child
/// gives (signal 11, timed out, exit 70). Nothing is confined (there is no process to confine):
/// every response's confinement block says so. One run at a time (the fake's state is global).
/// The integration tests keep the binary (make_child_process_runner): workers, confinement,
/// markers that start children, and everything that needs a real process.

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/runner_process.hpp"

namespace cuopt::test {

class in_memory_harness final : public process_runner {
  public:
    /// argv[0] must name fake-harness (the evaluator's settings.harness); anything else, a
    /// --worker command line and a marker that starts children throw fake::needs_a_process
    /// (a std::logic_error): this runner cannot stand in for them.
    process_result run(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout) override;
    /// Every command line served so far, in order.
    std::vector<std::vector<std::string>> commands() const;

  private:
    mutable std::mutex m_mutex;
    std::vector<std::vector<std::string>> m_commands;
};

/// A process_runner for any other program a unit test needs (a disassembler, a profiler): each
/// run is answered by the test's function, every command line kept. No process starts.
class scripted_runner final : public process_runner {
  public:
    using script = std::function<process_result(const std::vector<std::string>& argv)>;
    explicit scripted_runner(script answer) : m_answer(std::move(answer)) {}
    process_result run(const std::vector<std::string>& argv, std::chrono::milliseconds) override {
        m_commands.push_back(argv);
        return m_answer(argv);
    }
    const std::vector<std::vector<std::string>>& commands() const { return m_commands; }

  private:
    script m_answer;
    std::vector<std::vector<std::string>> m_commands;
};

}  // namespace cuopt::test
