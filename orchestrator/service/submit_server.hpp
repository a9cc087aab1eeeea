#pragma once
/// The daemon's submission socket, SPOOL/submit.sock: how a user other than the spool's owner
/// queues, lists and cancels jobs. Nobody but the daemon writes into the spool: a submitter
/// streams its files, the daemon learns who it is from the socket (SO_PEERCRED), stores the
/// copy in staging/, checks it (submit_job) and queues it under that uid. One request, one JSON
/// reply, one connection; see submit_client.hpp for the messages.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "orchestrator/service/spool.hpp"

namespace boost::asio {
class io_context;
}

namespace cuopt {

/// What the socket allows and how it checks a submission.
struct submit_settings {
    std::filesystem::path optimizer;           // runs `check` on a staged job
    std::filesystem::path harness;             // the harness check uses
    std::size_t max_upload_bytes = 64u << 20;  // one submission's files, decoded
    int max_jobs_per_user = 16;                // queued + running jobs of one submitting uid
    std::uintmax_t max_spool_bytes_per_user = std::uintmax_t{4096} << 20;  // queued+kept, 0: none
    std::string operators;            // a group whose members may see and cancel every job
    double read_timeout_s = 30;       // a request must arrive whole within this
    double job_time_limit_s = 86400;  // serve's --job-time-limit: a longer --timeout is refused
};

/// Listens on SPOOL/submit.sock (0666) on the daemon's event loop; `check` runs on worker
/// threads. Construct it only while holding the spool's lock: it empties staging/ first
/// (uploads a crashed daemon left). A socket that cannot be made is said in one line on stderr
/// and leaves the daemon without one (the owner can still submit directly).
class submit_server {
  public:
    submit_server(boost::asio::io_context& io, const spool& s, submit_settings settings);
    ~submit_server();
    submit_server(const submit_server&) = delete;
    submit_server& operator=(const submit_server&) = delete;

    /// SPOOL/submit.sock
    static std::filesystem::path socket_path(const spool& s);

  private:
    struct impl;
    std::shared_ptr<impl> m_impl;
};

/// Whether `uid` may see and cancel every job: root, the daemon's own user, or a member of the
/// `operators` group (its primary group or one getgrouplist gives for its name).
bool is_operator(unsigned uid, unsigned gid, const std::string& operators);

}  // namespace cuopt
