// The dashboard's session API: POST /api/session (the token trades for a browser session),
// /api/logout and /api/ticket (one GET of a report or a run folder's file).
#include "orchestrator/service/dashboard_session_api.hpp"

#include <chrono>

namespace cuopt {

namespace {

dashboard_reply json_reply(int status, std::string body) {
    dashboard_reply r;
    r.status = status;
    r.content_type = "application/json";
    r.kind = reply_kind::api;
    r.body = std::move(body) + "\n";
    return r;
}

// A path a ticket may open: a job's report, or a file of its run folder.
bool ticket_path(const std::string& path) {
    const std::string prefix = "/jobs/";
    if (path.rfind(prefix, 0) != 0) return false;
    const std::size_t slash = path.find('/', prefix.size());
    if (slash == std::string::npos || slash == prefix.size()) return false;
    const std::string rest = path.substr(slash);
    return rest == "/report" || (rest.rfind("/files/", 0) == 0 && rest.size() > 7);
}

}  // namespace

// The session API: POST /api/session (Bearer: a new session), /api/logout (ends this one),
// /api/ticket?path=P (a ticket for one GET of P). Empty for every other request.
std::optional<dashboard_reply> session_api(dashboard_keys& keys, const std::string& method,
                                           const std::string& target,
                                           const request_credentials& auth) {
    const std::string path = target_path(target);
    if (path != "/api/session" && path != "/api/logout" && path != "/api/ticket")
        return std::nullopt;
    if (method != "POST") {
        dashboard_reply r = json_reply(405, "{\"error\": \"POST only\"}");
        r.headers.emplace_back("Allow", "POST");
        return r;
    }
    const auto now = std::chrono::steady_clock::now();
    if (path == "/api/session") {
        if (auth.source != token_source::header)
            return json_reply(400,
                              "{\"error\": \"a session is opened with the token itself "
                              "(Authorization: Bearer TOKEN)\"}");
        return json_reply(
            200, "{\"session\": \"" + keys.open_session(now) +
                     "\", \"idle_s\": " + std::to_string(static_cast<long>(keys.limits().idle_s)) +
                     ", \"max_s\": " + std::to_string(static_cast<long>(keys.limits().max_s)) +
                     "}");
    }
    if (auth.source != token_source::session)
        return json_reply(400,
                          "{\"error\": \"only a browser session (Authorization: Session) "
                          "has this\"}");
    if (path == "/api/logout") {
        keys.end_session(auth.session);
        return json_reply(200, "{\"signed_out\": true}");
    }
    const std::string document = target_path(query_value(target, "path"));
    if (!ticket_path(document))
        return json_reply(400,
                          "{\"error\": \"a ticket opens /jobs/ID/report or "
                          "/jobs/ID/files/NAME only\"}");
    return json_reply(200,
                      "{\"ticket\": \"" + keys.new_ticket(auth.session, document, now) + "\"}");
}

}  // namespace cuopt
