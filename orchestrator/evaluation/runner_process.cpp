#include "orchestrator/evaluation/runner_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cstring>
#include <future>

namespace cuopt {

namespace bp = boost::process;

namespace {

// Puts the child in a process group of its own, so a Ctrl-C aimed at cuda-optimizer does
// not kill the harness mid-attempt: the attempt finishes, is written, then the run stops.
struct own_process_group : bp::extend::handler {
    template <typename Executor>
    void on_exec_setup(Executor&) const {
        ::setpgid(0, 0);
    }
};

class child_process_runner final : public process_runner {
  public:
    process_result run(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout) override {
        process_result r;
        const auto start = std::chrono::steady_clock::now();
        boost::asio::io_context io;
        std::future<std::string> out, err;
        bool exited = false;
        std::error_code start_error;
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
                bp::on_exit = [&exited](int, const std::error_code&) { exited = true; });
        } catch (const std::exception& e) {
            r.failed_to_start = true;
            r.stderr_text = std::string("cannot start ") + argv.at(0) + ": " + e.what();
            return r;
        }
        // Runs until the child has exited and both pipes reached EOF, or the limit passes.
        io.run_for(timeout);
        if (!exited) {
            std::error_code ec;
            child.terminate(ec);  // SIGKILL
            r.timed_out = true;
            io.restart();
            io.run();  // collect what it wrote before it died
        }
        child.wait();
        const int status = child.native_exit_code();
        if (WIFSIGNALED(status))
            r.signal = WTERMSIG(status);
        else if (WIFEXITED(status))
            r.exit_code = WEXITSTATUS(status);
        r.stdout_text = out.valid() ? out.get() : "";
        r.stderr_text = err.valid() ? err.get() : "";
        r.wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return r;
    }
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

std::unique_ptr<process_runner> make_child_process_runner() {
    return std::make_unique<child_process_runner>();
}

}  // namespace cuopt
