// The submission socket's requests, read and answered: the uploaded files decoded and held to
// the limits, the job staged and checked as `submit` would, status and cancel on one's own jobs
// (any for an operator), and who counts as an operator.
#include "orchestrator/service/submit_requests.hpp"

#include <grp.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <unistd.h>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/service/dashboard_intake.hpp"
#include "orchestrator/service/job_intake.hpp"
#include "orchestrator/service/job_limits.hpp"

namespace cuopt {

namespace fs = std::filesystem;
using rapidjson::Value;

namespace {

// Files one submission may hold (as many parts as the dashboard's intake form may have): each
// becomes a file in staging/ before the job's own are picked out of them.
constexpr std::size_t k_max_files = 1000;

std::string decode_base64(const std::string& name, const std::string& text) {
    if (text.size() % 4 != 0)
        throw refusal("file " + quote_value(name) + ": its base64 is not whole");
    std::string out(text.size() / 4 * 3, '\0');
    const int n = ::EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                    reinterpret_cast<const unsigned char*>(text.data()),
                                    static_cast<int>(text.size()));
    if (n < 0) throw refusal("file " + quote_value(name) + ": not base64");
    std::size_t pad = 0;
    for (std::size_t i = text.size(); i > 0 && text[i - 1] == '=' && pad < 2; --i) ++pad;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

// The uploaded files, each name checked, their count and decoded total held to the limits.
std::vector<uploaded_file> read_files(const json_field& request, std::size_t max_bytes) {
    const json_field list = request["files"];
    if (list.size() > k_max_files)
        throw refusal("field files: " + std::to_string(list.size()) + " files; at most " +
                      std::to_string(k_max_files) + " per submission");
    std::vector<uploaded_file> files;
    std::size_t total = 0;
    for (const json_field& f : list.items()) {
        uploaded_file u{f.optional_text("path").value_or(""), ""};
        if (const std::string why = upload_name_problem(u.name); !why.empty())
            throw refusal("file name " + quote_value(u.name) + " refused: " + why);
        u.data = decode_base64(u.name, f.optional_text("base64").value_or(""));
        total += u.data.size();
        if (total > max_bytes)
            throw refusal("the job's files exceed the limit of " + std::to_string(max_bytes) +
                          " bytes per submission (serve --max-upload-mb)");
        files.push_back(std::move(u));
    }
    return files;
}

// What a submit request asks for: its kind, priority and flags.
submission read_submission(const json_field& request, const submit_settings& settings,
                           const peer& p) {
    submission sub;
    sub.kind = request.optional_text("kind").value_or("optimize");
    if (sub.kind.empty()) sub.kind = "optimize";
    if (const auto priority = request.optional_integer<int>("priority")) {
        sub.priority = *priority;
        // A submitter may lower its job, never put it ahead of others': only operators may.
        if (sub.priority > 0 && !p.privileged)
            throw refusal("field priority: above 0 only for operators (serve --operators)");
    }
    sub.args = request.optional_texts("args");  // a NUL: daemon_flag_problem
    sub.job_time_limit_s = settings.job_time_limit_s;
    sub.max_spool_bytes = settings.max_spool_bytes_per_user;
    if (const std::string why = job_args_problem(sub.args, sub.job_time_limit_s); !why.empty())
        throw refusal("submit: " + why);
    return sub;
}

// config and accepted: the names of uploaded files, checked as the files' own are.
void read_upload_names(const json_field& request, submission& sub) {
    for (const char* key : {"config", "accepted"}) {
        const std::string rel = request.optional_text(key).value_or("");
        if (rel.empty()) continue;
        if (const std::string why = upload_name_problem(rel); !why.empty())
            throw refusal(std::string("field ") + key + " '" + rel.substr(0, 200) +
                          "' refused: " + why);
        (key[0] == 'c' ? sub.config : sub.accepted) = rel;
    }
}

// Removes a folder when the scope ends.
struct folder_guard {
    fs::path path;
    ~folder_guard() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

// `text` with the daemon's staging folders taken out of every path it names: a submitter reads
// the file as it named it ("config.json: field ..."), never where the daemon keeps uploads.
std::string without_staging(const spool& s, const std::string& text) {
    std::string out = text;
    const std::string prefix = s.staging_dir().string() + "/stage-";
    for (std::size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at)) {
        std::size_t end = out.find('/', at + prefix.size());  // after stage-XXXXXXXX
        if (end == std::string::npos) end = out.size() - 1;
        if (out.compare(end, 7, "/files/") == 0) end += 6;  // and its files/
        out.erase(at, end + 1 - at);
    }
    return out;
}

// A reply holding `result` (JSON text) as its "result".
std::string result_reply(const std::string& result) {
    rapidjson::Document d(rapidjson::kObjectType);
    const rapidjson::Document r = parse_json(result, "result");
    json_object(d).add("ok", true).add("result", static_cast<const Value&>(r));
    return to_compact_json(d) + "\n";
}

// The job `id`, when `p` may see it: its own, or any for an operator. Another user's job is
// refused as a missing one is: the refusal says nothing of whose it is, nor that it exists.
job_spec visible_job(const spool& s, const peer& p, const std::string& id) {
    const refusal none(quote_value(id) +
                       ": not your job, or no such job (only its submitter or an operator may "
                       "see or cancel a job)");
    job_spec spec;
    try {
        spec = s.read_spec(id);
    } catch (const std::exception&) {
        throw none;
    }
    if (!p.privileged && spec.submitter_uid != static_cast<int>(p.uid)) throw none;
    return spec;
}

}  // namespace

std::string user_name(unsigned uid) {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found) return pw.pw_name;
    return "uid-" + std::to_string(uid);
}

std::string refusal_reply(const refusal& r) {
    rapidjson::Document d(rapidjson::kObjectType);
    json_object(d)
        .add("ok", false)
        .add("error", shortened(r.what(), 1000))  // a value it quotes is cut already
        .add("exit", to_int(r.exit))
        .add("table", r.check_table);
    return to_compact_json(d) + "\n";
}

// The files into a fresh box in staging/, then what `submit` does with a config on disk,
// confined to the box. Runs on a worker thread: check takes seconds.
std::string submit_uploaded(const spool& s, const submit_settings& settings, const peer& p,
                            const Value& request) {
    submission sub;
    std::vector<uploaded_file> files;
    try {  // a field of another kind is the client's mistake, refused with its path
        const json_field fields(request, "");
        sub = read_submission(fields, settings, p);
        files = read_files(fields, settings.max_upload_bytes);
        read_upload_names(fields, sub);
    } catch (const json_error& e) {
        throw refusal(e.what());
    }
    folder_guard box{s.new_staging()};
    write_uploads(box.path, files);
    const fs::path root = box.path / "files";
    if (!sub.config.empty()) sub.config = root / sub.config;
    if (!sub.accepted.empty()) sub.accepted = root / sub.accepted;
    sub.submitted_by = "cli";
    sub.submitter_uid = static_cast<int>(p.uid);
    sub.submitter = p.name;
    sub.confine_to = root;  // nothing the config names may come from elsewhere
    try {
        std::string table;
        const std::string id = submit_job(s, sub, settings.optimizer, settings.harness, &table);
        rapidjson::Document d(rapidjson::kObjectType);
        json_object(d).add("ok", true).add("job", id);
        return to_compact_json(d) + "\n";
    } catch (const intake_error& e) {
        throw refusal(without_staging(s, e.what()), exit_code::invalid_request,
                      without_staging(s, e.check_table));
    }
}

std::string answer_status(const spool& s, const peer& p, const std::string& id) {
    if (!id.empty()) {
        visible_job(s, p, id);
        return result_reply(job_json(s, id));
    }
    return result_reply(jobs_json(s, [&](const job_spec& spec) {
        return p.privileged || spec.submitter_uid == static_cast<int>(p.uid);
    }));
}

std::string answer_cancel(const spool& s, const peer& p, const std::string& id) {
    visible_job(s, p, id);
    if (!s.request_cancel(id)) throw refusal(quote_value(id) + ": it has already ended");
    return result_reply(one_member_json("job", id));
}

bool is_operator(unsigned uid, unsigned gid, const std::string& operators) {
    if (uid == 0 || uid == ::geteuid()) return true;
    if (operators.empty()) return false;
    std::vector<char> buf(65536);
    group gr{};
    group* found = nullptr;
    if (::getgrnam_r(operators.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || !found)
        return false;
    if (gr.gr_gid == gid) return true;
    std::vector<char> pbuf(16384);
    passwd pw{};
    passwd* user = nullptr;
    if (::getpwuid_r(uid, &pw, pbuf.data(), pbuf.size(), &user) != 0 || !user) return false;
    int n = 256;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) return false;
    }
    for (int i = 0; i < n; ++i)
        if (groups[static_cast<std::size_t>(i)] == gr.gr_gid) return true;
    return false;
}

}  // namespace cuopt
