#pragma once
/// The client side of SPOOL/submit.sock: what `submit`, `status` and `cancel` send when the
/// caller does not own the spool. The caller's files are read by the caller (regular files
/// only, links not followed) and sent in the request; the daemon never opens a path of theirs.
///
/// One request a connection, one JSON object ended by "\n", then one reply the same way:
///   {"op":"submit","kind":"optimize"|"gate","priority":N,"config":REL,"accepted":REL,
///    "args":[...],"files":[{"path":REL,"base64":DATA},...]}      -> {"ok":true,"job":ID}
///   {"op":"status","job":ID or ""}                              -> {"ok":true,"result":{...}}
///   {"op":"cancel","job":ID}                                    -> {"ok":true,"result":{...}}
///   refused: {"ok":false,"error":ONE LINE,"exit":CODE,"table":CHECK'S TABLE}

#include <filesystem>
#include <optional>
#include <string>

#include "orchestrator/service/job_intake.hpp"

namespace cuopt {

/// Sends `request` to SPOOL/submit.sock and returns the reply; nullopt when no daemon listens
/// there. Throws std::runtime_error when the connection breaks.
std::optional<std::string> ask_daemon(const std::filesystem::path& spool_root,
                                      const std::string& request);

/// The submit request for `sub`: every file the job names (files_named_by, asked of
/// `optimizer` as the caller) or, for a gate, every file of the accepted run folder, with
/// paths relative to their common folder. Throws intake_error naming a file that cannot be
/// read or is not a regular file.
std::string submit_request(const submission& sub, const std::filesystem::path& optimizer);

/// {"op":OP,"job":JOB}: status (JOB "" for all of one's jobs) or cancel.
std::string job_request(const std::string& op, const std::string& job);

/// Whether this euid owns the spool, or it does not exist yet (whoever makes it owns it): the
/// operator then works on the folder itself, everyone else through the daemon.
bool owns_spool(const std::filesystem::path& root);

/// What `status` prints, from the JSON of jobs_json and job_json (the daemon's or the spool's
/// own): the queue, one line a job (state, kind, priority, progress, best, problem, reason);
/// one job, a line a fact (its problem, progress, outcome, run folder and report), the folder
/// named under `spool_root`. No report is named that does not exist.
std::string queue_text(const std::string& jobs_json);
std::string job_text(const std::string& job_json, const std::filesystem::path& spool_root);

/// `submit`, `status` and `cancel` through the daemon: each prints what the command prints
/// (refusals in one line on stderr; "no daemon serves SPOOL" when none listens) and returns
/// its exit code.
int submit_through_daemon(const std::filesystem::path& spool_root, const submission& sub,
                          const std::filesystem::path& optimizer, bool json);
int status_through_daemon(const std::filesystem::path& spool_root, const std::string& job,
                          bool json);
int cancel_through_daemon(const std::filesystem::path& spool_root, const std::string& job);

}  // namespace cuopt
