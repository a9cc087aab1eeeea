#include "orchestrator/service/job_finaliser.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/exit_codes.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/pid_lock.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_max_summary_bytes = 16u << 20;
constexpr std::size_t k_max_reason_chars = 300;

// summary.json of the job's run folder, when it reads as an object (the job wrote it: no link
// followed, size bounded).
std::optional<rapidjson::Document> read_summary(const fs::path& job, const std::string& run_dir) {
    if (run_dir.empty()) return std::nullopt;
    const auto text = read_job_file(job, run_dir + "/summary.json", k_max_summary_bytes);
    rapidjson::Document d;
    if (!text || !try_parse_json(d, *text).empty() || !d.IsObject()) return std::nullopt;
    return d;
}

// "1.48x (LABEL)" from summary.json's best, or "" without one.
std::string best_text(const rapidjson::Document& d) {
    const rapidjson::Value& b = object_or_empty(d, "best");
    std::string text;
    if (const auto speedup = number_of(b, "speedup_vs_initial")) {
        char x[64];
        std::snprintf(x, sizeof x, "%.2fx", *speedup);
        text = x;
    }
    if (const std::string label = text_of(b, "label"); !label.empty())
        text += (text.empty() ? "" : " ") + std::string("(") + label + ")";
    return text;
}

// "a winner passed the evidence gates: LABEL, 1.23x over the initial kernel", from summary.json:
// the line of a run whose summary has no verdict (an older version's).
std::string winner_line(const fs::path& job, const std::string& run_dir) {
    std::string line = "a winner passed the evidence gates";
    const auto d = read_summary(job, run_dir);
    if (!d) return line;
    const rapidjson::Value& b = object_or_empty(*d, "best");
    if (const std::string label = text_of(b, "label"); !label.empty()) line += ": " + label;
    if (const auto speedup = number_of(b, "speedup_vs_initial")) {
        char x[64];
        std::snprintf(x, sizeof x, ", %.2fx over the initial kernel", *speedup);
        line += x;
    }
    return one_line(line, k_max_reason_chars);
}

// The last non-empty line of a job's log: the one-line reason optimize prints when it fails.
std::string last_log_line(const fs::path& log) {
    std::string text;
    try {
        text = read_text_file(log);
    } catch (const std::exception&) {
        return "";
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const std::size_t nl = text.rfind('\n');
    std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    return line;
}

std::string why(int code, const job_exit& ex, const fs::path& job) {
    std::string w = ex.reason.empty() ? "exit " + std::to_string(code) : ex.reason;
    const std::string line = last_log_line(job / "job.log");
    return line.empty() ? w : w + ": " + line;
}

}  // namespace

std::vector<fs::path> run_folders_of(const fs::path& job) {
    std::error_code ec;
    std::vector<fs::path> found;
    if (fs::is_symlink(job / "results", ec)) return found;  // the job made it: not followed
    for (const auto& e : fs::directory_iterator(job / "results", ec))
        if (!e.is_symlink(ec) && e.is_directory(ec) &&
            e.path().filename().string().rfind("run-", 0) == 0)
            found.push_back(e.path());
    std::sort(found.begin(), found.end());
    return found;
}

fs::path run_folder_of(const fs::path& job) {
    const std::vector<fs::path> runs = run_folders_of(job);
    return runs.empty() ? fs::path() : runs.back();
}

std::optional<earlier_start> take_earlier_locks(const std::vector<fs::path>& folders,
                                                bool local_pids, std::vector<pid_lock>& held) {
    for (const fs::path& folder : folders) {
        earlier_start e;
        e.lock = folder / ".lock";
        std::optional<pid_lock> lock = pid_lock::try_take(e.lock, 0644, e.holder);
        if (!lock) {
            e.running = local_pids && (e.holder.empty() || process_running(e.holder));
            return e;
        }
        held.push_back(std::move(*lock));
    }
    return std::nullopt;
}

std::string holds_text(const earlier_start& e, const fs::path& job) {
    return "pid " + holder_text(e.holder) + " still holds " +
           e.lock.lexically_relative(job).string();
}

std::optional<run_verdict> verdict_of(const fs::path& job, const std::string& run_dir) {
    const auto d = read_summary(job, run_dir);
    if (!d) return std::nullopt;
    run_verdict out{text_of(*d, "verdict"), ""};
    if (out.verdict != "go" && out.verdict != "no_go" && out.verdict != "no_winner")
        return std::nullopt;
    std::string reasons;
    for (const auto& x : array_or_empty(*d, "verdict_reasons").GetArray())
        if (x.IsString() && x.GetStringLength() > 0)
            reasons += (reasons.empty() ? "" : "; ") + std::string(x.GetString());
    if (out.verdict == "go") {
        const std::string best = best_text(*d);
        out.line = best.empty() ? "go" : "go: winner " + best;
    } else {
        out.line = reasons.empty() ? out.verdict : out.verdict + ": " + reasons;
    }
    out.line = one_line(out.line, k_max_reason_chars);
    return out;
}

std::string cancelled_unstarted_reason(const job_status& st) {
    if (st.starts == 0) return "cancelled while queued; it never started";
    return "cancelled while waiting to resume (stopped with serve; the run did not end)";
}

std::optional<run_end> finished_run(const fs::path& run) {
    rapidjson::Document d;
    std::error_code ec;
    if (!fs::is_regular_file(run / "run.json", ec)) return std::nullopt;
    if (!try_parse_json(d, read_text_file(run / "run.json")).empty()) return std::nullopt;
    if (string_of(d, "finished").value_or("").empty())
        return std::nullopt;  // null while the run goes on
    run_end e;
    e.stop_reason = text_of(d, "stop_reason");
    e.error = text_of(d, "error");
    if (e.stop_reason == "interrupted") return std::nullopt;
    return e;
}

job_finaliser::job_finaliser(job_queue& queue, double job_time_limit_s,
                             std::function<void(const fs::path&)> write_report, bool local_pids)
    : m_queue(queue),
      m_job_time_limit_s(job_time_limit_s),
      m_write_report(std::move(write_report)),
      m_local_pids(local_pids) {}

void job_finaliser::ended(const std::string& id, const active_job& a, const job_exit& ex,
                          bool stopping) {
    const spool& s = m_queue.jobs();
    job_status st = s.read_status(id);
    st.slurm_state = ex.slurm_state;
    st.handle.clear();
    const fs::path job = s.job_dir(id);
    const fs::path run = run_folder_of(job);
    if (!run.empty()) {
        st.run_dir = fs::relative(run, job).string();
        read_progress(job, st);
    } else if (fs::is_directory(job / "results" / "gate")) {
        st.run_dir = "results/gate";  // gate.json and gate.html
    }
    if (s.cancel_requested(id))
        return m_queue.finalise(st, job_state::cancelled, "cancelled while running", ex.exit_code);
    if (a.timed_out) {
        char limit[64];
        std::snprintf(limit, sizeof limit, "%g", m_job_time_limit_s);
        return m_queue.finalise(st, job_state::failed,
                                std::string("ran past serve's --job-time-limit (") + limit + " s)",
                                ex.exit_code);
    }
    if (stopping && (ex.exit_code == to_int(exit_code::interrupted) || ex.signal != 0)) {
        m_queue.save(st);  // still running: the next daemon resumes it
        return;
    }
    if (ex.slurm_state == "CANCELLED")  // scancel from outside the daemon
        return m_queue.finalise(st, job_state::cancelled, why(ex.exit_code, ex, job), ex.exit_code);
    if (!ex.slurm_state.empty() && ex.slurm_state != "COMPLETED" && ex.slurm_state != "FAILED")
        return m_queue.finalise(st, job_state::failed, why(ex.exit_code, ex, job), ex.exit_code);
    classify(st, ex, a.resumed);
}

void job_finaliser::classify(job_status& st, const job_exit& ex, bool resumed) {
    const spool& s = m_queue.jobs();
    const job_spec spec = s.read_spec(st.id);
    const int code = ex.exit_code;
    const fs::path job = s.job_dir(st.id);
    if (spec.kind == "gate") {
        if (code == 0) return m_queue.finalise(st, job_state::done, "the gate passed", code);
        if (code == 1)
            return m_queue.finalise(st, job_state::done, "the gate failed: a regression", code);
        return m_queue.finalise(st, job_state::failed, why(code, ex, job), code);
    }
    if (code == 0 || code == to_int(exit_code::no_winner) || code == to_int(exit_code::no_go))
        return finalise_result(st, code);
    const fs::path run = st.run_dir.empty() ? run_folder_of(job) : job / st.run_dir;
    if (code == to_int(exit_code::resume_refused) && resumed &&
        (run.empty() || !fs::exists(run / "history.json")))
        return start_over(st, why(code, ex, job), code);
    m_queue.finalise(st, job_state::failed, why(code, ex, job), code);
}

// Killed before its first attempt was recorded: nothing to keep, so it starts over; but only
// once no process of an earlier start holds a run folder's lock (a harness that outlived its
// optimizer writes into the folder, and would make it again under the fresh run's feet).
void job_finaliser::start_over(job_status& st, const std::string& refusal, int code) {
    const fs::path job = m_queue.jobs().job_dir(st.id);
    const fs::path results = job / "results";
    std::vector<pid_lock> held;
    std::optional<earlier_start> earlier;
    try {
        earlier = take_earlier_locks(run_folders_of(job), m_local_pids, held);
    } catch (const std::exception& e) {
        return m_queue.finalise(st, job_state::failed,
                                std::string("cannot start over: ") + e.what(), code);
    }
    if (earlier && earlier->running)
        return m_queue.finalise(
            st, job_state::failed,
            "not started over: " + holds_text(*earlier, job) + " (" + refusal + ")", code);
    if (earlier) {
        // Its holder has ended, a process it started not yet: the next start resumes, which
        // waits for them (never this loop), and comes back here if refused again.
        m_queue.save(st);
        m_queue.to_resume().push_back(st.id);
        m_queue.log(st.id, "waits for the processes of its last start to end");
        return;
    }
    std::error_code ec;
    fs::remove_all(results, ec);
    if (ec)
        return m_queue.finalise(
            st, job_state::failed,
            "cannot start over: " + results.string() + ": cannot remove (" + ec.message() + ")",
            code);
    st.run_dir.clear();
    m_queue.save(st);
    m_queue.to_resume().push_back(st.id);
    m_queue.log(st.id, "starts over (stopped before its first attempt was recorded)");
}

void job_finaliser::finalise_result(job_status& st, int code) {
    const fs::path job = m_queue.jobs().job_dir(st.id);
    if (const auto v = verdict_of(job, st.run_dir)) {
        st.verdict = v->verdict;
        return m_queue.finalise(st, job_state::done, v->line, code);
    }
    // A summary without a verdict (an older optimize): the exit code says what it can.
    if (code == to_int(exit_code::no_winner)) {
        st.verdict = "no_winner";
        return m_queue.finalise(st, job_state::done, "no candidate passed the evidence gates",
                                code);
    }
    if (code == to_int(exit_code::no_go)) {
        st.verdict = "no_go";
        return m_queue.finalise(st, job_state::done, "no_go (summary.json gives no reasons)", code);
    }
    m_queue.finalise(st, job_state::done, winner_line(job, st.run_dir), code);
}

void job_finaliser::from_run(job_status st, const fs::path& run, const run_end& end) {
    std::error_code ec;
    if (!fs::is_regular_file(run / "report.html", ec))  // killed between run.json and it
        m_write_report(run);
    const fs::path job = m_queue.jobs().job_dir(st.id);
    st.run_dir = fs::relative(run, job).string();
    read_progress(job, st);
    if (end.stop_reason == "error") return m_queue.finalise(st, job_state::failed, end.error, -1);
    if (const auto v = verdict_of(job, st.run_dir)) {
        st.verdict = v->verdict;
        return m_queue.finalise(st, job_state::done, v->line, -1);
    }
    m_queue.finalise(st, job_state::done, "the run had finished (" + end.stop_reason + ")", -1);
}

void job_finaliser::from_gate(job_status st, const fs::path& gate_json) {
    st.run_dir = "results/gate";
    rapidjson::Document d;
    std::string verdict;
    if (try_parse_json(d, read_text_file(gate_json)).empty()) verdict = text_of(d, "verdict");
    if (verdict == "pass") return m_queue.finalise(st, job_state::done, "the gate passed", 0);
    if (verdict == "fail")
        return m_queue.finalise(st, job_state::done, "the gate failed: a regression", 1);
    m_queue.finalise(st, job_state::failed, "the gate could not judge (" + verdict + ")", 2);
}

}  // namespace cuopt
