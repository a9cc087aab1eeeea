#include "common/tool_version.hpp"

#ifndef CUOPT_VERSION
#define CUOPT_VERSION "0.0.0"
#endif
#ifndef CUOPT_GIT_COMMIT
#define CUOPT_GIT_COMMIT "unknown"
#endif

namespace cuopt {

const char* tool_version() {
    return CUOPT_VERSION;
}
const char* tool_commit() {
    return CUOPT_GIT_COMMIT;
}

}  // namespace cuopt
