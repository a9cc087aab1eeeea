#include "orchestrator/commands/resume_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <regex>
#include <set>

#include "common/child_process.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/pid_lock.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/history_reader.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/evaluation/compile_log.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

const std::set<std::string> k_settings_free_on_resume = {"isolation", "devices", "device",
                                                         "compile_threads"};

namespace {

[[noreturn]] void refuse(const fs::path& run, const std::string& why) {
    throw run_failure(exit_code::resume_refused, "cannot resume " + run.string() + ": " + why);
}

rapidjson::Document read_run_json(const fs::path& run) {
    std::error_code ec;
    if (!fs::is_directory(run, ec)) refuse(run, "no such folder");
    const fs::path file = run / "run.json";
    if (!fs::is_regular_file(file, ec))
        refuse(run,
               "not a run folder (no run.json): give a results/run-NNN folder that optimize made "
               "(one stopped before its folder was set up has nothing to resume)");
    try {
        rapidjson::Document d = parse_record_json(read_text_file(file), file.string());
        validate_json(d, embedded_schema("run"), file.string());
        return d;
    } catch (const std::exception& e) {
        refuse(run, std::string("its run.json cannot be read: ") + e.what());
    }
}

// The strings of an array member; anything else in it is left out.
std::vector<std::string> texts(const Value& v, const char* key) {
    std::vector<std::string> out;
    for (const json_field& e : json_field(array_or_empty(v, key), "run.json", key).items())
        if (e.is_text()) out.push_back(e.text());
    return out;
}

std::vector<resume_entry> resumes_from(const Value& d) {
    std::vector<resume_entry> out;
    for (const Value& e : array_or_empty(d, "resumes").GetArray())
        out.push_back({text_of(e, "resumed"), texts(e, "command_line"),
                       static_cast<int>(integer_of(e, "attempts_kept").value_or(0)),
                       texts(e, "in_flight")});
    return out;
}

// The longest wall time a run.json may record.
constexpr double k_max_wall_s = 1e9;

std::string format_seconds(double s) {
    char text[40];
    std::snprintf(text, sizeof text, "%g", s);
    return text;
}

// A run folder holds no links (optimize makes none): resuming writes attempts, candidates and
// records inside it, and a planted link (candidates/ -> elsewhere) would lead those writes out.
// The folder itself may be named through a link (it is what the user named); everything in it
// is looked at, and what cannot be looked at refuses the resume.
void refuse_links(const fs::path& run) {
    std::error_code ec;
    if (!fs::is_directory(run, ec)) return;  // read_run_json says "no such folder"
    auto it = fs::recursive_directory_iterator(run, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_symlink(ec) || ec)
            refuse(run, it->path().lexically_relative(run).string() +
                            (ec ? ": cannot be looked at (" + ec.message() + ")"
                                : " is a link (to " +
                                      quote_value(fs::read_symlink(it->path(), ec).string()) +
                                      "); a run folder holds no links, and resuming writes only "
                                      "inside it"));
    if (ec) refuse(run, "cannot look through the folder (" + ec.message() + ")");
}

}  // namespace

recorded_run read_recorded_run(const fs::path& run) {
    refuse_links(run);
    const rapidjson::Document d = read_run_json(run);
    if (member(d, "finished") && text_of(d, "stop_reason") != "interrupted")
        refuse(run, "the run finished (" + text_of(d, "finished") + ", stop reason " +
                        text_of(d, "stop_reason") +
                        "): there is nothing to resume; start a new run");
    recorded_run r;
    r.run = run;
    r.working_directory = text_of(d, "working_directory");
    if (r.working_directory.empty())
        refuse(run,
               "its run.json records no working_directory (a run from a cuda-optimizer "
               "without --resume)");
    r.command_line = texts(d, "command_line");
    if (r.command_line.size() < 2 || r.command_line[1] != "optimize")
        refuse(run, "its run.json's command_line is not an optimize command");
    r.started_utc = text_of(d, "started");
    r.wall_s = number_of(d, "wall_s").value_or(0);
    // The run's clock goes on from here: a figure no run can have taken (above ~31 years) would
    // overflow it.
    if (!(r.wall_s >= 0 && r.wall_s <= k_max_wall_s))
        refuse(run, "its run.json's wall_s is " + format_seconds(r.wall_s) +
                        "; expected a run's wall time, 0 to 1e9 seconds");
    r.proposer = text_of(d, "proposer");
    const Value& hashes = object_or_empty(d, "sha256");
    for (const auto& h : hashes.GetObject()) r.sha256[name_of(h)] = text_of(h.value);
    for (const auto& s : object_or_empty(d, "settings").GetObject())
        r.settings[s.name.GetString()] = to_compact_json(s.value);
    r.resumes = resumes_from(d);
    if (const Value* device = member(d, "device"))
        r.device = fingerprint_of(to_compact_json(*device));
    r.inputs_key_id = text_of(object_or_empty(d, "inputs_key"), "id");
    return r;
}

int remove_partial_writes(const fs::path& run) {
    static const std::regex partial(".*\\.tmp-[0-9a-f]{16}");
    std::vector<fs::path> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(run, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code kind;  // a dangling entry is no temporary, and ends nothing
        if (it->symlink_status(kind).type() == fs::file_type::regular &&
            std::regex_match(it->path().filename().string(), partial))
            found.push_back(it->path());
    }
    int removed = 0;
    for (const fs::path& p : found) removed += fs::remove(p, ec) ? 1 : 0;
    return removed;
}

namespace {

// A holder that has ended may have left a harness child that holds the lock a moment longer:
// waited for this long, never raced.
constexpr auto k_straggler_wait = std::chrono::seconds(30);

}  // namespace

run_lock::run_lock(const fs::path& run) {
    const fs::path file = run / ".lock";
    std::string holder;
    bool holder_running = false;
    std::optional<pid_lock> taken;
    try {
        taken = pid_lock::take_after_stragglers(
            file, 0644, k_straggler_wait, holder, holder_running, [&] {
                std::cerr << "cuda-optimizer: " << run.string() << ": pid " << holder_text(holder)
                          << " has ended; waiting for the processes it started to end\n";
            });
    } catch (const std::exception& e) {
        throw run_failure(exit_code::resume_refused, e.what());
    }
    if (!taken) {
        const std::string pid = holder_text(holder);
        if (holder_running)
            refuse(run, "the run is still going (pid " + pid + " holds " + file.string() + ")");
        refuse(run, "the run is still going: pid " + pid + ", which took " + file.string() +
                        ", has ended, but a process it started still holds the lock after " +
                        std::to_string(k_straggler_wait.count()) + " s");
    }
    // A pid left from before would name a dead holder in a later refusal (and make it wait).
    if (!taken->pid_written()) refuse(run, "cannot write this process's pid into " + file.string());
    m_lock = std::move(*taken);
    hand_down_to_children(m_lock.fd());
}

run_lock& run_lock::operator=(run_lock&& o) noexcept {
    if (this != &o) {
        release();
        m_lock = std::move(o.m_lock);
        if (m_lock.fd() >= 0) hand_down_to_children(m_lock.fd());
    }
    return *this;
}

run_lock::~run_lock() {
    release();
}

void run_lock::release() {
    if (m_lock.fd() >= 0) hand_down_to_children(-1);
    m_lock = pid_lock();
}

std::optional<recorded_device> fingerprint_of(const std::string& device_json) {
    rapidjson::Document d;
    if (!try_parse_json(d, device_json).empty() || !d.IsObject()) return std::nullopt;
    return recorded_device{integer_of(d, "index").value_or(-1), text_of(d, "name"),
                           text_of(d, "uuid")};
}

void check_same_device(const recorded_run& then, const std::optional<recorded_device>& now) {
    if (!then.device || !now) return;
    const auto said = [](const recorded_device& f) {
        return "device " + std::to_string(f.index) + " " + f.name +
               (f.uuid.empty() ? "" : " (" + f.uuid + ")");
    };
    const bool same_gpu =
        then.device->name == now->name &&
        (then.device->uuid.empty() || now->uuid.empty() || then.device->uuid == now->uuid);
    if (same_gpu && then.device->index == now->index) return;
    refuse(then.run, "the run began on " + said(*then.device) + " and would go on on " +
                         said(*now) +
                         ": its initial kernel's figures were measured there, so another GPU's "
                         "times cannot be held against them (resume it on that GPU, with the "
                         "same first --devices index, or start a new run)");
}

namespace {

// What a sha256 key of run.json stands for, with its file.
std::string hashed_thing(const std::string& key, const optimizer_options& o) {
    if (key == "manifest") return "the manifest " + o.input_cases;
    if (key == "initial")
        return o.torch_reference.empty() ? "the initial kernel " + o.initial_kernel
                                         : "the PyTorch source (eager, the baseline)";
    if (key == "initial_kernel") return "the initial kernel " + o.initial_kernel;
    if (key == "reference")
        return o.torch_reference.empty() ? "the reference kernel " + o.reference
                                         : "the PyTorch source (the oracle)";
    if (key == "torch_reference") return "the PyTorch mapping " + o.torch_reference;
    if (key == "harness") return "the harness " + o.harness;
    if (key == "holdout") return "the holdout cases " + o.holdout_cases;
    if (key.rfind("inputs/", 0) == 0) return "the input file " + key.substr(7);
    return key;
}

void check_settings(const recorded_run& then, const run_info& now) {
    for (const auto& [key, value] : now.settings) {
        if (k_settings_free_on_resume.count(key)) continue;
        const std::string text = setting_text(value);
        const auto it = then.settings.find(key);
        if (it == then.settings.end())
            refuse(then.run, "settings." + key + " is " + shortened(text) +
                                 " now, and run.json has none (was its --config file edited?)");
        if (it->second != text)
            refuse(then.run, "settings." + key + " was " + shortened(it->second) +
                                 " when the run began and is " + shortened(text) +
                                 " now (was its --config file edited?)");
    }
    for (const auto& [key, text] : then.settings)
        if (!k_settings_free_on_resume.count(key) && !now.settings.count(key))
            refuse(then.run, "settings." + key + " was " + shortened(text) +
                                 " when the run began and is not given now (was its --config "
                                 "file edited?)");
}

}  // namespace

namespace {

// A hash run.json has that `stage` does not compute yet (so its absence from `now` says nothing).
bool not_hashed_yet(const std::string& key, hash_stage stage) {
    if (stage == hash_stage::before_oracle) return key.rfind("inputs/", 0) == 0;
    return key == "holdout";
}

void check_hashes(const recorded_run& then, const run_info& now, const optimizer_options& o,
                  hash_stage stage) {
    // A run stopped before its oracle was made recorded no input yet: it makes them now.
    const bool inputs_recorded = std::any_of(then.sha256.begin(), then.sha256.end(), [](auto& h) {
        return h.first.rfind("inputs/", 0) == 0;
    });
    for (const auto& [key, hash] : now.sha256) {
        const auto it = then.sha256.find(key);
        if (it == then.sha256.end() && !inputs_recorded && key.rfind("inputs/", 0) == 0) continue;
        if (it == then.sha256.end())
            refuse(then.run, hashed_thing(key, o) +
                                 " is part of the run now and was not when it "
                                 "began (run.json has no sha256." +
                                 key + "; was it added to the config?)");
        if (it->second != hash)
            refuse(then.run,
                   hashed_thing(key, o) + " changed since the run began (run.json sha256." + key +
                       " " + it->second.substr(0, 12) + "..., now " + hash.substr(0, 12) + "...)");
    }
    for (const auto& [key, hash] : then.sha256)
        if (!now.sha256.count(key) && !not_hashed_yet(key, stage))
            refuse(then.run, "run.json sha256." + key + " (" + hash.substr(0, 12) +
                                 "...) names a file the run had when it began and does not have "
                                 "now (was " +
                                 key + " removed from the config?)");
}

}  // namespace

void check_unchanged(const recorded_run& then, const run_info& now, const optimizer_options& o,
                     hash_stage stage) {
    check_hashes(then, now, o, stage);
    if (then.proposer != to_string(now.proposer))
        refuse(then.run, "its proposer was " + then.proposer + " and would be " +
                             to_string(now.proposer) +
                             " now (--proposer auto takes the model only where a key or base URL "
                             "is configured: configure it as when the run began)");
    check_settings(then, now);
}

std::map<std::string, std::string> hashes_before_oracle(const optimizer_options& o,
                                                        const manifest& m,
                                                        const candidate& initial) {
    std::map<std::string, std::string> h;
    h["manifest"] = sha256_file_hex(o.input_cases);
    h["initial"] = sha256_hex(initial.source);
    h["harness"] = sha256_file_hex(o.harness);
    if (!o.reference.empty()) h["reference"] = sha256_hex(read_text_file(o.reference));
    if (!o.holdout_cases.empty()) h["holdout"] = sha256_file_hex(o.holdout_cases);
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_input())
                if (const auto& init = m.init_for(mc, a); init.file)
                    h["inputs/" + m.input_link(*init.file)] = sha256_file_hex(*init.file);
    return h;
}

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
        refuse(run, "the source of attempt " + r.id() +
                        " is not the one history.json names (sha256 " + sha256.substr(0, 12) +
                        "...)");
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
        refuse(run, e.what());
    }
    std::set<std::pair<int, int>> seen;
    for (recorded_attempt& ra : recorded) {
        attempt_result& r = ra.result;
        if (!out.history.empty() && r.iteration < out.history.back().iteration)
            refuse(run, "history.json's attempts are not in iteration order");
        if (!seen.emplace(r.iteration, r.attempt).second)
            refuse(run, "history.json holds attempt " + r.id() +
                            " twice; expected each attempt once (was it edited?)");
        const candidate* c = candidate_of(out, r, initial);
        if (!c)
            refuse(run, "history.json has attempt " + r.id() + ", and " +
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
