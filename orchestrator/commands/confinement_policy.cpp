#include "orchestrator/commands/confinement_policy.hpp"

#include "orchestrator/commands/model_settings.hpp"

namespace cuopt {

namespace {

// --proposer auto picks the model where a key or a base URL is configured; a configuration
// that does not read counts as the model (optimize refuses it on its own before this matters).
bool proposes_with_model(const optimizer_options& o) {
    if (o.proposer == "llm") return true;
    if (o.proposer != "auto") return false;
    try {
        return read_model_config(o).configured;
    } catch (const std::exception&) {
        return true;
    }
}

}  // namespace

std::string untrusted_kernels(const optimizer_options& o) {
    if (o.daemon_job) return "this daemon job's kernels, which whoever submitted it wrote";
    if (proposes_with_model(o)) return "the model's kernels, which nobody reviewed";
    if (o.proposer == "files") return "the --candidates folder's kernels, which nobody reviewed";
    return "";
}

std::string unconfined_refusal(const confinement& harness, const optimizer_options& o) {
    const std::string untrusted = untrusted_kernels(o);
    if (harness.confined() || untrusted.empty() || o.allow_unconfined) return "";
    return "the harness runs unconfined (" + harness.reason + "): " + untrusted +
           ", could read any file " + (o.daemon_job ? "the daemon's user" : "you") + " can; " +
           (o.daemon_job ? "the daemon runs jobs unconfined only when serve is given "
                           "--allow-unconfined"
                         : "pass --allow-unconfined to run them anyway");
}

std::string unconfined_warning(const confinement& harness, const optimizer_options& o) {
    if (harness.confined()) return "";
    const std::string untrusted = untrusted_kernels(o);
    return "the harness runs unconfined (" + harness.reason + "): " +
           (untrusted.empty()
                ? "your own kernels only, but an #include in one can read any "
                  "file you can"
                : "--allow-unconfined lets " + untrusted + ", run there and read any file you can");
}

std::string unconfined_fix(const optimizer_options& o) {
    return std::string(
               "run where Linux offers Landlock (5.13 or newer, in the LSM list, not "
               "blocked by a container's seccomp profile), or ") +
           (o.daemon_job ? "start serve with --allow-unconfined" : "pass --allow-unconfined");
}

}  // namespace cuopt
