#pragma once
/// How a run's kernels were confined, said the same way in run.json, the report and the
/// console: the harness's own confinement (what the preflight's probe answered), whether
/// --allow-unconfined was given, and how many attempts ran under Landlock or unconfined (as
/// each attempt's response said). An unconfined kernel could read any file the user can, so a
/// run where one ran, or where --allow-unconfined was given, carries a warning wherever it is
/// shown.

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <vector>

#include "common/landlock.hpp"
#include "orchestrator/evaluation/attempt_evaluator.hpp"

namespace cuopt {

struct confinement_record {
    confinement harness;            // the harness's, from the preflight's probe
    bool allow_unconfined = false;  // --allow-unconfined was given
    int landlock_attempts = 0;      // attempts whose response said mode landlock
    int unconfined_attempts = 0;    // attempts whose response said mode none
};

/// `r` with the attempts of `history` counted by the mode their responses said (an attempt
/// that got no response is in neither count).
confinement_record count_confinement(confinement_record r,
                                     const std::vector<attempt_result>& history);

/// run.json's confinement block: {mode, abi (landlock) or reason (none), allow_unconfined,
/// attempts: {landlock, none}}.
rapidjson::Value confinement_record_json(const confinement_record& r,
                                         rapidjson::Document::AllocatorType& a);

/// The block as run.json holds it; nullopt where the run predates it.
std::optional<confinement_record> read_confinement_record(const rapidjson::Value& run_json);

/// One line: how the attempts were confined ("all 9 attempts ran confined by Landlock (ABI
/// 7)", "3 attempts ran unconfined (REASON), 6 under Landlock").
std::string confinement_line(const confinement_record& r);

/// The warning a person must see, or "": attempts that ran unconfined, or --allow-unconfined.
std::string confinement_warning(const confinement_record& r);

}  // namespace cuopt
