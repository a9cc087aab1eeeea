#include "orchestrator/service/spool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
#include "orchestrator/service/job_status_json.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

const char* const k_states[] = {"queued", "running", "done", "failed", "cancelled"};

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

}  // namespace

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

}  // namespace cuopt
