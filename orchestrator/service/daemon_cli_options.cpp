// serve, submit, status and cancel's flags, each defined once on daemon_cli with its default
// and one sentence of help, and their help's examples and exit codes.
#include <cmath>
#include <cstdlib>

#include "common/cli_value_checks.hpp"
#include "orchestrator/service/job_limits.hpp"
#include "orchestrator/service/serve_command.hpp"

namespace cuopt {

namespace {

const char* k_serve_footer = R"(
Example:
  cuda-optimizer serve --spool /srv/cuopt --devices 0,1 --http 127.0.0.1:8470
  cuda-optimizer submit --spool /srv/cuopt --config examples/matmul/config.json
  cuda-optimizer status --spool /srv/cuopt

Submitted kernels run on the GPU machine: run serve as an unprivileged user on a machine
without secrets. The dashboard listens on loopback unless --http names another address, and
every request needs the token kept in --token-file (default SPOOL/dashboard.token, made 0600;
refused unless owned by serve's user, mode 0600, 128 bits at least: 32 hex digits or 22
base64url characters).
Exit codes: 0 stopped by SIGINT/SIGTERM (running jobs resume at the next start); 26 the spool
cannot be used; 64 bad command line, or another daemon serves the spool.
)";

void add_spool_option(CLI::App* c, daemon_cli& d, bool required = true) {
    CLI::Option* o =
        c->add_option("--spool", d.spool, "The spool folder (made by serve or the first submit)")
            ->type_name("DIR");
    if (required) o->required();
}

// The dashboard's: where it listens, its token, its sessions and what its jobs may ask for.
void add_dashboard_options(CLI::App* s, daemon_cli& d) {
    s->add_option("--http", d.http, "Serve the dashboard on ADDR:PORT (port 0: any free one)")
        ->type_name("ADDR:PORT");
    s->add_option("--token-file", d.token_file,
                  "The dashboard's token (default SPOOL/dashboard.token): read, or made there 0600")
        ->type_name("FILE");
    s->add_option("--web-max-priority", d.web_max_priority,
                  "The highest priority a job queued from the dashboard may ask for (socket "
                  "submitters: 0, operators any)")
        ->capture_default_str()
        ->check(CLI::Range(-1000, 1000));
    s->add_option("--session-idle-minutes", d.session_idle_minutes,
                  "A dashboard session ends after this long without a request")
        ->capture_default_str()
        ->check(number_from(1.0, 10080.0, "minutes"));
    s->add_option("--session-hours", d.session_hours,
                  "A dashboard session ends this long after sign-in, however busy")
        ->capture_default_str()
        ->check(number_from(0.1, 720.0, "hours"));
}

void add_serve(CLI::App& app, daemon_cli& d) {
    CLI::App* s = d.serve = app.add_subcommand(
        "serve", "The daemon: runs the spool's jobs, one per GPU (or on Slurm), with a dashboard");
    add_spool_option(s, d, false);  // or in --config
    s->add_option("--config", d.serve_config,
                  "serve's options as JSON: keys are the flags without -- (slurm_partition, "
                  "devices, ...); relative paths are the file's; flags given win")
        ->type_name("FILE");
    s->add_option("--devices", d.devices, "GPU indices, one job on each at a time")
        ->capture_default_str();
    s->add_option("--executor", d.settings.executor, "local | slurm")
        ->capture_default_str()
        ->check(CLI::IsMember({"local", "slurm"}));
    add_dashboard_options(s, d);
    s->add_option("--max-upload-mb", d.max_upload_mb,
                  "Largest intake upload or socket submission, MiB")
        ->capture_default_str()
        ->check(positive_number("MiB", 65536));
    s->add_option("--max-file-mb", d.max_file_mb, "Largest uploaded file, MiB")
        ->capture_default_str()
        ->check(positive_number("MiB", 65536));
    s->add_option("--operators", d.operators,
                  "A group whose members may see and cancel every user's jobs")
        ->type_name("GROUP");
    s->add_option("--max-jobs-per-user", d.max_jobs_per_user,
                  "Queued and running jobs one user may have; the dashboard's jobs count as one "
                  "user")
        ->capture_default_str()
        ->check(whole_number_from(1, 100000));
    s->add_option("--max-spool-mb-per-user", d.max_spool_mb_per_user,
                  "What one user's jobs (queued, running and kept) may hold in the spool, MiB; "
                  "the dashboard's jobs count as one user (0: no limit)")
        ->capture_default_str()
        ->check(number_from(0.0, 1e9, "MiB"));
    s->add_option("--keep-jobs", d.keep_jobs_days,
                  "Days an ended job (its files, run folder and log) is kept before it is "
                  "removed (0: kept until removed by hand)")
        ->capture_default_str()
        ->check(number_from(0.0, 36500.0, "days"));
    s->add_option("--harness", d.harness, "cuda-harness every job uses (default: beside this)")
        ->type_name("FILE");
    s->add_option("--sanitizer", d.sanitizer,
                  "compute-sanitizer every job uses (default: optimize's: PATH, then the toolkit)")
        ->type_name("FILE");
    s->add_flag("--allow-unconfined", d.settings.allow_unconfined,
                "Run jobs even where the harness cannot confine itself (no Landlock): their "
                "kernels can then read any file this user can");
    s->add_option("--slurm-partition", d.settings.slurm.partition, "sbatch --partition");
    s->add_option("--slurm-time", d.settings.slurm.time_limit, "sbatch --time (per job)");
    s->add_option("--slurm-account", d.settings.slurm.account, "sbatch --account");
    s->add_option("--slurm-gres", d.settings.slurm.gres, "sbatch --gres (\"\" for none)")
        ->capture_default_str();
    s->add_option("--slurm-max-jobs", d.settings.slurm.max_jobs, "Jobs in Slurm at once")
        ->capture_default_str()
        ->check(whole_number_from(1, 100000));
    s->add_option("--slurm-arg", d.settings.slurm.extra, "One more sbatch argument (repeatable)")
        ->allow_extra_args(false);
    s->add_option("--job-time-limit", d.settings.job_time_limit_s,
                  "Seconds a job may run before it is cancelled and failed (Slurm: --time when "
                  "--slurm-time is not given); a job's --timeout may not exceed it")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](std::string& text) {
                char* end = nullptr;
                const double x = std::strtod(text.c_str(), &end);
                return end && *end == '\0' && !text.empty() ? job_time_limit_problem(x)
                                                            : job_time_limit_problem(std::nan(""));
            },
            "SECONDS"));
    s->add_option("--poll", d.settings.poll_s, "Seconds between looks at running jobs")
        ->capture_default_str()
        ->check(duration_seconds());
    s->add_option("--stop-when-idle", d.stop_when_idle_s,
                  "Exit after this many seconds with nothing queued or running (scripts, CI)")
        ->check(non_negative_number(30 * k_max_duration_s, "s"));
    s->add_flag("--quiet", d.settings.quiet, "No progress lines");
    s->footer(k_serve_footer);
}

void add_submit(CLI::App& app, daemon_cli& d) {
    CLI::App* s = d.submit = app.add_subcommand(
        "submit",
        "Queue a job: copies the files it names into the spool, read-only with their sha256, "
        "runs check on the copy, and queues it; flags after the known ones go to optimize");
    add_spool_option(s, d);
    s->add_option("--config", d.sub.config, "The job's config (files relative to it)");
    s->add_flag("--gate", d.gate, "A gate job: rerun an accepted run (--accepted)");
    s->add_option("--accepted", d.sub.accepted, "The gate job's accepted run folder");
    s->add_option("--priority", d.sub.priority, "Higher runs first (FIFO within)")
        ->capture_default_str();
    s->add_option("--harness", d.harness, "cuda-harness check uses (default: beside this)");
    s->add_flag("--json", d.json, "Print {\"job\": ID} on stdout");
    s->allow_extras();
    s->footer(
        "\nExample:\n  cuda-optimizer submit --spool /srv/cuopt --config "
        "examples/matmul/config.json --max-iterations 3\n  cuda-optimizer submit --spool "
        "/srv/cuopt --gate --accepted results/run-001\n\nExit codes: 0 queued (the job id on "
        "stdout); 11 the job was refused (the message names the file and field; check's table "
        "when check refused it); 26 the spool cannot be used (or the daemon's socket cannot be "
        "reached); 64 bad command line.");
}

void add_status_and_cancel(CLI::App& app, daemon_cli& d) {
    d.status = app.add_subcommand("status", "The spool's jobs, or one job, with their progress");
    add_spool_option(d.status, d);
    d.status->add_option("job", d.job, "One job's id (job-NNNNNN)");
    d.status->add_flag("--json", d.json, "JSON (what the dashboard's /api/jobs serves)");
    d.status->footer(
        "\nExample:\n  cuda-optimizer status --spool /srv/cuopt\n  cuda-optimizer status "
        "--spool /srv/cuopt job-000012 --json\n\nExit codes: 0 listed; 11 no such job (or "
        "not yours), or the spool is not one; 26 the daemon's socket cannot be reached; 64 bad "
        "command line.");
    d.cancel = app.add_subcommand("cancel", "Ask the daemon to end a queued or running job");
    add_spool_option(d.cancel, d);
    d.cancel->add_option("job", d.job, "The job's id")->required();
    d.cancel->footer(
        "\nExample:\n  cuda-optimizer cancel --spool /srv/cuopt job-000012\n\nExit codes: 0 "
        "cancel requested (the daemon ends the job at its next poll); 11 no such job (or not "
        "yours), or it has already ended; 26 the daemon's socket cannot be reached; 64 bad "
        "command line.");
}

}  // namespace

void add_daemon_commands(CLI::App& app, daemon_cli& d) {
    add_serve(app, d);
    add_submit(app, d);
    add_status_and_cancel(app, d);
}

}  // namespace cuopt
