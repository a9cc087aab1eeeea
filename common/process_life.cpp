#include "common/process_life.hpp"

#include <sys/prctl.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

namespace cuopt {

void die_with_parent_if_asked() {
    const char* v = std::getenv("CUOPT_DIE_WITH_PARENT");
    if (v && std::strcmp(v, "1") == 0) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

}  // namespace cuopt
