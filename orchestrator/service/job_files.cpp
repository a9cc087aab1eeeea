// What a job's own process wrote, read without following links: read_job_file, its progress
// (read_progress), whether it has a report, and the one line naming its problem (problem_of).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <regex>

#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "orchestrator/service/spool.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// What the daemon reads of files a job wrote: history.json grows with the attempts.
constexpr std::size_t k_max_history_bytes = 64u << 20;
constexpr std::size_t k_max_record_bytes = 4u << 20;  // run.json, summary.json, the config

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

}  // namespace cuopt
