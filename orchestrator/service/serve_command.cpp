#include "orchestrator/service/serve_command.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "common/cli_config.hpp"
#include "common/device_list.hpp"
#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "orchestrator/service/dashboard_token_file.hpp"
#include "orchestrator/service/spool.hpp"
#include "orchestrator/service/submit_client.hpp"

namespace cuopt {

namespace {

namespace fs = std::filesystem;

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

std::optional<int> run_daemon_command(daemon_cli& d) {
    if (d.serve->parsed()) return run_serve(d);
    if (d.submit->parsed()) return run_submit(d);
    if (d.status->parsed()) return run_status(d);
    if (d.cancel->parsed()) return run_cancel(d);
    return std::nullopt;
}

}  // namespace cuopt
