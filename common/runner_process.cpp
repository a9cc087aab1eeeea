#include "common/runner_process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>

#include "common/child_environment.hpp"
#include "common/child_process.hpp"

namespace cuopt {

namespace {

constexpr auto k_drain = std::chrono::seconds(2);  // for pipes after the child has exited

// Reads a pipe to its end into `text`, asynchronously.
class pipe_reader {
  public:
    pipe_reader(boost::asio::io_context& io, int fd) : m_pipe(io, fd) { read(); }

    std::string text;

  private:
    void read() {
        m_pipe.async_read_some(boost::asio::buffer(m_chunk),
                               [this](const boost::system::error_code& ec, std::size_t n) {
                                   text.append(m_chunk, n);
                                   if (!ec) read();
                               });
    }
    boost::asio::posix::stream_descriptor m_pipe;
    char m_chunk[8192];
};

// Runs the I/O until the child has exited and both pipes reached EOF. The wall-clock limit
// kills the whole group; after the child's exit the pipes get k_drain, then whatever it
// left behind holding them is killed too. Nothing here waits without a deadline.
void wait_for_child(boost::asio::io_context& io, child_process& child,
                    std::chrono::steady_clock::time_point deadline, process_result& r) {
    std::optional<std::chrono::steady_clock::time_point> exited_at;
    for (;;) {
        // A child that closed both pipes (it sent its streams to a file) may still run: the
        // deadline holds all the same, and so does the group kill at the end.
        if (io.stopped())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        else
            io.run_for(std::chrono::milliseconds(20));
        const auto now = std::chrono::steady_clock::now();
        const bool exited = child.poll().has_value();
        if (exited && !exited_at) exited_at = now;
        const bool late = !exited && now >= deadline;
        if (late || (exited_at && (io.stopped() || now - *exited_at > k_drain))) {
            r.timed_out |= late;
            kill_group(child.pid());
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
    // with this process too.
    explicit child_process_runner(child_environment_kind environment)
        : m_scrub(environment == child_environment_kind::scrubbed) {
        ::setenv("CUOPT_DIE_WITH_PARENT", "1", 1);
    }

    process_result run(const std::vector<std::string>& argv,
                       std::chrono::milliseconds timeout) override {
        process_result r;
        const auto start = std::chrono::steady_clock::now();
        std::array<int, 2> out{-1, -1}, err{-1, -1};
        std::unique_ptr<child_process> child;
        try {
            out = make_pipe();
            err = make_pipe();
            std::optional<scrubbed_environment> env;
            if (m_scrub) env.emplace();
            child = std::make_unique<child_process>(argv, child_streams{-1, out[1], err[1]},
                                                    std::filesystem::path(),
                                                    env ? env->envp() : nullptr);
        } catch (const std::exception& e) {
            for (const int fd : {out[0], out[1], err[0], err[1]})
                if (fd >= 0) ::close(fd);
            r.failed_to_start = true;
            r.stderr_text = e.what();
            return r;
        }
        ::close(out[1]);
        ::close(err[1]);
        boost::asio::io_context io;
        pipe_reader out_text(io, out[0]), err_text(io, err[0]);
        wait_for_child(io, *child, start + timeout, r);
        const int status = child->wait();
        if (WIFSIGNALED(status))
            r.signal = WTERMSIG(status);
        else if (WIFEXITED(status))
            r.exit_code = WEXITSTATUS(status);
        r.stdout_text = std::move(out_text.text);
        r.stderr_text = std::move(err_text.text);
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
