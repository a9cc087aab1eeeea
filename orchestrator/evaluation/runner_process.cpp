#include "orchestrator/evaluation/runner_process.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <csignal>
#include <cstring>
#include <future>
#include <optional>

#include "orchestrator/evaluation/child_group.hpp"

namespace cuopt {

namespace bp = boost::process;

namespace {

constexpr auto k_drain = std::chrono::seconds(2);  // for pipes after the child has exited

// Runs the I/O until the child has exited and both pipes reached EOF. The wall-clock limit
// kills the whole group; after the child's exit the pipes get k_drain, then whatever it
// left behind holding them is killed too. Nothing here waits without a deadline.
void wait_for_child(boost::asio::io_context& io, const bool& exited, pid_t group,
                    std::chrono::steady_clock::time_point deadline, process_result& r) {
    std::optional<std::chrono::steady_clock::time_point> exited_at;
    while (!io.stopped()) {
        io.run_for(std::chrono::milliseconds(20));
        const auto now = std::chrono::steady_clock::now();
        if (exited && !exited_at) exited_at = now;
        const bool late = !exited && now >= deadline;
        if (late || (exited_at && now - *exited_at > k_drain)) {
            r.timed_out |= late;
            kill_group(group);
            break;
        }
    }
    io.restart();
    io.run_for(k_drain);  // what the pipes held when the group died
    io.stop();
}

class child_process_runner final : public process_runner {
  public:
    // Every child inherits it (CUOPT_* passes the scrub): a harness started through ncu dies
    // with this process too. (Set here, not through bp::env, whose lookup in Boost 1.74 reads
    // past its buffer.)
    explicit child_process_runner(child_environment_kind environment)
        : m_scrub(environment == child_environment_kind::scrubbed) {
        ::setenv("CUOPT_DIE_WITH_PARENT", "1", 1);
    }

    process_result run(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout) override {
        process_result r;
        const auto start = std::chrono::steady_clock::now();
        boost::asio::io_context io;
        std::future<std::string> out, err;
        bool exited = false;
        bp::child child;
        try {
            // A bare name ("ncu") is looked up on PATH, as a shell would.
            const boost::filesystem::path program = argv.at(0).find('/') == std::string::npos
                                                        ? bp::search_path(argv.at(0))
                                                        : boost::filesystem::path(argv.at(0));
            if (program.empty()) throw std::runtime_error("not found on PATH");
            child = bp::child(
                bp::exe = program,
                bp::args = std::vector<std::string>(argv.begin() + 1, argv.end()),
                bp::std_in.close(), bp::std_out > out, bp::std_err > err, io, own_process_group{},
                child_env(m_scrub),
                bp::on_exit = [&exited](int, const std::error_code&) { exited = true; });
        } catch (const std::exception& e) {
            r.failed_to_start = true;
            r.stderr_text = std::string("cannot start ") + argv.at(0) + ": " + e.what();
            return r;
        }
        const pid_t group = child.id();
        wait_for_child(io, exited, group, start + timeout, r);
        std::error_code ec;
        child.wait(ec);
        const int status = child.native_exit_code();
        if (WIFSIGNALED(status))
            r.signal = WTERMSIG(status);
        else if (WIFEXITED(status))
            r.exit_code = WEXITSTATUS(status);
        auto ready = [](std::future<std::string>& f) {
            return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        };
        r.stdout_text = ready(out) ? out.get() : "";
        r.stderr_text = ready(err) ? err.get() : "";
        r.wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return r;
    }

  private:
    bool m_scrub;
};

}  // namespace

std::string process_result::describe() const {
    if (failed_to_start) return stderr_text;
    if (timed_out)
        return "timed out after " + std::to_string(static_cast<long long>(wall_ms)) +
               " ms and was killed";
    if (signal)
        return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    return "exit " + std::to_string(exit_code);
}

std::unique_ptr<process_runner> make_child_process_runner(child_environment_kind environment) {
    return std::make_unique<child_process_runner>(environment);
}

}  // namespace cuopt
