#pragma once
/// A job_status as state.json holds it, field for field: what spool::write_status and commit
/// write, and what the job listings (jobs_json, job_json) serve for each job.

#include "common/json_builder.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

json_object status_value(const job_status& s, json_allocator& a);

}  // namespace cuopt
