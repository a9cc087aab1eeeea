#pragma once
/// The dashboard under test: an http_dashboard on its own io_context thread over a scratch
/// spool (the fake harness and the real cuda-optimizer for `check`), a plain HTTP/1.1 client
/// that sends targets exactly as written (no ".." squashed), a multipart body builder, and
/// jobs placed in the spool as the daemon would leave them.

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "orchestrator/service/http_dashboard.hpp"
#include "orchestrator/service/spool.hpp"
#include "test_support.hpp"

namespace cuopt::test {

extern const std::string k_dashboard_token;

struct http_reply {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? "" : it->second;
    }
};

using header_list = std::vector<std::pair<std::string, std::string>>;

/// One request on a fresh connection to 127.0.0.1:port; the target is sent verbatim.
http_reply http_exchange(unsigned short port, const std::string& method, const std::string& target,
                         const header_list& headers = {}, const std::string& body = "");

/// The Authorization header with the test token.
header_list bearer();

/// A browser's sign-in, as the dashboard's script does it: POST /api/session with the token;
/// the session id it answers.
std::string sign_in(unsigned short port);

/// `Authorization: Session ID`, as the dashboard's script sends it.
header_list session_header(const std::string& session);

/// What the dashboard's script sends with a form: its session and the page's Origin (none
/// when ""), plus the form body's type.
header_list browser_post(const std::string& session, const std::string& origin);

/// "http://127.0.0.1:PORT", the dashboard's own origin.
std::string origin_of(unsigned short port);

/// A multipart/form-data body: fields, then files (field name, file name, bytes).
struct form_body {
    std::string boundary = "----cuoptTestBoundary7MA4YWxkTrZu0gW";
    std::string body;
    form_body& field(const std::string& name, const std::string& value);
    form_body& file(const std::string& field, const std::string& filename, const std::string& data);
    /// The closing boundary; returns the whole body.
    const std::string& close();
    header_list headers() const;  // bearer() and the Content-Type
};

/// The matmul example's files as an upload (config.json, kernels, manifest, holdout).
form_body matmul_upload();

class dashboard_under_test {
  public:
    explicit dashboard_under_test(std::size_t max_upload_bytes = 1u << 20,
                                  std::size_t max_file_bytes = 256u << 10);
    /// Any settings (the token is the test's).
    explicit dashboard_under_test(dashboard_settings settings);
    ~dashboard_under_test();
    unsigned short port() const { return m_dashboard->port(); }
    const spool& jobs() const { return m_spool; }
    const std::filesystem::path& root() const { return m_dir.path(); }
    http_reply get(const std::string& target, const header_list& headers = bearer()) const;
    http_reply post(const std::string& target, const header_list& headers = bearer(),
                    const std::string& body = "") const;

  private:
    scratch_folder m_dir;
    spool m_spool;
    boost::asio::io_context m_io;
    std::unique_ptr<http_dashboard> m_dashboard;
    std::thread m_loop;
};

/// A job as the daemon leaves it: committed, then `state` with progress (iteration 2, 7
/// attempts, 2.5x), `reason`, a job.log, and a run folder results/run-001 with a report.html
/// and best.cu. Returns the id.
std::string place_job(const spool& s, job_state state, const std::string& reason = "");

/// The files of the staging folder (every file below SPOOL/staging).
std::vector<std::filesystem::path> staged_files(const spool& s);

}  // namespace cuopt::test
