#pragma once
/// One `cuda-harness --worker` child of harness_workers: its pipes read asynchronously with
/// Boost.Asio, one request at a time, each answered by a reply line, the worker's end or the
/// deadline. A worker that answers wrongly, crashes, hangs or must exit is ended here; the
/// runner replaces it.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/streambuf.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/child_process.hpp"
#include "common/runner_process.hpp"

namespace cuopt {

/// A harness run as the evaluator writes it: the request, where its response goes, and the
/// flags that shape the worker (--quiet, --cache-dir DIR, ...).
struct harness_run {
    std::string request;
    std::string response;
    std::string root;  // the run's --root, where it names one (a worker's must be the same)
    std::vector<std::string> flags;
};

/// One `cuda-harness --worker` child: its pipes read asynchronously, one request at a time.
class worker_process {
  public:
    explicit worker_process(const std::vector<std::string>& argv);
    worker_process(const worker_process&) = delete;
    worker_process& operator=(const worker_process&) = delete;
    ~worker_process();

    /// Whether it ended by retiring after its last reply (not a crash, a timeout or an error).
    bool retired() const { return m_retired; }

    /// Whether it has ended (or must be replaced): checked before each request.
    bool gone();

    /// Sends one request and waits for its reply line, the worker's end or the deadline;
    /// nullopt when the request could not even be written (the worker had already gone, so
    /// its end is not this request's doing).
    std::optional<process_result> serve(const harness_run& run, std::chrono::milliseconds timeout);

  private:
    void read_stderr();
    // The first stdout line that is a reply; nullopt at the worker's end or the deadline. The
    // read's state lives in members: a read still pending at the deadline completes later.
    std::optional<std::string> read_reply(std::chrono::steady_clock::time_point deadline);
    // A reply must be readable and answer the request just sent; anything else ends the
    // worker (its replies can no longer be matched to requests) and fails this run.
    void fill_from_reply(const std::string& line, const std::string& request, process_result& r);
    void fill_from_status(process_result& r);
    // Lets the worker leave (stdin closed) for up to `grace`, then kills it; reaps it, and
    // kills what is left of its process group.
    void end(std::chrono::milliseconds grace);

    boost::asio::io_context m_io;
    boost::asio::posix::stream_descriptor m_in, m_out, m_err;
    std::unique_ptr<child_process> m_child;
    boost::asio::streambuf m_out_buf;
    char m_err_chunk[4096];
    std::string m_err_text;
    bool m_reading = false;     // a stdout read is pending
    bool m_line_ready = false;  // it completed (a line is in m_out_buf, or m_out_eof)
    bool m_out_eof = false;
    bool m_gone = false;
    bool m_retired = false;  // its last reply said it retires
};

}  // namespace cuopt
