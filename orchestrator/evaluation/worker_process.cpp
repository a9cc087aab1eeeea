// The worker child's life: started on scrubbed pipes, one request line out and one reply
// line back per run, and its end (retired, crashed, hung or answering wrongly).
#include "orchestrator/evaluation/worker_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <climits>
#include <csignal>
#include <thread>
#include <utility>

#include "common/child_environment.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

namespace {

using clock_type = std::chrono::steady_clock;

std::string request_line(const harness_run& run) {
    rapidjson::Document doc(rapidjson::kObjectType);
    json_object(doc)
        .add("request", run.request)
        .add_if(!run.response.empty(), "response", run.response);
    return to_compact_json(doc) + "\n";
}

}  // namespace

worker_process::worker_process(const std::vector<std::string>& argv)
    : m_in(m_io), m_out(m_io), m_err(m_io) {
    const std::array<int, 2> in = make_pipe(), out = make_pipe(), err = make_pipe();
    try {
        scrubbed_environment env;
        m_child = std::make_unique<child_process>(argv, child_streams{in[0], out[1], err[1]},
                                                  std::filesystem::path(), env.envp());
    } catch (...) {
        for (const int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
        throw;
    }
    for (const int fd : {in[0], out[1], err[1]}) ::close(fd);
    m_in.assign(in[1]);
    m_out.assign(out[0]);
    m_err.assign(err[0]);
    read_stderr();
}

worker_process::~worker_process() {
    if (!m_gone) end(std::chrono::milliseconds(500));
}

bool worker_process::gone() {
    if (!m_gone && m_child->poll()) end(std::chrono::milliseconds(0));
    return m_gone;
}

std::optional<process_result> worker_process::serve(const harness_run& run,
                                                    std::chrono::milliseconds timeout) {
    const auto start = clock_type::now();
    process_result r;
    boost::system::error_code ec;
    boost::asio::write(m_in, boost::asio::buffer(request_line(run)), ec);
    if (ec) {
        end(std::chrono::milliseconds(0));
        return std::nullopt;
    }
    if (const std::optional<std::string> reply = read_reply(start + timeout)) {
        fill_from_reply(*reply, run.request, r);
    } else {
        r.timed_out = !m_out_eof;
        end(std::chrono::milliseconds(0));  // killed on timeout; reaped after its crash
        fill_from_status(r);
    }
    m_io.poll();
    r.stderr_text += std::exchange(m_err_text, "");
    r.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
    return r;
}

void worker_process::read_stderr() {
    m_err.async_read_some(boost::asio::buffer(m_err_chunk),
                          [this](const boost::system::error_code& e, std::size_t n) {
                              m_err_text.append(m_err_chunk, n);
                              if (!e) read_stderr();
                          });
}

std::optional<std::string> worker_process::read_reply(clock_type::time_point deadline) {
    for (;;) {
        if (m_line_ready) {
            m_line_ready = false;
            std::istream in(&m_out_buf);
            std::string line;
            if (!m_out_eof && std::getline(in, line) && line.rfind("{\"request\"", 0) == 0)
                return line;
        }
        if (m_out_eof) return std::nullopt;
        if (!m_reading) {
            m_reading = true;
            boost::asio::async_read_until(m_out, m_out_buf, '\n',
                                          [this](const boost::system::error_code& e, std::size_t) {
                                              m_reading = false;
                                              m_line_ready = true;
                                              m_out_eof = static_cast<bool>(e);
                                          });
        }
        while (!m_line_ready && clock_type::now() < deadline)
            m_io.run_one_for(deadline - clock_type::now());
        if (!m_line_ready) return std::nullopt;
    }
}

void worker_process::fill_from_reply(const std::string& line, const std::string& request,
                                     process_result& r) {
    r.stdout_text = line;
    rapidjson::Document doc;
    try_parse_json(doc, line);  // an unreadable line leaves it null: no members at all
    const long long code = integer_of(doc, "exit_code").value_or(LLONG_MIN);
    const std::string answered = string_of(doc, "request").value_or("");
    const bool readable = code >= INT_MIN && code <= INT_MAX && !answered.empty();
    if (!readable || answered != request) {
        r.exit_code = 70;
        r.stderr_text = "cuda-harness --worker answered " +
                        std::string(readable ? "for another request" : "with an unreadable line") +
                        " (expected " + request + "): " + line + "\n";
        end(std::chrono::milliseconds(0));
        return;
    }
    r.exit_code = static_cast<int>(code);
    r.stderr_text = text_of(doc, "messages");
    // A worker that must exit after this reply (harness/worker_loop: a failed case, a sticky
    // error, no driver, an internal error) does so now; it is replaced next time. One that
    // retires (its kernel could leave device-heap blocks or globals behind) exits with 0:
    // the run is what the reply says, and only the process is new next time.
    const bool must_exit =
        r.exit_code == 12 || r.exit_code == 13 || r.exit_code == 14 || r.exit_code == 70;
    m_retired = !must_exit && member(doc, "retired");
    if (must_exit || m_retired) end(std::chrono::milliseconds(2000));
}

void worker_process::fill_from_status(process_result& r) {
    const int status = m_child->poll().value_or(0);
    if (WIFSIGNALED(status) && !r.timed_out)
        r.signal = WTERMSIG(status);
    else if (r.timed_out)
        r.signal = SIGKILL;
    else if (WIFEXITED(status))
        r.exit_code = WEXITSTATUS(status);
}

void worker_process::end(std::chrono::milliseconds grace) {
    boost::system::error_code ec;
    m_in.close(ec);
    const auto until = clock_type::now() + grace;
    while (!m_child->poll() && clock_type::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const pid_t group = m_child->pid();
    if (!m_child->poll()) kill_group(group);
    m_child->wait();
    kill_group(group);  // whatever the worker started and left behind in its group
    m_gone = true;
}

}  // namespace cuopt
