#pragma once
/// How a resume is refused: a run_failure with exit code resume_refused and one line,
/// "cannot resume RUN: why". Shared by the files that check a run folder before resuming it
/// (resume_run, resume_unchanged, resume_search_record).

#include <filesystem>
#include <string>

namespace cuopt {

[[noreturn]] void refuse_resume(const std::filesystem::path& run, const std::string& why);

}  // namespace cuopt
