#include "orchestrator/service/spool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <random>
#include <regex>
#include <stdexcept>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
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
    json_array files(a);
    for (const locked_file& f : s.files) {
        json_object o(a);
        o.add("path", f.path).add("sha256", f.sha256).add("bytes", f.bytes);
        files.push(o);
    }
    json_object o(d);
    o.add("schema_version", 1)
        .add("id", s.id)
        .add("kind", s.kind)
        .add("priority", s.priority)
        .add("submitted", s.submitted)
        .add("submitted_by", s.submitted_by)
        .add("submitter_uid", s.submitter_uid)
        .add("submitter", s.submitter)
        .add("config", s.config)
        .add("accepted", s.accepted)
        .add("args", s.args)
        .add("files", files);
    return to_pretty_json(d);
}

json_object status_value(const job_status& s, json_allocator& a) {
    json_object o(a);
    o.add("id", s.id)
        .add("state", to_string(s.state))
        .add("reason", s.reason)
        .add("updated", s.updated)
        .add("started", s.started)
        .add("finished", s.finished)
        .add("starts", s.starts)
        .add("exit_code", s.exit_code)
        .add("device", s.device)
        .add("executor", s.executor)
        .add("handle", s.handle)
        .add("slurm_state", s.slurm_state)
        .add("iteration", s.iteration)
        .add("max_iterations", s.max_iterations)
        .add("attempts", s.attempts)
        .add("best_speedup", s.best_speedup)
        .add("run_dir", s.run_dir)
        .add("verdict", s.verdict);
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
    const json_field f(d, marker.string());
    if (f.optional_text("format") != "cuda-optimizer-spool")
        f["format"].fail("\"cuda-optimizer-spool\"");
    if (f.optional_integer("version") != 1) f["version"].fail("1");
    make_private_folder(m_root / "jobs");
    make_private_folder(m_root / "staging");
}

fs::path spool::job_dir(const std::string& id) const {
    if (!valid_job_id(id))
        throw std::invalid_argument(quote_value(id) + " is not a job id (job-NNNNNN)");
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
    const json_field f(d, file.string());
    job_spec s;
    s.id = f.optional_text("id").value_or("");
    if (s.id != id) f["id"].fail("\"" + id + "\"");
    s.kind = f.optional_text("kind").value_or("optimize");
    s.priority = f.optional_integer<int>("priority").value_or(0);
    s.submitted = f.optional_text("submitted").value_or("");
    s.submitted_by = f.optional_text("submitted_by").value_or("");
    s.submitter_uid = f.optional_integer<int>("submitter_uid").value_or(-1);
    s.submitter = f.optional_text("submitter").value_or("");
    s.config = f.optional_text("config").value_or("");
    s.accepted = f.optional_text("accepted").value_or("");
    s.args = f.optional_texts("args");
    if (const auto files = f.find("files"))
        for (const json_field& x : files->items())
            s.files.push_back({x.optional_text("path").value_or(""),
                               x.optional_text("sha256").value_or(""),
                               x.optional_integer<std::uint64_t>("bytes").value_or(0)});
    return s;
}

job_status spool::read_status(const std::string& id) const {
    const fs::path file = job_dir(id) / "state.json";
    const rapidjson::Document d = read_object(file);
    const json_field f(d, file.string());
    job_status s;
    s.id = id;
    const std::string word = f.text("state");
    const auto state = job_state_from(word);
    if (!state)
        f["state"].fail("one of queued, running, done, failed, cancelled", quote_value(word));
    s.state = *state;
    auto text = [&](const char* key) { return f.optional_text(key).value_or(""); };
    auto integer = [&](const char* key, int fallback) {
        return f.optional_integer<int>(key).value_or(fallback);
    };
    s.reason = text("reason");
    s.updated = text("updated");
    s.started = text("started");
    s.finished = text("finished");
    s.starts = integer("starts", 0);
    s.exit_code = integer("exit_code", -1);
    s.device = integer("device", -1);
    s.executor = text("executor");
    s.handle = text("handle");
    s.slurm_state = text("slurm_state");
    s.iteration = integer("iteration", -1);
    s.max_iterations = integer("max_iterations", 0);
    s.attempts = integer("attempts", 0);
    s.best_speedup = f.optional_number("best_speedup").value_or(0);
    s.run_dir = text("run_dir");
    s.verdict = text("verdict");
    return s;
}

void spool::write_status(const job_status& s) const {
    job_status copy = s;
    copy.updated = utc_now();
    rapidjson::Document d;
    const Value v = status_value(copy, d.GetAllocator()).take();
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
    const Value v = status_value(st, d.GetAllocator()).take();
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

// A running job's files are read for progress only, leniently: a file that does not read is
// passed over and a value of another kind reads as absent, never an error.
void read_progress(const fs::path& job, job_status& st) {
    if (st.run_dir.empty()) return;
    rapidjson::Document d;
    const auto history = read_job_file(job, st.run_dir + "/history.json", k_max_history_bytes);
    const rapidjson::Value* attempts =
        history && try_parse_json(d, *history).empty() ? member(d, "attempts") : nullptr;
    if (attempts && attempts->IsArray()) {
        long long iteration = -1;
        double best = st.best_speedup;
        for (const rapidjson::Value& a : attempts->GetArray()) {
            iteration = std::max(iteration, integer_of(a, "iteration").value_or(-1));
            if (bool_of(a, "became_best").value_or(false))
                best = std::max(best, number_of(a, "speedup_vs_initial").value_or(0));
        }
        st.attempts = static_cast<int>(attempts->Size());
        st.iteration = static_cast<int>(std::min<long long>(iteration, INT_MAX));
        if (std::isfinite(best) && best < 1e9) st.best_speedup = best;
    }
    rapidjson::Document run;
    const auto run_json = read_job_file(job, st.run_dir + "/run.json", k_max_record_bytes);
    if (!run_json || !try_parse_json(run, *run_json).empty()) return;
    const long long n = integer_of(object_or_empty(run, "settings"), "max_iterations").value_or(0);
    if (n > 0 && n <= INT_MAX) st.max_iterations = static_cast<int>(n);
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
    if (!text || !try_parse_json(d, *text).empty()) return one_line(spec.config, max_chars);
    // The user's file, read leniently: a member that does not read is passed over.
    if (const std::string what = one_line(text_of(d, "description"), max_chars); !what.empty())
        return what;
    // "void matmul_f32(const float* a, ...)": the name before the parenthesis.
    const std::string sig = text_of(d, "signature");
    static const std::regex k_name("([A-Za-z_][A-Za-z0-9_]*)\\s*\\(");
    std::smatch m;
    if (std::regex_search(sig, m, k_name)) return one_line(m[1].str(), max_chars);
    return one_line(spec.config, max_chars);
}

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

namespace {

// Removes `path` and everything in it, making its read-only folders writable on the way (a
// locked manifest's are 0500); a link is removed, never followed. Throws when it cannot.
void remove_tree(const fs::path& path) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(path, ec);
    if (!fs::exists(st)) return;
    if (fs::is_directory(st)) {
        for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
            if (it->is_directory(ec) && !it->is_symlink(ec))
                fs::permissions(it->path(), fs::perms::owner_all, ec);
        fs::permissions(path, fs::perms::owner_all, ec);
    }
    fs::remove_all(path, ec);
    if (ec) throw fs::filesystem_error("cannot remove", path, ec);
}

}  // namespace

std::size_t empty_staging(const spool& s) {
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(s.staging_dir(), ec)) {
        try {
            remove_tree(e.path());  // a staged job's files are read-only
        } catch (const fs::filesystem_error&) {
            // Left for the next start's sweep; the staging area is never read as a job.
        }
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

std::uintmax_t folder_bytes(const fs::path& folder) {
    std::uintmax_t n = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) n += it->file_size(ec);
    return n;
}

std::uintmax_t spool_bytes_of(const spool& s, int uid) {
    std::uintmax_t n = 0;
    for (const std::string& id : s.job_ids()) {
        try {
            if (s.read_spec(id).submitter_uid == uid) n += folder_bytes(s.job_dir(id));
        } catch (const std::exception&) {
            // a damaged job counts for nobody
        }
    }
    return n;
}

std::uintmax_t free_job_bytes(const spool& s, const std::string& id) {
    std::uintmax_t freed = 0;
    for (const char* part : {"files", "results"}) {
        const fs::path p = s.job_dir(id) / part;
        freed += folder_bytes(p);
        remove_tree(p);
    }
    return freed;
}

std::vector<std::string> remove_ended_jobs(const spool& s, std::chrono::seconds keep) {
    std::vector<std::string> removed;
    const auto now = fs::file_time_type::clock::now();
    for (const std::string& id : s.job_ids()) {
        try {
            if (!is_final(s.read_status(id).state)) continue;
            if (now - fs::last_write_time(s.job_dir(id) / "state.json") <= keep) continue;
            const fs::path away = s.new_staging();
            fs::rename(s.job_dir(id), away / id);  // out of jobs/ in one step
            remove_tree(away);
            removed.push_back(id);
        } catch (const std::exception&) {
            // unreadable or busy: left for the next pass
        }
    }
    return removed;
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
