#pragma once
/// The winner standing alone, so it can be used without the run folder's history:
/// best.cu (a comment block saying how to compile and launch it, the defines the harness
/// passed as #define lines, then the source), best.json with the same as data, and one
/// self-contained replay request per case (best-case-N.json). summary.json's "best"
/// carries the same winner fields. Serialisation only: the search decides, this writes.

#include <rapidjson/document.h>

#include <filesystem>
#include <string>

#include "orchestrator/search/search_loop.hpp"

namespace cuopt {

/// Writes best.cu, best.json and best-case-N.json (N = case index) for the best attempt.
void write_best(const std::filesystem::path& run, const search_outcome& outcome, const manifest& m,
                const attempt_evaluator& evaluator);

/// best.cu: a comment block (run, iteration, attempt, speedup, entry, compile options, the
/// launch per case as numbers and expressions), then the defines the harness passed as
/// -DNAME=VALUE (and the -D/-U compile options, in NVRTC's order) as #define/#undef lines,
/// then the winning source: the same kernel with or without those options. Needs a best.
std::string best_source_text(const search_outcome& outcome, const manifest& m,
                             const std::filesystem::path& run);
/// best.json (schemas/best.schema.json): the winner as data. Needs a best.
std::string best_json(const search_outcome& outcome, const manifest& m,
                      const std::filesystem::path& run);

/// The winner as data, into `v`: entry, defines, compile options, tunables, the default
/// launch expressions and per case the launch it ran with (best.json and summary.json).
void add_winner_fields(rapidjson::Value& v, const candidate& c, const manifest& m,
                       rapidjson::Document::AllocatorType& a);

/// The path made absolute and normal, as the artifacts name folders.
std::string absolute_path(const std::filesystem::path& p);

}  // namespace cuopt
