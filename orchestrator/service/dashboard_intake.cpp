#include "orchestrator/service/dashboard_intake.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/file_io.hpp"
#include "common/message_text.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::string trimmed(const std::string& s) {
    const std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// A folder upload names its files "FOLDER/a/b"; the job's root is the folder chosen.
std::string upload_name(const multipart_part& part) {
    const std::string& name = *part.filename;
    if (part.name != "folder") return name;
    const std::size_t slash = name.find('/');
    return slash == std::string::npos ? name : name.substr(slash + 1);
}

void add_file(intake_form& form, multipart_part& part, std::size_t max_file_bytes,
              std::set<std::string>& seen) {
    const std::string name = upload_name(part);
    if (name.empty() && part.data.empty()) return;  // an input with no file chosen
    if (const std::string why = upload_name_problem(name); !why.empty())
        throw intake_refusal(400, "upload name " + quote_value(name) + " refused: " + why);
    if (part.data.size() > max_file_bytes)
        throw intake_refusal(413, "file " + quote_value(name) + " is " +
                                      std::to_string(part.data.size()) + " bytes; the limit is " +
                                      std::to_string(max_file_bytes));
    if (!seen.insert(name).second)
        throw intake_refusal(400, "file " + quote_value(name) + " is uploaded twice");
    form.files.push_back({name, std::move(part.data)});
}

int read_priority(const std::string& text) {
    const std::string t = trimmed(text);
    if (t.empty()) return 0;
    std::size_t used = 0;
    int value = 0;
    try {
        value = std::stoi(t, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != t.size() || value < -1000 || value > 1000)
        throw intake_refusal(
            400, "priority " + quote_value(t) + " is not a whole number from -1000 to 1000");
    return value;
}

// One flag a line, its value after the first space ("--max-iterations 3" is two arguments;
// "--note two words" too: the value keeps its spaces).
std::vector<std::string> read_args(const std::string& text) {
    std::vector<std::string> args;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string line = trimmed(text.substr(start, end - start));
        start = end + 1;
        if (line.empty()) continue;
        const std::size_t space = line.find_first_of(" \t");
        args.push_back(line.substr(0, space));
        if (space != std::string::npos) args.push_back(trimmed(line.substr(space)));
    }
    return args;
}

void write_one(const fs::path& root, const uploaded_file& f) {
    if (const std::string why = upload_name_problem(f.name); !why.empty())
        throw intake_refusal(400, "upload name " + quote_value(f.name) + " refused: " + why);
    const fs::path target = resolve_inside(root, f.name);  // throws for anything escaping
    fs::create_directories(target.parent_path());
    // O_EXCL|O_NOFOLLOW in the upload's fresh folder: never an existing file, never through a
    // link (not write_file_with: a second file of the same name must fail, not replace).
    const int fd =
        ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw file_write_error(target.string() + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < f.data.size()) {
        const ssize_t n = ::write(fd, f.data.data() + done, f.data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            throw file_write_error(target.string() + ": " + std::strerror(e));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) throw file_write_error(target.string() + ": " + std::strerror(errno));
}

std::vector<std::string> staged_files(const fs::path& stage) {
    std::vector<std::string> out;
    const fs::path root = stage / "files";
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), root, ec).string());
    std::sort(out.begin(), out.end());
    return out;
}

// Removes a folder when the scope ends, unless released.
struct folder_guard {
    fs::path path;
    ~folder_guard() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

// Staging, as `submit` does it, from the uploaded copy; then check.
void stage_and_check(const spool& s, const intake_form& form, const fs::path& upload,
                     const fs::path& optimizer, const fs::path& harness,
                     const dashboard_settings& settings, intake_result& r) {
    submission sub;
    sub.config = upload / "files" / form.config;
    sub.args = form.args;
    sub.priority = form.priority;
    sub.submitted_by = "web";
    sub.confine_to = upload / "files";  // nothing the config names may come from elsewhere
    sub.optimizer = optimizer;
    sub.job_time_limit_s = settings.job_time_limit_s;
    sub.max_spool_bytes = settings.max_spool_bytes_per_user;
    const fs::path stage = stage_submission(s, sub, r.spec);
    folder_guard stage_guard{stage};
    r.outcome = check_staged(optimizer, harness, stage, r.spec);
    r.checked = true;
    r.files = staged_files(stage);
    if (r.outcome.rejects()) return;  // the guard removes the staged job
    r.stage = stage.filename().string();
    stage_guard.path.clear();
}

}  // namespace

intake_form read_intake_form(std::vector<multipart_part> parts, std::size_t max_file_bytes) {
    intake_form form;
    std::set<std::string> seen;
    for (multipart_part& part : parts) {
        if (part.filename) {
            if (part.name == "files" || part.name == "folder")
                add_file(form, part, max_file_bytes, seen);
        } else if (part.name == "config") {
            if (const std::string c = trimmed(part.data); !c.empty()) form.config = c;
        } else if (part.name == "priority") {
            form.priority = read_priority(part.data);
        } else if (part.name == "args") {
            form.args = read_args(part.data);
        }
    }
    if (const std::string why = upload_name_problem(form.config); !why.empty())
        throw intake_refusal(400, "config name " + quote_value(form.config) + " refused: " + why);
    if (!seen.count(form.config))
        throw intake_refusal(400, "the config " + quote_value(form.config) +
                                      " is not among the uploaded files (" +
                                      std::to_string(form.files.size()) + " uploaded)");
    return form;
}

void write_uploads(const fs::path& folder, const std::vector<uploaded_file>& files) {
    const fs::path root = folder / "files";
    fs::create_directories(root);
    for (const uploaded_file& f : files) write_one(root, f);
}

std::string web_jobs_problem(const spool& s, const dashboard_settings& settings) {
    const int active = active_jobs_of(s, -1);  // the web's jobs name no uid of their own
    if (active < settings.max_jobs) return "";
    return "the dashboard's jobs: " + std::to_string(active) + " queued or running; the limit is " +
           std::to_string(settings.max_jobs) +
           " (serve --max-jobs-per-user): wait for one to end, or cancel one";
}

intake_result run_intake(const spool& s, const std::string& content_type, const std::string& body,
                         const dashboard_settings& settings, const fs::path& optimizer,
                         const fs::path& harness) {
    intake_result r;
    try {
        const std::string boundary = multipart_boundary(content_type);
        if (const std::string why = web_jobs_problem(s, settings); !why.empty())
            throw intake_refusal(429, why);
        const intake_form form =
            read_intake_form(parse_multipart(body, boundary), settings.max_file_bytes);
        if (form.priority > settings.max_priority)
            throw intake_refusal(403, "priority " + std::to_string(form.priority) +
                                          ": the dashboard's jobs may ask for " +
                                          std::to_string(settings.max_priority) +
                                          " at most (serve --web-max-priority)");
        folder_guard upload{s.new_staging()};
        write_uploads(upload.path, form.files);
        stage_and_check(s, form, upload.path, optimizer, harness, settings, r);
    } catch (const intake_refusal& e) {
        r.http_status = e.http_status;
        r.error = e.what();
    } catch (const multipart_error& e) {
        r.http_status = 400;
        r.error = std::string("the upload is not well-formed multipart/form-data: ") + e.what();
    } catch (const intake_error& e) {
        r.http_status = 400;
        r.error = e.what();
        r.outcome.table = e.check_table;
    } catch (const std::exception& e) {
        r.http_status = 500;
        r.error = e.what();
    }
    return r;
}

}  // namespace cuopt
