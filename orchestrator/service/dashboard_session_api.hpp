#pragma once
/// The dashboard's session API, answered before any route: POST /api/session trades the token
/// (Authorization: Bearer) for a browser session, /api/logout ends that session, and
/// /api/ticket?path=P gives it a ticket for one GET of a report or a run folder's file.

#include <optional>
#include <string>

#include "orchestrator/service/dashboard_auth.hpp"
#include "orchestrator/service/dashboard_routes.hpp"

namespace cuopt {

/// The reply to a session API request; nullopt for every other path.
std::optional<dashboard_reply> session_api(dashboard_keys& keys, const std::string& method,
                                           const std::string& target,
                                           const request_credentials& auth);

}  // namespace cuopt
