// The attempts and candidates a stopped run left (history.json, candidates.json, each
// attempt's kernel.cu and response.json), read back whole, and the attempts in flight.
#include <algorithm>
#include <set>

#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/history_reader.hpp"
#include "orchestrator/commands/resume_refusal.hpp"
#include "orchestrator/commands/resume_run.hpp"
#include "orchestrator/evaluation/compile_log.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// The candidate an attempt ran: iteration 0's is the initial kernel; batch[j] is attempt j, a
// repair's is the one recorded with its attempt number.
const candidate* candidate_of(const search_record& s, const attempt_result& r,
                              const candidate& initial) {
    if (r.iteration == 0) return &initial;
    const iteration_record* it = s.iteration(r.iteration);
    if (!it) return nullptr;
    if (r.attempt < static_cast<int>(it->batch.size())) return &it->batch[r.attempt];
    for (const repair_record& rr : it->repairs)
        if (rr.attempt == r.attempt && rr.fixed) return &*rr.fixed;
    return nullptr;
}

// The compile block history.json holds is the response's (its log trimmed as written): then the
// response is the one the attempt was judged on.
bool same_compile(const compile_summary& recorded, const std::optional<compile_summary>& c) {
    if (!c) return !recorded.ok && recorded.wall_ms == 0 && recorded.log.empty();
    return recorded.ok == c->ok && recorded.cache_hit == c->cache_hit &&
           recorded.wall_ms == c->wall_ms && recorded.registers == c->registers &&
           recorded.static_shared_bytes == c->static_shared_bytes &&
           recorded.local_bytes == c->local_bytes &&
           recorded.spill_store_bytes == c->spill_store_bytes &&
           recorded.log == trim_compile_log(c->log, 6000);
}

// What history.json leaves out, from the response the attempt was judged on: the whole compile
// log, the timer and GPU monitor blocks, each case's samples and both clocks' figures.
void add_response_details(attempt_result& r) {
    std::error_code ec;
    if (!fs::is_regular_file(r.folder / "response.json", ec)) return;
    harness_response resp;
    try {
        resp = read_response(r.folder / "response.json");
    } catch (const std::exception&) {
        return;  // history.json is the record; the response only adds to it
    }
    if (!same_compile(r.compile, resp.compile)) return;
    if (resp.compile) r.compile = *resp.compile;
    r.timer = resp.timer;
    r.gpu_monitor = resp.gpu_monitor;
    for (case_evaluation& ce : r.cases)
        for (const response_case& rc : resp.cases) {
            if (rc.name != ce.name || !rc.timing || !ce.median_ms ||
                rc.timing->median_ms != *ce.median_ms)
                continue;
            ce.samples_ms = rc.timing->samples_ms;
            ce.timing.cupti = rc.timing->details.cupti;
            ce.timing.events = rc.timing->details.events;
            ce.timing.gpu_time_ms = rc.timing->details.gpu_time_ms;
        }
}

// An attempt's whole candidate: history.json's fields, the source and launches recorded.
void complete_candidate(attempt_result& r, const candidate& c, const std::string& sha256,
                        const fs::path& run) {
    std::error_code ec;
    const fs::path kernel = r.folder / "kernel.cu";
    r.cand.source = fs::is_regular_file(kernel, ec) ? read_text_file(kernel) : c.source;
    if (sha256_hex(r.cand.source) != sha256)
        refuse_resume(run, "the source of attempt " + r.id() +
                               " is not the one history.json names (sha256 " +
                               sha256.substr(0, 12) + "...)");
    r.cand.launch = c.launch;
    r.cand.case_launch = c.case_launch;
    r.cand.rejected = c.rejected;
    r.cand.pytorch_mode = c.pytorch_mode;  // PyTorch eager, an imported problem's baseline
}

}  // namespace

search_record read_search_record(const fs::path& run, const manifest& m, const candidate& initial) {
    search_record out;
    std::vector<recorded_attempt> recorded;
    std::error_code ec;
    try {
        if (fs::exists(run / "history.json", ec)) recorded = read_history(run);
        out.iterations = read_candidates_files(run, m);
    } catch (const std::exception& e) {  // history_read_error, candidates_file_error
        refuse_resume(run, e.what());
    }
    std::set<std::pair<int, int>> seen;
    for (recorded_attempt& ra : recorded) {
        attempt_result& r = ra.result;
        if (!out.history.empty() && r.iteration < out.history.back().iteration)
            refuse_resume(run, "history.json's attempts are not in iteration order");
        if (!seen.emplace(r.iteration, r.attempt).second)
            refuse_resume(run, "history.json holds attempt " + r.id() +
                                   " twice; expected each attempt once (was it edited?)");
        const candidate* c = candidate_of(out, r, initial);
        if (!c)
            refuse_resume(run,
                          "history.json has attempt " + r.id() + ", and " +
                              candidates_file(run, r.iteration).lexically_relative(run).string() +
                              " has no candidate for it");
        complete_candidate(r, *c, ra.source_sha256, run);
        add_response_details(r);
        out.history.push_back(std::move(r));
    }
    return out;
}

std::vector<fs::path> in_flight_folders(const fs::path& run, const search_record& record) {
    std::set<fs::path> done;
    for (const attempt_result& r : record.history) done.insert(r.folder.lexically_normal());
    std::vector<fs::path> out;
    std::error_code ec;
    if (!fs::is_directory(run / "candidates", ec)) return out;
    for (const auto& iteration : fs::directory_iterator(run / "candidates"))
        for (const auto& e : fs::directory_iterator(iteration.path(), ec))
            if (e.is_directory() && e.path().filename().string().rfind("attempt-", 0) == 0 &&
                !done.count(e.path().lexically_normal()))
                out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace cuopt
