#include "orchestrator/artifacts/confinement_record.hpp"

#include "common/json_builder.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

std::string attempts_text(int n) {
    return std::to_string(n) + (n == 1 ? " attempt" : " attempts");
}

// Why the unconfined attempts were: the harness's own reason, where it ran unconfined from the
// start; else only their responses said so.
std::string unconfined_reason(const confinement_record& r) {
    return r.harness.confined() ? "their responses said so, though the harness had confined "
                                  "itself at the start"
                                : r.harness.reason;
}

}  // namespace

confinement_record count_confinement(confinement_record r,
                                     const std::vector<attempt_result>& history) {
    r.landlock_attempts = r.unconfined_attempts = 0;
    for (const attempt_result& a : history) {
        if (a.confinement == "landlock") ++r.landlock_attempts;
        if (a.confinement == "none") ++r.unconfined_attempts;
    }
    return r;
}

Value confinement_record_json(const confinement_record& r, json_allocator& a) {
    json_object v(a);
    v.add("mode", r.harness.mode.c_str());
    if (r.harness.confined())
        v.add("abi", r.harness.abi);
    else
        v.add("reason", r.harness.reason.c_str());
    json_object attempts(a);
    attempts.add("landlock", r.landlock_attempts).add("none", r.unconfined_attempts);
    return v.add("allow_unconfined", r.allow_unconfined).add("attempts", attempts).take();
}

std::optional<confinement_record> read_confinement_record(const Value& run_json) {
    const Value* v = member(run_json, "confinement");
    if (!v || !v->IsObject()) return std::nullopt;
    confinement_record r;
    r.harness.mode = text_of(*v, "mode");
    r.harness.abi = static_cast<int>(integer_of(*v, "abi").value_or(0));
    r.harness.reason = text_of(*v, "reason");
    r.allow_unconfined = bool_of(*v, "allow_unconfined").value_or(false);
    const Value& attempts = object_or_empty(*v, "attempts");
    r.landlock_attempts = static_cast<int>(integer_of(attempts, "landlock").value_or(0));
    r.unconfined_attempts = static_cast<int>(integer_of(attempts, "none").value_or(0));
    return r;
}

std::string confinement_line(const confinement_record& r) {
    const std::string landlock = "Landlock (ABI " + std::to_string(r.harness.abi) + ")";
    const int total = r.landlock_attempts + r.unconfined_attempts;
    if (total == 0)
        return "no attempt reached the harness; it " +
               (r.harness.confined() ? "confines itself with " + landlock
                                     : "runs unconfined (" + r.harness.reason + ")");
    if (r.unconfined_attempts == 0)
        return "all " + attempts_text(total) + " ran confined by " + landlock +
               ": each kernel could reach only its own request folder, the CUDA toolkit and the "
               "driver";
    if (r.landlock_attempts == 0)
        return "all " + attempts_text(total) + " ran unconfined (" + unconfined_reason(r) + ")";
    return attempts_text(r.unconfined_attempts) + " of " + std::to_string(total) +
           " ran unconfined (" + unconfined_reason(r) + "), the other " +
           std::to_string(r.landlock_attempts) + " under Landlock";
}

std::string confinement_warning(const confinement_record& r) {
    if (r.unconfined_attempts > 0)
        return attempts_text(r.unconfined_attempts) + " ran unconfined (" + unconfined_reason(r) +
               "): their kernels could read any file this user can" +
               (r.allow_unconfined ? "; --allow-unconfined let them run" : "");
    if (r.allow_unconfined)
        return std::string(
                   "--allow-unconfined was given: kernels nobody reviewed may run "
                   "unconfined") +
               (r.harness.confined() ? " (none did: the harness confined itself with Landlock)"
                                     : " (the harness runs unconfined: " + r.harness.reason + ")");
    return "";
}

}  // namespace cuopt
