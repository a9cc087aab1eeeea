#pragma once
/// The daemon's commands: `serve` (the daemon), `submit` (queue a job into a spool), `status`
/// (the queue or one job) and `cancel` (ask for a job's end). The spool's owner (the operator)
/// may submit, list and cancel through the spool folder alone, with no daemon running; every
/// other user goes through the daemon's socket (SPOOL/submit.sock), which knows who asks.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/job_intake.hpp"

namespace cuopt {

struct daemon_cli {
    CLI::App *serve = nullptr, *submit = nullptr, *status = nullptr, *cancel = nullptr;
    std::string spool;
    // serve
    daemon_settings settings;
    std::string devices = "0", http, token_file, serve_config;
    double stop_when_idle_s = 0;
    double max_upload_mb = 64, max_file_mb = 16;
    std::string operators;                // a group whose members may see and cancel every job
    int max_jobs_per_user = 16;           // queued + running jobs per submitting uid (the socket)
    double max_spool_mb_per_user = 4096;  // what one user's jobs may hold in the spool, MiB
    double keep_jobs_days = 30;           // ended jobs are removed after this (0: kept)
    int web_max_priority = 0;             // the highest priority a dashboard job may ask for
    double session_idle_minutes = 60;     // a dashboard session ends after this idle time
    double session_hours = 12;            // ... or this long after sign-in
    // submit
    submission sub;
    bool gate = false;
    // status / cancel
    std::string job;
    bool json = false;
    std::string harness, sanitizer;
};

/// Adds serve, submit, status and cancel to the app.
void add_daemon_commands(CLI::App& app, daemon_cli& d);

/// Runs whichever of them was parsed; nullopt when none was.
std::optional<int> run_daemon_command(daemon_cli& d);

}  // namespace cuopt
