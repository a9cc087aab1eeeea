// The jobs as JSON, each with its problem's one line and whether it has a report: what
// `status --json` prints, the socket's status answers and the dashboard's /api/jobs serves.
#include <functional>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "orchestrator/service/job_status_json.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

// What a job's listing adds to its status: the problem's one line and whether a report exists.
void add_job_extras(const spool& s, const job_spec& spec, const job_status& st, json_object& o) {
    o.add("problem", problem_of(s, spec)).add("has_report", job_has_report(s.job_dir(spec.id), st));
}

// state.json, with a running job's progress read from its run folder (as the dashboard's page
// reads it): the daemon writes it to state.json only once a second.
job_status status_now(const spool& s, const std::string& id) {
    job_status st = s.read_status(id);
    if (st.state == job_state::running) read_progress(s.job_dir(id), st);
    return st;
}

}  // namespace

std::string jobs_json(const spool& s) {
    return jobs_json(s, [](const job_spec&) { return true; });
}

std::string jobs_json(const spool& s, const std::function<bool(const job_spec&)>& visible) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    json_array jobs(a);
    for (const std::string& id : s.job_ids()) {
        try {
            const job_spec spec = s.read_spec(id);
            if (!visible(spec)) continue;
            const job_status st = status_now(s, id);
            json_object o = status_value(st, a);
            o.add("kind", spec.kind)
                .add("priority", spec.priority)
                .add("submitted", spec.submitted)
                .add("submitter", spec.submitter)
                .add("cancel_requested", s.cancel_requested(id));
            add_job_extras(s, spec, st, o);
            jobs.push(o);
        } catch (const std::exception&) {
            // a job being written or damaged: status shows the others
        }
    }
    json_object(d).add("jobs", jobs);
    return to_compact_json(d);
}

std::string job_json(const spool& s, const std::string& id) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    rapidjson::Document spec = parse_json(read_text_file(s.job_dir(id) / "job.json"), "job.json");
    const job_status st = status_now(s, id);
    json_object o(d);
    o.add("status", status_value(st, a)).add("cancel_requested", s.cancel_requested(id));
    add_job_extras(s, s.read_spec(id), st, o);
    o.add("spec", static_cast<const Value&>(spec));
    // An ended run's summary.json (the job's own file: read without links, at most 1 MiB, and
    // left out when it does not parse), for whoever collects the outcome (suite --submit).
    rapidjson::Document summary;
    if (is_final(st.state) && !st.run_dir.empty())
        if (const auto text = read_job_file(s.job_dir(id), st.run_dir + "/summary.json", 1 << 20);
            text && try_parse_json(summary, *text, true).empty() && summary.IsObject())
            o.add("summary", static_cast<const Value&>(summary));
    return to_compact_json(d);
}

}  // namespace cuopt
