#pragma once
/// The daemon's web dashboard (--http): the queue, a job page with live progress and its
/// report.html, and an intake form (upload a job's files, see `check`'s table, then queue it).
/// Served by Boost.Beast on the daemon's io_context. Every request needs the token, a browser
/// session sent as a header, or a one-time ticket (dashboard_auth.hpp); without any, a page's
/// address gets only the shell (no data), whose script signs in. A session's state-changing
/// request must also come from the dashboard's own Origin. Uploads are size-limited and their
/// names checked (job_intake.hpp upload_name_problem).

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <memory>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

class http_dashboard {
  public:
    /// Binds settings.address:settings.port (throws std::runtime_error naming them when it
    /// cannot) and starts accepting on `io`.
    http_dashboard(boost::asio::io_context& io, const spool& s, const dashboard_settings& settings,
                   std::filesystem::path optimizer, std::filesystem::path harness);
    ~http_dashboard();
    unsigned short port() const;  // the bound port (useful with port 0)
    void stop();

  private:
    struct impl;
    std::unique_ptr<impl> m_impl;
};

}  // namespace cuopt
