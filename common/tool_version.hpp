#pragma once
/// The version and commit this build was made from, compiled in once (CMake defines
/// CUOPT_VERSION and CUOPT_GIT_COMMIT for common/tool_version.cpp only).

namespace cuopt {

const char* tool_version();  // e.g. "0.1.0"
const char* tool_commit();   // short git hash, or "unknown"

}  // namespace cuopt
