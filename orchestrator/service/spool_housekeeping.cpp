// The spool's upkeep: its owner and modes checked at serve's start, staging/ emptied, what each
// user holds in it counted, and ended jobs' files given back or removed.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "orchestrator/service/spool.hpp"

namespace cuopt {

namespace fs = std::filesystem;

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

}  // namespace cuopt
