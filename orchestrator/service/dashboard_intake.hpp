#pragma once
/// The dashboard's intake: an upload of a job's files (multipart/form-data) into a fresh
/// staging folder of the spool, every name checked (upload_name_problem) and every file
/// size-limited, then the same staging and `check` as `cuda-optimizer submit`. The result is
/// what the check page shows; a staged job waits there for "Queue this job".

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/service/daemon.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/multipart.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

/// An intake refused before anything ran: `http_status` 400 (a bad name, form or flag) or 413
/// (a file over the limit); what() is one line naming the field or file.
struct intake_refusal : std::runtime_error {
    intake_refusal(int status, const std::string& what)
        : std::runtime_error(what), http_status(status) {}
    int http_status;
};

struct uploaded_file {
    std::string name;  // relative, checked by upload_name_problem
    std::string data;
};

/// The intake form's fields.
struct intake_form {
    std::vector<uploaded_file> files;
    std::string config = "config.json";  // which uploaded file is the config
    int priority = 0;
    std::vector<std::string> args;  // extra optimize flags: one a line, its value after a space
};

/// Reads the form from its parts: "files" (several files), "folder" (a folder's files, its
/// top folder name dropped), "config", "priority", "args". Throws intake_refusal for a bad
/// name, a name uploaded twice, a file over `max_file_bytes`, a bad priority, or a config
/// that is not among the files.
intake_form read_intake_form(std::vector<multipart_part> parts, std::size_t max_file_bytes);

/// Writes the files under `folder`/files, each name checked again and opened so that nothing
/// can land outside `folder` (no existing file replaced, no symlink followed).
void write_uploads(const std::filesystem::path& folder, const std::vector<uploaded_file>& files);

/// What an intake request came to.
struct intake_result {
    int http_status = 200;  // 400/413/500 when refused before check ran
    std::string error;      // why it was refused (one line), "" otherwise
    std::string stage;      // the staging folder's name (checked and not rejected), else ""
    job_spec spec;          // what spool::commit gets for it
    bool checked = false;   // check ran; `outcome` holds its table
    check_outcome outcome;
    std::vector<std::string> files;  // the staged job's files (relative)
};

/// "" when the dashboard may queue one more job: its jobs (one submitter, "web") queued or
/// running stay under settings.max_jobs. Else one line saying so.
std::string web_jobs_problem(const spool& s, const dashboard_settings& settings);

/// The whole intake of one request: parse, write into a staging folder, stage the job as
/// `submit` would (stage_submission), run check_staged, and keep the staged job unless check
/// rejects it. Refused first (429) when web_jobs_problem says so, or (403) when the form asks
/// for a priority above settings.max_priority. Blocks for as long as check runs: call it off the
/// event loop.
intake_result run_intake(const spool& s, const std::string& content_type, const std::string& body,
                         const dashboard_settings& settings, const std::filesystem::path& optimizer,
                         const std::filesystem::path& harness);

}  // namespace cuopt
