// The run folder's record (run.json, read and checked), its partial writes, its lock and the
// device it began on.
#include "orchestrator/commands/resume_run.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>

#include "common/child_process.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/pid_lock.hpp"
#include "orchestrator/commands/resume_refusal.hpp"
#include "orchestrator/commands/run_failure.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

void refuse_resume(const fs::path& run, const std::string& why) {
    throw run_failure(exit_code::resume_refused, "cannot resume " + run.string() + ": " + why);
}

namespace {

rapidjson::Document read_run_json(const fs::path& run) {
    std::error_code ec;
    if (!fs::is_directory(run, ec)) refuse_resume(run, "no such folder");
    const fs::path file = run / "run.json";
    if (!fs::is_regular_file(file, ec))
        refuse_resume(
            run,
            "not a run folder (no run.json): give a results/run-NNN folder that optimize made "
            "(one stopped before its folder was set up has nothing to resume)");
    try {
        rapidjson::Document d = parse_record_json(read_text_file(file), file.string());
        validate_json(d, embedded_schema("run"), file.string());
        return d;
    } catch (const std::exception& e) {
        refuse_resume(run, std::string("its run.json cannot be read: ") + e.what());
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
            refuse_resume(run,
                          it->path().lexically_relative(run).string() +
                              (ec ? ": cannot be looked at (" + ec.message() + ")"
                                  : " is a link (to " +
                                        quote_value(fs::read_symlink(it->path(), ec).string()) +
                                        "); a run folder holds no links, and resuming writes only "
                                        "inside it"));
    if (ec) refuse_resume(run, "cannot look through the folder (" + ec.message() + ")");
}

}  // namespace

recorded_run read_recorded_run(const fs::path& run) {
    refuse_links(run);
    const rapidjson::Document d = read_run_json(run);
    if (member(d, "finished") && text_of(d, "stop_reason") != "interrupted")
        refuse_resume(run, "the run finished (" + text_of(d, "finished") + ", stop reason " +
                               text_of(d, "stop_reason") +
                               "): there is nothing to resume; start a new run");
    recorded_run r;
    r.run = run;
    r.working_directory = text_of(d, "working_directory");
    if (r.working_directory.empty())
        refuse_resume(run,
                      "its run.json records no working_directory (a run from a cuda-optimizer "
                      "without --resume)");
    r.command_line = texts(d, "command_line");
    if (r.command_line.size() < 2 || r.command_line[1] != "optimize")
        refuse_resume(run, "its run.json's command_line is not an optimize command");
    r.started_utc = text_of(d, "started");
    r.wall_s = number_of(d, "wall_s").value_or(0);
    // The run's clock goes on from here: a figure no run can have taken (above ~31 years) would
    // overflow it.
    if (!(r.wall_s >= 0 && r.wall_s <= k_max_wall_s))
        refuse_resume(run, "its run.json's wall_s is " + format_seconds(r.wall_s) +
                               "; expected a run's wall time, 0 to 1e9 seconds");
    r.proposer = text_of(d, "proposer");
    const Value& hashes = object_or_empty(d, "sha256");
    for (const auto& h : hashes.GetObject()) r.sha256[name_of(h)] = text_of(h.value);
    for (const auto& s : object_or_empty(d, "settings").GetObject())
        r.settings[s.name.GetString()] = to_compact_json(s.value);
    r.resumes = resumes_from(d);
    if (const Value* device = member(d, "device"))
        r.device = fingerprint_of(read_device_facts(*device));
    r.inputs_key_id = text_of(object_or_empty(d, "inputs_key"), "id");
    return r;
}

namespace {

// The names in the folder open as `dir` (its own descriptor is left open).
std::vector<std::string> names_in(int dir) {
    std::vector<std::string> out;
    const int own = ::dup(dir);
    DIR* d = own >= 0 ? ::fdopendir(own) : nullptr;
    if (!d) {
        if (own >= 0) ::close(own);
        return out;
    }
    while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            out.emplace_back(e->d_name);
    ::closedir(d);
    return out;
}

// remove_partial_writes below the folder open as `dir`: every folder opened from its parent's
// descriptor without following a link, every temporary unlinked from its own folder's, so a
// link swapped in after the run was looked through leads nowhere.
int remove_partial_writes_at(int dir, int depth) {
    static const std::regex partial(".*\\.tmp-[0-9a-f]{16}");
    int removed = 0;
    for (const std::string& name : names_in(dir)) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISREG(st.st_mode) && std::regex_match(name, partial))
            removed += ::unlinkat(dir, name.c_str(), 0) == 0 ? 1 : 0;
        if (!S_ISDIR(st.st_mode) || depth >= 16) continue;  // no record lies deeper
        const int sub =
            ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        removed += remove_partial_writes_at(sub, depth + 1);
        ::close(sub);
    }
    return removed;
}

}  // namespace

int remove_partial_writes(const fs::path& run) {
    const int dir = ::open(run.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return 0;
    const int removed = remove_partial_writes_at(dir, 0);
    ::close(dir);
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
            refuse_resume(run,
                          "the run is still going (pid " + pid + " holds " + file.string() + ")");
        refuse_resume(run, "the run is still going: pid " + pid + ", which took " + file.string() +
                               ", has ended, but a process it started still holds the lock after " +
                               std::to_string(k_straggler_wait.count()) + " s");
    }
    // A pid left from before would name a dead holder in a later refusal (and make it wait).
    if (!taken->pid_written())
        refuse_resume(run, "cannot write this process's pid into " + file.string());
    m_lock = std::move(*taken);
    hand_down_to_children(m_lock.fd());
}

run_lock& run_lock::operator=(run_lock&& o) noexcept {
    if (this != &o) {
        release();
        m_lock = std::move(o.m_lock);
        m_remove = o.m_remove;
        if (m_lock.fd() >= 0) hand_down_to_children(m_lock.fd());
    }
    return *this;
}

run_lock::~run_lock() {
    release();
}

void run_lock::release() {
    if (m_lock.fd() < 0) return;
    hand_down_to_children(-1);
    if (m_remove || m_lock.created())
        m_lock.release_removing();
    else
        m_lock = pid_lock();
}

std::optional<recorded_device> fingerprint_of(const device_facts& device) {
    if (device.json == "null") return std::nullopt;
    return recorded_device{device.index, device.name, device.uuid};
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
    refuse_resume(then.run,
                  "the run began on " + said(*then.device) + " and would go on on " + said(*now) +
                      ": its initial kernel's figures were measured there, so another GPU's "
                      "times cannot be held against them (resume it on that GPU, with the "
                      "same first --devices index, or start a new run)");
}

}  // namespace cuopt
