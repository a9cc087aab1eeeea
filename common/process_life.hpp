#pragma once
/// A process started by cuda-optimizer (directly, or through ncu) dies with the process
/// that started it: the optimizer sets CUOPT_DIE_WITH_PARENT=1 in its children's
/// environment, and a harness that sees it asks the kernel for SIGKILL when its parent
/// goes. A SIGKILLed run then leaves nothing behind that writes into its folders.

namespace cuopt {

/// PR_SET_PDEATHSIG(SIGKILL) when CUOPT_DIE_WITH_PARENT=1; a no-op otherwise (a harness a
/// person starts by hand outlives its shell as any program does).
void die_with_parent_if_asked();

}  // namespace cuopt
