#pragma once
/// `cuda-optimizer serve`: the daemon. One Boost.Asio event loop runs the hardware queue (one
/// job per GPU, or per Slurm slot; highest priority first, FIFO within), polls the running
/// jobs, takes cancellations, stops cleanly on SIGINT/SIGTERM, and serves the dashboard
/// (--http). On start it resumes the jobs a previous daemon left running (optimize --resume),
/// re-attaches to Slurm jobs by id, and never starts a job that already ended.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/service/job_executor.hpp"
#include "orchestrator/service/submit_server.hpp"

namespace cuopt {

struct dashboard_settings {
    std::string address = "127.0.0.1";         // loopback unless told otherwise
    unsigned short port = 0;                   // 0: any free port (printed)
    std::string token;                         // every request needs it, or a session it opened
    std::size_t max_upload_bytes = 64u << 20;  // one intake request's body
    std::size_t max_file_bytes = 16u << 20;    // one uploaded file
    double job_time_limit_s = 86400;  // serve's --job-time-limit: a longer --timeout is refused
    std::uintmax_t max_spool_bytes_per_user = std::uintmax_t{4096} << 20;  // the web's jobs, all
    int max_jobs = 16;     // the web's queued + running jobs (serve --max-jobs-per-user)
    int max_priority = 0;  // the highest priority a web job may ask for (--web-max-priority)
    double session_idle_s = 3600;        // a browser session ends this long after its last request
    double session_max_s = 12 * 3600.0;  // ... and this long after sign-in
};

struct daemon_settings {
    std::filesystem::path spool;
    std::vector<int> devices{0};
    std::string executor = "local";  // local | slurm
    slurm_settings slurm;
    std::optional<dashboard_settings> http;
    std::filesystem::path optimizer;  // this cuda-optimizer (absolute)
    std::filesystem::path harness;    // the cuda-harness every job uses (absolute)
    std::filesystem::path sanitizer;  // compute-sanitizer for every job ("" = optimize's default)
    bool allow_unconfined = false;    // jobs may run where the harness cannot confine itself
    double poll_s = 0.25;             // how often running jobs are polled (slurm: 2 s at least)
    double job_time_limit_s =
        86400;  // a job running longer is cancelled and failed (slurm: --time)
    double keep_jobs_s =
        30 * 86400.0;  // ended jobs are removed this long after they ended (0: kept)
    bool quiet = false;
    submit_settings submit;  // SPOOL/submit.sock: who may submit, see and cancel, and how much
};

/// Runs until SIGINT/SIGTERM (or `stop_after_idle_s` > 0 seconds with nothing queued or
/// running, for tests); returns the exit code (0, or 26 when the spool cannot be used, 64
/// when another daemon holds the spool).
int run_daemon(const daemon_settings& settings, double stop_after_idle_s = 0);

}  // namespace cuopt
