#include "orchestrator/service/spool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <random>
#include <regex>
#include <stdexcept>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/sha256.hpp"
#include "common/utc_time.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

const char* const k_states[] = {"queued", "running", "done", "failed", "cancelled"};
// What the daemon reads of files a job wrote: history.json grows with the attempts.
constexpr std::size_t k_max_history_bytes = 64u << 20;
constexpr std::size_t k_max_record_bytes = 4u << 20;  // run.json, summary.json, the config

bool valid_job_id(const std::string& id) {
    static const std::regex k_id("job-[0-9]{6,}");
    return std::regex_match(id, k_id);
}

std::string string_or(const Value& o, const char* key, const std::string& fallback = "") {
    const auto it = o.FindMember(key);
    return it != o.MemberEnd() && it->value.IsString() ? it->value.GetString() : fallback;
}

int int_or(const Value& o, const char* key, int fallback) {
    const auto it = o.FindMember(key);
    return it != o.MemberEnd() && it->value.IsInt() ? it->value.GetInt() : fallback;
}

double double_or(const Value& o, const char* key, double fallback) {
    const auto it = o.FindMember(key);
    return it != o.MemberEnd() && it->value.IsNumber() ? it->value.GetDouble() : fallback;
}

// Every file of the spool is the daemon user's alone (0600), whatever the caller's umask.
void write_private(const fs::path& file, const std::string& text) {
    write_file_with(
        file,
        [&](int fd) {
            std::size_t done = 0;
            while (done < text.size()) {
                const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) return false;
                done += static_cast<std::size_t>(n);
            }
            return true;
        },
        true, 0600);
}

// A folder of the spool: created 0700 (or 0711 for the root), the mode set even when the
// caller's umask would have added bits.
void make_private_folder(const fs::path& dir, mode_t mode = 0700) {
    std::error_code ec;
    if (fs::create_directory(dir, ec)) ::chmod(dir.c_str(), mode);
    if (ec) throw std::runtime_error(dir.string() + ": cannot create the spool: " + ec.message());
}

rapidjson::Document read_object(const fs::path& file) {
    rapidjson::Document d = parse_json(read_text_file(file), file.string());
    if (!d.IsObject()) throw json_error(file.string() + ": expected an object");
    return d;
}

// The next job number, taken under an flock on SPOOL/.seq so that two submits never share one.
unsigned long next_job_number(const fs::path& root) {
    const fs::path seq = root / ".seq";
    // O_NOFOLLOW: a link planted at the name is refused, never written through.
    const int fd = ::open(seq.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error(seq.string() + ": cannot open the job counter");
    ::flock(fd, LOCK_EX);
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    unsigned long last = n > 0 ? std::strtoul(buf, nullptr, 10) : 0;
    // Never reuse a number a job folder already has (a counter lost with a copied spool).
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root / "jobs", ec)) {
        const std::string name = e.path().filename().string();
        if (valid_job_id(name)) last = std::max(last, std::strtoul(name.c_str() + 4, nullptr, 10));
    }
    const std::string text = std::to_string(last + 1) + "\n";
    const bool wrote =
        ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
        ::ftruncate(fd, static_cast<off_t>(text.size())) == 0 && ::fsync(fd) == 0;
    ::close(fd);  // releases the lock
    if (!wrote) throw std::runtime_error(seq.string() + ": cannot write the job counter");
    return last + 1;
}

std::string job_id_of(unsigned long n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "job-%06lu", n);
    return buf;
}

// Every regular file under `folder`, '/'-separated relative paths, sorted.
std::vector<std::string> files_under(const fs::path& folder) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
        if (e.is_symlink())
            throw std::runtime_error(e.path().string() + ": a job's files may not be symlinks");
        if (e.is_regular_file()) out.push_back(fs::relative(e.path(), folder).generic_string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Read-only, files and folders, so that nothing the job runs can change what it was given;
// readable by the daemon's user alone.
void make_read_only(const fs::path& folder) {
    std::vector<fs::path> dirs{folder};
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
        if (e.is_directory())
            dirs.push_back(e.path());
        else
            fs::permissions(e.path(), fs::perms::owner_read);
    }
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
        fs::permissions(*it, fs::perms::owner_read | fs::perms::owner_exec);
}

std::string spec_json(const job_spec& s) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    d.AddMember("schema_version", 1, a);
    d.AddMember("id", json_text(s.id, a), a);
    d.AddMember("kind", json_text(s.kind, a), a);
    d.AddMember("priority", s.priority, a);
    d.AddMember("submitted", json_text(s.submitted, a), a);
    d.AddMember("submitted_by", json_text(s.submitted_by, a), a);
    d.AddMember("submitter_uid", s.submitter_uid, a);
    d.AddMember("submitter", json_text(s.submitter, a), a);
    d.AddMember("config", json_text(s.config, a), a);
    d.AddMember("accepted", json_text(s.accepted, a), a);
    Value args(rapidjson::kArrayType);
    for (const std::string& x : s.args) args.PushBack(json_text(x, a), a);
    d.AddMember("args", args, a);
    Value files(rapidjson::kArrayType);
    for (const locked_file& f : s.files) {
        Value o(rapidjson::kObjectType);
        o.AddMember("path", json_text(f.path, a), a);
        o.AddMember("sha256", json_text(f.sha256, a), a);
        o.AddMember("bytes", static_cast<std::uint64_t>(f.bytes), a);
        files.PushBack(o, a);
    }
    d.AddMember("files", files, a);
    return to_pretty_json(d);
}

Value status_value(const job_status& s, rapidjson::Document::AllocatorType& a) {
    Value o(rapidjson::kObjectType);
    o.AddMember("id", json_text(s.id, a), a);
    o.AddMember("state", json_text(to_string(s.state), a), a);
    o.AddMember("reason", json_text(s.reason, a), a);
    o.AddMember("updated", json_text(s.updated, a), a);
    o.AddMember("started", json_text(s.started, a), a);
    o.AddMember("finished", json_text(s.finished, a), a);
    o.AddMember("starts", s.starts, a);
    o.AddMember("exit_code", s.exit_code, a);
    o.AddMember("device", s.device, a);
    o.AddMember("executor", json_text(s.executor, a), a);
    o.AddMember("handle", json_text(s.handle, a), a);
    o.AddMember("slurm_state", json_text(s.slurm_state, a), a);
    o.AddMember("iteration", s.iteration, a);
    o.AddMember("max_iterations", s.max_iterations, a);
    o.AddMember("attempts", s.attempts, a);
    o.AddMember("best_speedup", s.best_speedup, a);
    o.AddMember("run_dir", json_text(s.run_dir, a), a);
    o.AddMember("verdict", json_text(s.verdict, a), a);
    return o;
}

// Opens `relative` below `job` one component at a time, never through a link and never by
// "..": the run folder is written by the job's own process. -1 when it cannot.
int open_in_job(const fs::path& job, const std::string& relative) {
    const fs::path rel(relative);
    if (relative.empty() || rel.is_absolute()) return -1;
    int dir = ::open(job.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::vector<std::string> parts;
    for (const fs::path& part : rel)
        if (part != "." && !part.empty()) parts.push_back(part.string());
    for (std::size_t i = 0; dir >= 0 && i < parts.size(); ++i) {
        if (parts[i] == "..") {
            ::close(dir);
            return -1;
        }
        const bool last = i + 1 == parts.size();
        const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
        const int next = ::openat(dir, parts[i].c_str(), flags);
        ::close(dir);
        dir = next;
    }
    if (parts.empty() && dir >= 0) {  // the job folder itself is no file
        ::close(dir);
        return -1;
    }
    return dir;
}

}  // namespace

std::string to_string(job_state s) {
    return k_states[static_cast<int>(s)];
}

std::optional<job_state> job_state_from(const std::string& s) {
    for (int i = 0; i < 5; ++i)
        if (s == k_states[i]) return static_cast<job_state>(i);
    return std::nullopt;
}

spool::spool(fs::path root, bool create) : m_root(fs::absolute(std::move(root))) {
    std::error_code ec;
    const fs::path marker = m_root / "spool.json";
    if (!fs::exists(marker, ec)) {
        if (!create) throw std::runtime_error(m_root.string() + ": not a spool (no spool.json)");
        fs::create_directories(m_root.parent_path(), ec);
        make_private_folder(m_root, 0711);  // others reach submit.sock, nothing else
        make_private_folder(m_root / "jobs");
        make_private_folder(m_root / "staging");
        write_private(marker, "{\"format\": \"cuda-optimizer-spool\", \"version\": 1}\n");
    }
    const rapidjson::Document d = read_object(marker);
    if (string_or(d, "format") != "cuda-optimizer-spool" || int_or(d, "version", 0) != 1)
        throw std::runtime_error(marker.string() +
                                 ": field format: expected \"cuda-optimizer-spool\" version 1");
    make_private_folder(m_root / "jobs");
    make_private_folder(m_root / "staging");
}

fs::path spool::job_dir(const std::string& id) const {
    if (!valid_job_id(id)) throw std::invalid_argument("'" + id + "' is not a job id (job-NNNNNN)");
    return m_root / "jobs" / id;
}

std::vector<std::string> spool::job_ids() const {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(m_root / "jobs", ec)) {
        const std::string name = e.path().filename().string();
        if (valid_job_id(name) && fs::is_regular_file(e.path() / "job.json", ec))
            ids.push_back(name);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

job_spec spool::read_spec(const std::string& id) const {
    const fs::path file = job_dir(id) / "job.json";
    const rapidjson::Document d = read_object(file);
    job_spec s;
    s.id = string_or(d, "id");
    if (s.id != id) throw json_error(file.string() + ": field id: expected \"" + id + "\"");
    s.kind = string_or(d, "kind", "optimize");
    s.priority = int_or(d, "priority", 0);
    s.submitted = string_or(d, "submitted");
    s.submitted_by = string_or(d, "submitted_by");
    s.submitter_uid = int_or(d, "submitter_uid", -1);
    s.submitter = string_or(d, "submitter");
    s.config = string_or(d, "config");
    s.accepted = string_or(d, "accepted");
    if (d.HasMember("args") && d["args"].IsArray())
        for (const auto& x : d["args"].GetArray())
            if (x.IsString()) s.args.emplace_back(x.GetString());
    if (d.HasMember("files") && d["files"].IsArray())
        for (const auto& f : d["files"].GetArray())
            if (f.IsObject())
                s.files.push_back(
                    {string_or(f, "path"), string_or(f, "sha256"),
                     f.HasMember("bytes") && f["bytes"].IsUint64() ? f["bytes"].GetUint64() : 0});
    return s;
}

job_status spool::read_status(const std::string& id) const {
    const fs::path file = job_dir(id) / "state.json";
    const rapidjson::Document d = read_object(file);
    job_status s;
    s.id = id;
    const auto state = job_state_from(string_or(d, "state"));
    if (!state)
        throw json_error(file.string() +
                         ": field state: expected queued, running, done, failed or cancelled");
    s.state = *state;
    s.reason = string_or(d, "reason");
    s.updated = string_or(d, "updated");
    s.started = string_or(d, "started");
    s.finished = string_or(d, "finished");
    s.starts = int_or(d, "starts", 0);
    s.exit_code = int_or(d, "exit_code", -1);
    s.device = int_or(d, "device", -1);
    s.executor = string_or(d, "executor");
    s.handle = string_or(d, "handle");
    s.slurm_state = string_or(d, "slurm_state");
    s.iteration = int_or(d, "iteration", -1);
    s.max_iterations = int_or(d, "max_iterations", 0);
    s.attempts = int_or(d, "attempts", 0);
    s.best_speedup = double_or(d, "best_speedup", 0);
    s.run_dir = string_or(d, "run_dir");
    s.verdict = string_or(d, "verdict");
    return s;
}

void spool::write_status(const job_status& s) const {
    job_status copy = s;
    copy.updated = utc_now();
    rapidjson::Document d;
    const Value v = status_value(copy, d.GetAllocator());
    write_private(job_dir(s.id) / "state.json", to_pretty_json(v) + "\n");
}

fs::path spool::new_staging() const {
    std::random_device rd;
    for (int i = 0; i < 100; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "stage-%08x", static_cast<unsigned>(rd()));
        const fs::path p = staging_dir() / name;
        std::error_code ec;
        if (fs::create_directory(p, ec)) {
            // 0700: the job folder it becomes is the daemon's alone, whatever the umask.
            ::chmod(p.c_str(), 0700);
            make_private_folder(p / "files");
            return p;
        }
    }
    throw std::runtime_error(staging_dir().string() + ": cannot make a staging folder");
}

std::string spool::commit(const fs::path& stage, job_spec spec) const {
    const fs::path files = stage / "files";
    spec.files.clear();
    for (const std::string& rel : files_under(files)) {
        const fs::path f = files / rel;
        spec.files.push_back({rel, sha256_file_hex(f), fs::file_size(f)});
    }
    make_read_only(files);
    spec.submitted = utc_now();
    // Number, write, rename: a rename onto an existing folder fails, so a number taken twice
    // (never, with the flock) could not overwrite a job.
    spec.id = job_id_of(next_job_number(m_root));
    write_private(stage / "job.json", spec_json(spec) + "\n");
    job_status st;
    st.id = spec.id;
    st.updated = utc_now();
    rapidjson::Document d;
    const Value v = status_value(st, d.GetAllocator());
    write_private(stage / "state.json", to_pretty_json(v) + "\n");
    if (::rename(stage.c_str(), job_dir(spec.id).c_str()) != 0)
        throw std::runtime_error(job_dir(spec.id).string() + ": cannot queue the job");
    const int dir = ::open((m_root / "jobs").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    return spec.id;
}

bool spool::request_cancel(const std::string& id) const {
    std::error_code ec;
    const fs::path dir = job_dir(id);
    if (!fs::is_regular_file(dir / "job.json", ec)) return false;
    if (is_final(read_status(id).state)) return false;
    write_private(dir / "cancel", utc_now() + "\n");
    return true;
}

bool spool::cancel_requested(const std::string& id) const {
    std::error_code ec;
    return fs::exists(job_dir(id) / "cancel", ec);
}

std::string spool::verify_locked(const std::string& id) const {
    const job_spec spec = read_spec(id);
    const fs::path files = job_dir(id) / "files";
    std::error_code ec;
    for (const locked_file& f : spec.files) {
        const fs::path p = files / f.path;
        if (!fs::is_regular_file(p, ec)) return "files/" + f.path + " is missing";
        if (sha256_file_hex(p) != f.sha256)
            return "files/" + f.path + " changed after it was submitted (sha256 differs)";
    }
    if (files_under(files).size() != spec.files.size())
        return "files/ holds a file that was not submitted";
    return "";
}

void read_progress(const fs::path& job, job_status& st) {
    if (st.run_dir.empty()) return;
    rapidjson::Document d;
    const auto history = read_job_file(job, st.run_dir + "/history.json", k_max_history_bytes);
    if (history && try_parse_json(d, *history).empty() && d.IsObject() && d.HasMember("attempts") &&
        d["attempts"].IsArray()) {
        int attempts = 0, iteration = -1;
        double best = st.best_speedup;
        for (const auto& a : d["attempts"].GetArray()) {
            if (!a.IsObject()) continue;
            ++attempts;
            iteration = std::max(iteration, int_or(a, "iteration", -1));
            const auto b = a.FindMember("became_best");
            if (b != a.MemberEnd() && b->value.IsBool() && b->value.GetBool())
                best = std::max(best, double_or(a, "speedup_vs_initial", 0));
        }
        st.attempts = attempts;
        st.iteration = iteration;
        if (std::isfinite(best) && best < 1e9) st.best_speedup = best;
    }
    rapidjson::Document run;
    const auto run_json = read_job_file(job, st.run_dir + "/run.json", k_max_record_bytes);
    if (!run_json || !try_parse_json(run, *run_json).empty() || !run.IsObject()) return;
    const auto settings = run.FindMember("settings");
    if (settings == run.MemberEnd() || !settings->value.IsObject()) return;
    const int n = int_or(settings->value, "max_iterations", 0);
    if (n > 0) st.max_iterations = n;
}

std::optional<std::string> read_job_file(const fs::path& job, const std::string& relative,
                                         std::size_t max_bytes) {
    const int fd = open_in_job(job, relative);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::optional<std::string> text;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::uintmax_t>(st.st_size) <= max_bytes) {
        text.emplace();
        char buf[65536];
        ssize_t n = 0;
        while (text->size() <= max_bytes && (n = ::read(fd, buf, sizeof buf)) > 0)
            text->append(buf, static_cast<std::size_t>(n));
        if (n < 0 || text->size() > max_bytes) text.reset();  // grew while read
    }
    ::close(fd);
    return text;
}

bool job_file_exists(const fs::path& job, const std::string& relative) {
    const int fd = open_in_job(job, relative);
    if (fd < 0) return false;
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    return regular;
}

bool job_has_report(const fs::path& job, const job_status& st) {
    if (st.run_dir.empty()) return false;
    return job_file_exists(job, st.run_dir + "/report.html") ||
           job_file_exists(job, st.run_dir + "/gate.html");
}

std::string one_line(const std::string& text, std::size_t max_chars) {
    std::string out;
    for (const char ch : text) {
        const unsigned char c = static_cast<unsigned char>(ch);
        const bool blank = c < 0x20 || c == 0x7f || c == ' ';
        if (blank) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += ch;
        }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.size() <= max_chars) return out;
    std::size_t cut = max_chars >= 3 ? max_chars - 3 : 0;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    return out.substr(0, cut) + "...";
}

std::string problem_of(const spool& s, const job_spec& spec, std::size_t max_chars) {
    if (spec.kind == "gate") return one_line("gate against " + spec.accepted, max_chars);
    if (spec.config.empty()) return "";
    const fs::path job = s.job_dir(spec.id);
    const auto text = read_job_file(job, "files/" + spec.config, k_max_record_bytes);
    rapidjson::Document d;
    if (!text || !try_parse_json(d, *text).empty() || !d.IsObject())
        return one_line(spec.config, max_chars);
    if (const std::string what = one_line(string_or(d, "description"), max_chars); !what.empty())
        return what;
    // "void matmul_f32(const float* a, ...)": the name before the parenthesis.
    const std::string sig = string_or(d, "signature");
    static const std::regex k_name("([A-Za-z_][A-Za-z0-9_]*)\\s*\\(");
    std::smatch m;
    if (std::regex_search(sig, m, k_name)) return one_line(m[1].str(), max_chars);
    return one_line(spec.config, max_chars);
}

namespace {

// What a job's listing adds to its status: the problem's one line and whether a report exists.
void add_job_extras(const spool& s, const job_spec& spec, const job_status& st, Value& o,
                    rapidjson::Document::AllocatorType& a) {
    o.AddMember("problem", json_text(problem_of(s, spec), a), a);
    o.AddMember("has_report", job_has_report(s.job_dir(spec.id), st), a);
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
    Value jobs(rapidjson::kArrayType);
    for (const std::string& id : s.job_ids()) {
        try {
            const job_spec spec = s.read_spec(id);
            if (!visible(spec)) continue;
            const job_status st = status_now(s, id);
            Value o = status_value(st, a);
            o.AddMember("kind", json_text(spec.kind, a), a);
            o.AddMember("priority", spec.priority, a);
            o.AddMember("submitted", json_text(spec.submitted, a), a);
            o.AddMember("submitter", json_text(spec.submitter, a), a);
            o.AddMember("cancel_requested", s.cancel_requested(id), a);
            add_job_extras(s, spec, st, o, a);
            jobs.PushBack(o, a);
        } catch (const std::exception&) {
            // a job being written or damaged: status shows the others
        }
    }
    d.AddMember("jobs", jobs, a);
    return to_compact_json(d);
}

std::string spool_owner_problem(const fs::path& root) {
    struct stat st {};
    fs::path p = fs::absolute(root);
    if (::lstat(p.c_str(), &st) != 0) {
        if (errno != ENOENT) return p.string() + ": cannot be read";
        return "";  // made by this process, 0711, when opened
    }
    if (!S_ISDIR(st.st_mode)) return p.string() + ": not a folder";
    if (st.st_uid != ::geteuid())
        return p.string() + " belongs to uid " + std::to_string(st.st_uid) +
               ", not to this user (uid " + std::to_string(::geteuid()) +
               "): serve a spool only as its owner";
    return "";
}

void secure_spool_modes(const spool& s) {
    ::chmod(s.root().c_str(), 0711);
    std::error_code ec;
    for (fs::recursive_directory_iterator it(s.root(), ec), end; !ec && it != end;
         it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
        // Owner bits kept (read-only job files stay read-only), group and others removed.
        if ((st.st_mode & 077) != 0) ::chmod(it->path().c_str(), st.st_mode & 0700);
    }
}

std::size_t empty_staging(const spool& s) {
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(s.staging_dir(), ec)) {
        // A staged job's files are read-only: give the owner write back so they can go.
        std::error_code ignored;
        for (fs::recursive_directory_iterator it(e.path(), ignored), end; !ignored && it != end;
             it.increment(ignored))
            if (it->is_directory(ignored) && !it->is_symlink(ignored))
                ::chmod(it->path().c_str(), 0700);
        ::chmod(e.path().c_str(), 0700);
        fs::remove_all(e.path(), ignored);
        ++removed;
    }
    return removed;
}

int active_jobs_of(const spool& s, int uid) {
    int n = 0;
    for (const std::string& id : s.job_ids()) {
        try {
            if (s.read_spec(id).submitter_uid == uid && !is_final(s.read_status(id).state)) ++n;
        } catch (const std::exception&) {
            // a damaged job counts for nobody
        }
    }
    return n;
}

std::string job_json(const spool& s, const std::string& id) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    rapidjson::Document spec = parse_json(read_text_file(s.job_dir(id) / "job.json"), "job.json");
    const job_status st = status_now(s, id);
    d.AddMember("status", status_value(st, a), a);
    d.AddMember("cancel_requested", s.cancel_requested(id), a);
    add_job_extras(s, s.read_spec(id), st, d, a);
    d.AddMember("spec", Value(spec, a), a);
    return to_compact_json(d);
}

}  // namespace cuopt
