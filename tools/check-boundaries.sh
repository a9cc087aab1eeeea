#!/bin/bash
# The wings' boundaries, checked: no include crosses between orchestrator/service/ (the daemon)
# and the other orchestrator/ folders, either way; Boost.Process is used in one file only
# (common/child_process.cpp, the child-process owner). Prints each crossing; exit 1 if any.
cd "$(dirname "$0")/.." || exit 2
status=0
while IFS= read -r hit; do
    echo "service reaches into the optimizer: $hit"; status=1
done < <(grep -rn '#include "orchestrator/' orchestrator/service | grep -v '"orchestrator/service/')
while IFS= read -r hit; do
    echo "the optimizer reaches into the service: $hit"; status=1
done < <(grep -rn '#include "orchestrator/service/' orchestrator common harness \
             --include=*.cpp --include=*.hpp | grep -v '^orchestrator/service/\|^orchestrator/main.cpp:')
while IFS= read -r hit; do
    echo "Boost.Process outside common/child_process.cpp: $hit"; status=1
done < <(grep -rln 'boost/process' orchestrator common harness --include=*.cpp --include=*.hpp |
             grep -v '^common/child_process.cpp$')
exit $status
