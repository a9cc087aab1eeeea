#pragma once
/// `optimize --resume RUN_DIR`, the run folder's side: what run.json recorded (a folder that
/// holds no run, or a run that finished, is refused), whether what goes in now is what went in
/// then (the sha256 of the manifest, the kernels, the inputs and the harness; the settings of
/// record; the proposer), the attempts and candidates the run left (history.json,
/// candidates/iter-NN/candidates.json, each attempt's kernel.cu and response.json), and the
/// attempt folders that were in flight when it stopped. Every refusal is a run_failure with
/// exit code resume_refused and one line that names what.

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/pid_lock.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/search/search_record.hpp"

namespace cuopt {

/// What tells one GPU from another: run.json device's index, name and uuid ("" where none).
struct recorded_device {
    long long index = -1;
    std::string name, uuid;
};

struct recorded_run {
    std::filesystem::path run;  // the run folder
    std::vector<std::string> command_line;
    std::string working_directory;
    std::string started_utc;
    double wall_s = 0;  // the sessions before, up to their last attempt
    std::string proposer;
    std::map<std::string, std::string> sha256;
    std::map<std::string, std::string> settings;  // each value as compact JSON
    std::vector<resume_entry> resumes;
    std::optional<recorded_device> device;  // run.json device (the first of --devices)
    std::string inputs_key_id;              // run.json inputs_key.id; "" for a run from before keys
};

/// RUN/run.json. Refuses a folder without one (not a run folder), a malformed one, one from
/// before --resume existed (no working_directory), and a run that finished (only one that was
/// interrupted, or stopped before it could say why, goes on).
recorded_run read_recorded_run(const std::filesystem::path& run);

/// Removes the partial files a killed run left in RUN (a write_file_atomic temporary,
/// NAME.tmp-<16 hex digits>, not yet renamed over NAME): regular files of that name only, each
/// folder opened from its parent without following a link; how many. Called with the lock held.
int remove_partial_writes(const std::filesystem::path& run);

/// An flock on RUN/.lock held for the run's lifetime (a fresh run and a resume both), its pid
/// written in the file, and handed down to every child the run starts (its harnesses): the run
/// is still going while any of them lives. Taking a lock that a running process's pid holds
/// refuses (exit 28): "the run is still going (pid N holds RUN/.lock)". When the pid in it has
/// ended (a killed optimizer whose harness has not yet), it waits up to 30 s for the lock, then
/// refuses the same way. The file goes when the lock is let go (pid_lock::release_removing) once
/// the run has ended (remove_when_released), and where this lock made it (a refused resume
/// leaves the folder as it was); a killed run's stays until a resume of it ends.
class run_lock {
  public:
    run_lock() = default;
    explicit run_lock(const std::filesystem::path& run);
    run_lock(run_lock&& o) noexcept : m_lock(std::move(o.m_lock)), m_remove(o.m_remove) {}
    run_lock& operator=(run_lock&& o) noexcept;
    run_lock(const run_lock&) = delete;
    run_lock& operator=(const run_lock&) = delete;
    ~run_lock();
    int fd() const { return m_lock.fd(); }
    /// The run changes its folder from now on: RUN/.lock goes when the lock is let go, as the
    /// run ends (run_context lets go of it after its runner, once no harness runs).
    void remove_when_released() { m_remove = true; }

  private:
    void release();
    pid_lock m_lock;
    bool m_remove = false;
};

/// The fingerprint of a harness device block (--device-info's JSON); nothing when it is not one.
std::optional<recorded_device> fingerprint_of(const device_facts& device);

/// Refuses the resume (exit 28) when the first device now is not the one the run began on
/// (another name or uuid, or another index first in --devices): the recorded initial figures
/// would be held against another GPU's times.
void check_same_device(const recorded_run& then, const std::optional<recorded_device>& now);

// resume_unchanged.cpp: what goes in now against what went in then.

/// Settings that may differ on a resume: they change how the run is carried out, not what it
/// finds (--isolation, --devices and the first of them, --compile-threads).
extern const std::set<std::string> k_settings_free_on_resume;

/// Which of run.json's hashes `now` holds: those computed before the oracle is made (the
/// generated inputs not yet), or those after it (the holdout's not yet: checked before).
enum class hash_stage { before_oracle, after_oracle };

/// Refuses the resume when a hash in `now` differs from the recorded one (the file and the
/// field named), a file is hashed now that run.json has none for or the reverse (a reference or
/// holdout added to the config or taken out), a setting of record differs, or the proposer is
/// another.
void check_unchanged(const recorded_run& then, const run_info& now, const optimizer_options& o,
                     hash_stage stage = hash_stage::after_oracle);

/// The sha256 a run records before its oracle is made, computed now without touching the run
/// folder: manifest, initial, harness, reference, holdout and every file input.
std::map<std::string, std::string> hashes_before_oracle(const optimizer_options& o,
                                                        const manifest& m,
                                                        const candidate& initial);

// resume_search_record.cpp: what the run left.

/// The attempts and candidates the run left, each attempt with its whole candidate (source and
/// launches from its candidates.json, the source checked against history.json's sha256), its
/// samples, timer and GPU monitor from its response.json. `initial` is iteration 0's.
search_record read_search_record(const std::filesystem::path& run, const manifest& m,
                                 const candidate& initial);

/// The attempt folders without an entry in history.json: those under way when the run stopped.
std::vector<std::filesystem::path> in_flight_folders(const std::filesystem::path& run,
                                                     const search_record& record);

}  // namespace cuopt
