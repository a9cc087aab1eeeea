// Whether what goes in now is what went in when the run began: the sha256 of every file, the
// settings of record and the proposer; the first difference refuses the resume.
#include <algorithm>
#include <set>

#include "common/file_io.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"
#include "orchestrator/commands/resume_refusal.hpp"
#include "orchestrator/commands/resume_run.hpp"

namespace cuopt {

const std::set<std::string> k_settings_free_on_resume = {"isolation", "devices", "device",
                                                         "compile_threads"};

namespace {

// What a sha256 key of run.json stands for, with its file.
std::string hashed_thing(const std::string& key, const optimizer_options& o) {
    if (key == "manifest") return "the manifest " + o.input_cases;
    if (key == "initial")
        return o.torch_reference.empty() ? "the initial kernel " + o.initial_kernel
                                         : "the PyTorch source (eager, the baseline)";
    if (key == "initial_kernel") return "the initial kernel " + o.initial_kernel;
    if (key == "reference")
        return o.torch_reference.empty() ? "the reference kernel " + o.reference
                                         : "the PyTorch source (the oracle)";
    if (key == "torch_reference") return "the PyTorch mapping " + o.torch_reference;
    if (key == "harness") return "the harness " + o.harness;
    if (key == "holdout") return "the holdout cases " + o.holdout_cases;
    if (key.rfind("inputs/", 0) == 0) return "the input file " + key.substr(7);
    return key;
}

void check_settings(const recorded_run& then, const run_info& now) {
    for (const auto& [key, value] : now.settings) {
        if (k_settings_free_on_resume.count(key)) continue;
        const std::string text = setting_text(value);
        const auto it = then.settings.find(key);
        if (it == then.settings.end())
            refuse_resume(then.run,
                          "settings." + key + " is " + shortened(text) +
                              " now, and run.json has none (was its --config file edited?)");
        if (it->second != text)
            refuse_resume(then.run, "settings." + key + " was " + shortened(it->second) +
                                        " when the run began and is " + shortened(text) +
                                        " now (was its --config file edited?)");
    }
    for (const auto& [key, text] : then.settings)
        if (!k_settings_free_on_resume.count(key) && !now.settings.count(key))
            refuse_resume(then.run,
                          "settings." + key + " was " + shortened(text) +
                              " when the run began and is not given now (was its --config "
                              "file edited?)");
}

// A hash run.json has that `stage` does not compute yet (so its absence from `now` says nothing).
bool not_hashed_yet(const std::string& key, hash_stage stage) {
    if (stage == hash_stage::before_oracle) return key.rfind("inputs/", 0) == 0;
    return key == "holdout";
}

void check_hashes(const recorded_run& then, const run_info& now, const optimizer_options& o,
                  hash_stage stage) {
    // A run stopped before its oracle was made recorded no input yet: it makes them now.
    const bool inputs_recorded = std::any_of(then.sha256.begin(), then.sha256.end(), [](auto& h) {
        return h.first.rfind("inputs/", 0) == 0;
    });
    for (const auto& [key, hash] : now.sha256) {
        const auto it = then.sha256.find(key);
        if (it == then.sha256.end() && !inputs_recorded && key.rfind("inputs/", 0) == 0) continue;
        if (it == then.sha256.end())
            refuse_resume(then.run, hashed_thing(key, o) +
                                        " is part of the run now and was not when it "
                                        "began (run.json has no sha256." +
                                        key + "; was it added to the config?)");
        if (it->second != hash)
            refuse_resume(then.run, hashed_thing(key, o) +
                                        " changed since the run began (run.json sha256." + key +
                                        " " + it->second.substr(0, 12) + "..., now " +
                                        hash.substr(0, 12) + "...)");
    }
    for (const auto& [key, hash] : then.sha256)
        if (!now.sha256.count(key) && !not_hashed_yet(key, stage))
            refuse_resume(then.run,
                          "run.json sha256." + key + " (" + hash.substr(0, 12) +
                              "...) names a file the run had when it began and does not have "
                              "now (was " +
                              key + " removed from the config?)");
}

}  // namespace

void check_unchanged(const recorded_run& then, const run_info& now, const optimizer_options& o,
                     hash_stage stage) {
    check_hashes(then, now, o, stage);
    if (then.proposer != to_string(now.proposer))
        refuse_resume(then.run,
                      "its proposer was " + then.proposer + " and would be " +
                          to_string(now.proposer) +
                          " now (--proposer auto takes the model only where a key or base URL "
                          "is configured: configure it as when the run began)");
    check_settings(then, now);
}

std::map<std::string, std::string> hashes_before_oracle(const optimizer_options& o,
                                                        const manifest& m,
                                                        const candidate& initial) {
    std::map<std::string, std::string> h;
    h["manifest"] = sha256_file_hex(o.input_cases);
    h["initial"] = sha256_hex(initial.source);
    h["harness"] = sha256_file_hex(o.harness);
    if (!o.reference.empty()) h["reference"] = sha256_hex(read_text_file(o.reference));
    if (!o.holdout_cases.empty()) h["holdout"] = sha256_file_hex(o.holdout_cases);
    for (const manifest_case& mc : m.cases)
        for (const manifest_arg& a : m.args)
            if (a.has_input())
                if (const auto& init = m.init_for(mc, a); init.file)
                    h["inputs/" + m.input_link(*init.file)] = sha256_file_hex(*init.file);
    return h;
}

}  // namespace cuopt
