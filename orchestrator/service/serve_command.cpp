#include "orchestrator/service/serve_command.hpp"

#include <fcntl.h>
#include <grp.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/cli_config.hpp"
#include "common/cli_value_checks.hpp"
#include "common/device_list.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
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
every request needs the token kept in --token-file (default SPOOL/dashboard.token, made 0600;
refused unless owned by serve's user, mode 0600, 128 bits at least: 32 hex digits or 22
base64url characters).
Exit codes: 0 stopped by SIGINT/SIGTERM (running jobs resume at the next start); 26 the spool
cannot be used; 64 bad command line, or another daemon serves the spool.
)";

fs::path self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? fs::path(std::string(buf, static_cast<std::size_t>(n))) : fs::path();
}

// The cuda-harness installed beside this cuda-optimizer (as optimize finds it), else PATH's.
fs::path harness_beside_self() {
    const fs::path beside = self_path().parent_path() / "cuda-harness";
    std::error_code ec;
    return fs::exists(beside, ec) ? beside : fs::path("cuda-harness");
}

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

// The dashboard's token file, held to the rules OpenSSH holds a private key to: a regular file
// (not a link), owned by serve's user, readable by nobody else, holding a token of 128 bits at
// least: 32 or more hex digits, or 22 or more characters of base64url (or base64), nothing
// else but a final newline. serve makes a missing file itself: 32 random bytes in hex, 0600.
constexpr std::size_t k_min_hex_token_chars = 32;     // 4 bits a character
constexpr std::size_t k_min_base64_token_chars = 22;  // 6 bits a character
constexpr std::size_t k_max_token_file_bytes = 4096;

std::string token_strength_problem(const std::string& t) {
    bool all_hex = true;
    for (const unsigned char c : t) {
        if (!std::isalnum(c) && c != '-' && c != '_' && c != '+' && c != '/' && c != '=')
            return "the token may hold only hex digits or base64url characters (one line)";
        all_hex = all_hex && std::isxdigit(c);
    }
    if (all_hex && t.size() < k_min_hex_token_chars)
        return "the token has " + std::to_string(t.size()) +
               " hex digits; 32 at least (128 bits), e.g. openssl rand -hex 32";
    if (t.size() < k_min_base64_token_chars)
        return "the token has " + std::to_string(t.size()) +
               " characters; 22 base64url characters at least (128 bits)";
    return "";
}

std::string make_token_file(const fs::path& file) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes");
    std::ostringstream hex;
    for (const unsigned char b : bytes)
        hex << std::hex << std::setw(2) << std::setfill('0') << int(b);
    const std::string text = hex.str() + "\n";
    // O_EXCL|O_NOFOLLOW: never through a link or over a file someone placed there meanwhile.
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          S_IRUSR | S_IWUSR);
    if (fd < 0)
        throw std::runtime_error(file.string() + ": cannot be made: " + std::strerror(errno));
    const bool ok = ::fchmod(fd, 0600) == 0 &&
                    ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                    ::fsync(fd) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok) throw std::runtime_error(file.string() + ": cannot be written: " + std::strerror(err));
    return hex.str();
}

// What is wrong with the opened token file's owner, type or mode ("" when nothing). Judged on
// the descriptor (fstat), so the file judged is the file read.
std::string token_file_problem(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
    if (!S_ISREG(st.st_mode)) return "is not a regular file";
    if (st.st_uid != ::geteuid())
        return "is owned by uid " + std::to_string(st.st_uid) + ", not by serve's user (uid " +
               std::to_string(::geteuid()) + "); chown it or make a new one";
    if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return std::string("has mode ") + mode +
               ": other users may read or change it (chmod 600, and make a new token)";
    }
    return "";
}

// The token from `file` when it is there and passes the rules; else a new one written there.
// Throws std::runtime_error("FILE: what is wrong").
std::string dashboard_token(const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) return make_token_file(file);
    if (fd < 0 && errno == ELOOP)
        throw std::runtime_error(file.string() + ": is a symbolic link; name the file itself");
    if (fd < 0) throw std::runtime_error(file.string() + ": " + std::strerror(errno));
    std::string problem = token_file_problem(fd), t;
    if (problem.empty()) {
        char buf[k_max_token_file_bytes + 1];
        ssize_t n = 0, got = 0;
        while ((n = ::read(fd, buf + got, sizeof buf - static_cast<std::size_t>(got))) > 0)
            got += n;
        t.assign(buf, static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
        if (n < 0) problem = std::string("cannot be read: ") + std::strerror(errno);
        if (t.size() > k_max_token_file_bytes) problem = "is over 4096 bytes: not a token file";
    }
    ::close(fd);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (problem.empty()) problem = token_strength_problem(t);
    if (!problem.empty()) throw std::runtime_error(file.string() + ": " + problem);
    return t;
}

// Without --token-file the token lives in the spool, which is serve's own (secure_spool made
// it, or took group and other bits off it, before this is called).
fs::path default_token_file(const fs::path& spool_dir) {
    return spool_dir / "dashboard.token";
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
    s.submit.max_spool_bytes_per_user =
        static_cast<std::uintmax_t>(d.max_spool_mb_per_user * (1 << 20));
    s.keep_jobs_s = d.keep_jobs_days * 86400;
    s.submit.operators = d.operators;
    s.submit.job_time_limit_s = s.job_time_limit_s;
    if (!d.operators.empty() && ::getgrnam(d.operators.c_str()) == nullptr)
        return "--operators " + d.operators + ": no such group";
    return "";
}

int run_serve(daemon_cli& d) {
    if (!d.serve_config.empty()) {
        try {  // read as optimize reads its config
            json_options_rules rules;
            rules.paths = {"spool", "token_file", "harness", "sanitizer"};
            const fs::path file = fs::absolute(d.serve_config);
            apply_json_options(d.serve, read_text_file(file), file, rules);
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
    s.harness = fs::absolute(d.harness.empty() ? harness_beside_self() : fs::path(d.harness));
    if (!d.sanitizer.empty()) s.sanitizer = fs::absolute(d.sanitizer);
    if (const std::string bad = submit_settings_of(d, s); !bad.empty()) {
        std::cerr << "cuda-optimizer serve: " << bad << "\n";
        return to_int(exit_code::usage);
    }
    if (!d.http.empty()) {
        const std::size_t colon = d.http.rfind(':');
        dashboard_settings h;
        fs::path token_file;
        try {
            if (colon == std::string::npos) throw std::invalid_argument("no port");
            h.address = d.http.substr(0, colon);
            const int port = std::stoi(d.http.substr(colon + 1));
            if (port < 0 || port > 65535) throw std::out_of_range("port");
            h.port = static_cast<unsigned short>(port);
            token_file =
                d.token_file.empty() ? default_token_file(s.spool) : fs::path(d.token_file);
            h.token = dashboard_token(token_file);
        } catch (const std::runtime_error& e) {  // one line, as OpenSSH refuses a bad key
            std::cerr << "cuda-optimizer serve: --token-file: " << e.what() << "\n";
            return to_int(exit_code::usage);
        } catch (const std::exception&) {
            std::cerr << "cuda-optimizer serve: --http " << d.http
                      << ": expected ADDR:PORT, e.g. 127.0.0.1:8470\n";
            return to_int(exit_code::usage);
        }
        h.max_upload_bytes = static_cast<std::size_t>(d.max_upload_mb * (1 << 20));
        h.max_file_bytes = static_cast<std::size_t>(d.max_file_mb * (1 << 20));
        h.job_time_limit_s = s.job_time_limit_s;
        h.max_spool_bytes_per_user = s.submit.max_spool_bytes_per_user;
        h.max_jobs = d.max_jobs_per_user;
        h.max_priority = d.web_max_priority;
        h.session_idle_s = d.session_idle_minutes * 60;
        h.session_max_s = d.session_hours * 3600;
        s.http = h;
        // Where the token is, never the token: printed lines end up in journals and scrollback.
        if (!s.quiet)
            std::cout << "cuda-optimizer serve: the dashboard's token is in " << token_file.string()
                      << " (sign in on the dashboard's page with it)" << std::endl;
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
    const fs::path harness =
        fs::absolute(d.harness.empty() ? harness_beside_self() : fs::path(d.harness));
    try {
        const spool s(d.spool);
        const std::string id = submit_job(s, d.sub, self_path(), harness);
        if (d.json)
            std::cout << one_member_json("job", id) << "\n";
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

int run_status(daemon_cli& d) {
    if (!owns_spool(d.spool)) return status_through_daemon(d.spool, d.job, d.json);
    try {
        const spool s(d.spool, false);
        const std::string json = d.job.empty() ? jobs_json(s) : job_json(s, d.job);
        if (d.json)
            std::cout << json << "\n";
        else
            std::cout << (d.job.empty() ? queue_text(json) : job_text(json, d.spool));
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
