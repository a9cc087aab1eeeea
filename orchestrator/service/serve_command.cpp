#include "orchestrator/service/serve_command.hpp"

#include <grp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "orchestrator/commands/cli_options.hpp"
#include "orchestrator/commands/commands.hpp"
#include "orchestrator/commands/device_list.hpp"
#include "orchestrator/service/job_limits.hpp"
#include "orchestrator/service/spool.hpp"
#include "orchestrator/service/submit_client.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

const char* k_serve_footer = R"(
Example:
  cuda-optimizer serve --spool /srv/cuopt --devices 0,1 --http 127.0.0.1:8470
  cuda-optimizer submit --spool /srv/cuopt --config examples/matmul/config.json
  cuda-optimizer status --spool /srv/cuopt

Submitted kernels run on the GPU machine: run serve as an unprivileged user on a machine
without secrets. The dashboard listens on loopback unless --http names another address, and
every request needs the token printed at start (or kept in --token-file).
Exit codes: 0 stopped by SIGINT/SIGTERM (running jobs resume at the next start); 26 the spool
cannot be used; 64 bad command line, or another daemon serves the spool.
)";

fs::path self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? fs::path(std::string(buf, static_cast<std::size_t>(n))) : fs::path();
}

void add_spool_option(CLI::App* c, daemon_cli& d, bool required = true) {
    CLI::Option* o =
        c->add_option("--spool", d.spool, "The spool folder (made by serve or the first submit)")
            ->type_name("DIR");
    if (required) o->required();
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
    s->add_option("--http", d.http, "Serve the dashboard on ADDR:PORT (port 0: any free one)")
        ->type_name("ADDR:PORT");
    s->add_option("--token-file", d.token_file,
                  "The dashboard's token: read from this file, or made and written there (0600)")
        ->type_name("FILE");
    s->add_option("--max-upload-mb", d.max_upload_mb,
                  "Largest intake upload or socket submission, MiB")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    s->add_option("--max-file-mb", d.max_file_mb, "Largest uploaded file, MiB")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    s->add_option("--operators", d.operators,
                  "A group whose members may see and cancel every user's jobs")
        ->type_name("GROUP");
    s->add_option("--max-jobs-per-user", d.max_jobs_per_user,
                  "Queued and running jobs one user may have (socket submissions)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
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
        ->check(CLI::PositiveNumber);
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
        ->check(CLI::PositiveNumber);
    s->add_option("--stop-when-idle", d.stop_when_idle_s,
                  "Exit after this many seconds with nothing queued or running (scripts, CI)");
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
        "\nExit codes: 0 queued (the job id on stdout); 11 the job was refused (the message "
        "names the file and field; check's table when check refused it); 26 the spool cannot "
        "be used; 64 bad command line.");
}

void add_status_and_cancel(CLI::App& app, daemon_cli& d) {
    d.status = app.add_subcommand("status", "The spool's jobs, or one job, with their progress");
    add_spool_option(d.status, d);
    d.status->add_option("job", d.job, "One job's id (job-NNNNNN)");
    d.status->add_flag("--json", d.json, "JSON (what the dashboard's /api/jobs serves)");
    d.cancel = app.add_subcommand("cancel", "Ask the daemon to end a queued or running job");
    add_spool_option(d.cancel, d);
    d.cancel->add_option("job", d.job, "The job's id")->required();
}

// The token: from the file when it holds one, else 32 random bytes in hex (written there 0600).
std::string dashboard_token(const std::string& file) {
    if (!file.empty() && fs::is_regular_file(file)) {
        std::string t = read_text_file(file);
        while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
        if (t.size() < 16) throw std::runtime_error(file + ": a token of 16 characters at least");
        return t;
    }
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes");
    std::ostringstream hex;
    for (const unsigned char b : bytes)
        hex << std::hex << std::setw(2) << std::setfill('0') << int(b);
    if (!file.empty()) {
        const mode_t old = ::umask(077);
        write_file_atomic(file, hex.str() + "\n");
        ::umask(old);
        ::chmod(file.c_str(), 0600);
    }
    return hex.str();
}

// The spool is the daemon user's: all it makes is 0600/0700 (umask 077), a spool of another
// user is refused, and one made before (or by an operator's umask) loses group and other bits.
std::string secure_spool(const std::string& root) {
    ::umask(077);
    if (std::string why = spool_owner_problem(root); !why.empty()) return why;
    secure_spool_modes(spool(root));
    return "";
}

// What the submission socket allows; "" or why the flags cannot be used.
std::string submit_settings_of(const daemon_cli& d, daemon_settings& s) {
    s.submit.optimizer = s.optimizer;
    s.submit.harness = s.harness;
    s.submit.max_upload_bytes = static_cast<std::size_t>(d.max_upload_mb * (1 << 20));
    s.submit.max_jobs_per_user = d.max_jobs_per_user;
    s.submit.operators = d.operators;
    if (!d.operators.empty() && ::getgrnam(d.operators.c_str()) == nullptr)
        return "--operators " + d.operators + ": no such group";
    return "";
}

int run_serve(daemon_cli& d) {
    if (!d.serve_config.empty()) {
        try {
            optimizer_options unused;  // the file is read as optimize reads its config
            unused.config = d.serve_config;
            apply_config(d.serve, unused);
        } catch (const std::exception& e) {
            std::cerr << "cuda-optimizer serve: " << e.what() << "\n";
            return to_int(exit_code::usage);
        }
    }
    if (d.spool.empty()) {
        std::cerr << "cuda-optimizer serve: --spool is required (on the command line or in "
                     "--config)\n";
        return to_int(exit_code::usage);
    }
    try {
        if (const std::string why = secure_spool(d.spool); !why.empty()) {
            std::cerr << "cuda-optimizer serve: " << why << "\n";
            return to_int(exit_code::io_error);
        }
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer serve: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
    daemon_settings s = d.settings;
    s.spool = d.spool;
    if (const std::string bad = device_list_problem(d.devices); !bad.empty()) {
        std::cerr << "cuda-optimizer serve: --devices: " << bad << "\n";
        return to_int(exit_code::usage);
    }
    s.devices = parse_device_list(d.devices);
    s.optimizer = self_path();
    s.harness = fs::absolute(d.harness.empty() ? default_harness_path() : d.harness);
    if (!d.sanitizer.empty()) s.sanitizer = fs::absolute(d.sanitizer);
    if (!d.http.empty()) {
        const std::size_t colon = d.http.rfind(':');
        dashboard_settings h;
        try {
            if (colon == std::string::npos) throw std::invalid_argument("no port");
            h.address = d.http.substr(0, colon);
            const int port = std::stoi(d.http.substr(colon + 1));
            if (port < 0 || port > 65535) throw std::out_of_range("port");
            h.port = static_cast<unsigned short>(port);
            h.token = dashboard_token(d.token_file);
        } catch (const std::runtime_error& e) {
            std::cerr << "cuda-optimizer serve: --token-file: " << e.what() << "\n";
            return to_int(exit_code::usage);
        } catch (const std::exception&) {
            std::cerr << "cuda-optimizer serve: --http " << d.http
                      << ": expected ADDR:PORT, e.g. 127.0.0.1:8470\n";
            return to_int(exit_code::usage);
        }
        h.max_upload_bytes = static_cast<std::size_t>(d.max_upload_mb * (1 << 20));
        h.max_file_bytes = static_cast<std::size_t>(d.max_file_mb * (1 << 20));
        s.http = h;
    }
    if (const std::string bad = submit_settings_of(d, s); !bad.empty()) {
        std::cerr << "cuda-optimizer serve: " << bad << "\n";
        return to_int(exit_code::usage);
    }
    return run_daemon(s, d.stop_when_idle_s);
}

int run_submit(daemon_cli& d) {
    d.sub.kind = d.gate ? "gate" : "optimize";
    d.sub.args = d.submit->remaining();
    d.sub.submitted_by = "cli";
    if (!owns_spool(d.spool)) return submit_through_daemon(d.spool, d.sub, self_path(), d.json);
    // The operator, on its own spool: recorded like any submitter.
    d.sub.submitter_uid = static_cast<int>(::geteuid());
    const passwd* pw = ::getpwuid(::geteuid());
    d.sub.submitter = pw ? std::string(pw->pw_name) : "uid-" + std::to_string(::geteuid());
    const fs::path harness = fs::absolute(d.harness.empty() ? default_harness_path() : d.harness);
    try {
        const spool s(d.spool);
        const std::string id = submit_job(s, d.sub, self_path(), harness);
        if (d.json)
            std::cout << "{\"job\": \"" << id << "\"}\n";
        else
            std::cout << id << "\n";
        return 0;
    } catch (const intake_error& e) {
        if (!e.check_table.empty()) std::cerr << e.check_table;
        std::cerr << "cuda-optimizer " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer submit: " << e.what() << "\n";
        return to_int(exit_code::io_error);
    }
}

void print_status_line(const job_spec& spec, const job_status& st) {
    std::string progress = "-";
    if (st.attempts > 0)
        progress =
            "it " + std::to_string(st.iteration) + ", " + std::to_string(st.attempts) + " att";
    char best[32] = "-";
    if (st.best_speedup > 0) std::snprintf(best, sizeof best, "%.2fx", st.best_speedup);
    std::printf("%-11s %-9s %-8s %4d  %-18s %-7s %s\n", st.id.c_str(), to_string(st.state).c_str(),
                spec.kind.c_str(), spec.priority, progress.c_str(), best, st.reason.c_str());
}

int run_status(daemon_cli& d) {
    if (!owns_spool(d.spool)) return status_through_daemon(d.spool, d.job, d.json);
    try {
        const spool s(d.spool, false);
        if (!d.job.empty()) {
            if (d.json) {
                std::cout << job_json(s, d.job) << "\n";
                return 0;
            }
            print_status_line(s.read_spec(d.job), s.read_status(d.job));
            return 0;
        }
        if (d.json) {
            std::cout << jobs_json(s) << "\n";
            return 0;
        }
        std::printf("%-11s %-9s %-8s %4s  %-18s %-7s %s\n", "JOB", "STATE", "KIND", "PRIO",
                    "PROGRESS", "BEST", "REASON");
        for (const std::string& id : s.job_ids())
            print_status_line(s.read_spec(id), s.read_status(id));
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer status: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

int run_cancel(daemon_cli& d) {
    if (!owns_spool(d.spool)) return cancel_through_daemon(d.spool, d.job);
    try {
        const spool s(d.spool, false);
        if (!s.request_cancel(d.job)) {
            std::cerr << "cuda-optimizer cancel: " << d.job
                      << ": no such job, or it has already ended\n";
            return to_int(exit_code::invalid_request);
        }
        std::cout << d.job << ": cancel requested\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "cuda-optimizer cancel: " << e.what() << "\n";
        return to_int(exit_code::invalid_request);
    }
}

}  // namespace

void add_daemon_commands(CLI::App& app, daemon_cli& d) {
    add_serve(app, d);
    add_submit(app, d);
    add_status_and_cancel(app, d);
}

std::optional<int> run_daemon_command(daemon_cli& d) {
    if (d.serve->parsed()) return run_serve(d);
    if (d.submit->parsed()) return run_submit(d);
    if (d.status->parsed()) return run_status(d);
    if (d.cancel->parsed()) return run_cancel(d);
    return std::nullopt;
}

}  // namespace cuopt
