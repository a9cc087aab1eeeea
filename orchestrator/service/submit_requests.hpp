#pragma once
/// What one request on SPOOL/submit.sock gets, apart from the socket that carries it: who sent
/// it (peer, from SO_PEERCRED), a refusal with the exit code the client then returns, and the
/// answers to submit (the upload staged and checked), status and cancel, each as one JSON line.

#include <rapidjson/document.h>

#include <stdexcept>
#include <string>

#include "common/exit_codes.hpp"
#include "orchestrator/service/spool.hpp"
#include "orchestrator/service/submit_server.hpp"

namespace cuopt {

/// Who is on the other end of the socket, as the kernel says (SO_PEERCRED), never as it says.
struct peer {
    unsigned uid = 0, gid = 0;
    std::string name;
    bool privileged = false;  // may see and cancel every job
};

/// A request refused: one line, and the exit code the client then returns.
struct refusal : std::runtime_error {
    explicit refusal(const std::string& what, exit_code code = exit_code::invalid_request,
                     std::string table = "")
        : std::runtime_error(what), exit(code), check_table(std::move(table)) {}
    exit_code exit;
    std::string check_table;
};

/// The user name of `uid`, or "uid-N" when it has none.
std::string user_name(unsigned uid);
/// The reply line for a refused request: {"ok": false, "error", "exit", "table"}.
std::string refusal_reply(const refusal& r);

/// The files into a fresh box in staging/, then what `submit` does with a config on disk,
/// confined to the box; the reply line naming the job. Throws refusal. Runs on a worker
/// thread: check takes seconds.
std::string submit_uploaded(const spool& s, const submit_settings& settings, const peer& p,
                            const rapidjson::Value& request);
/// The reply to status: one job (when `id` is given) or every job `p` may see.
std::string answer_status(const spool& s, const peer& p, const std::string& id);
/// The reply to cancel, once the cancellation was asked for. Throws refusal.
std::string answer_cancel(const spool& s, const peer& p, const std::string& id);

}  // namespace cuopt
