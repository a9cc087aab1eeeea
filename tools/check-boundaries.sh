#!/bin/bash
# The wings' boundaries, checked: no include crosses between orchestrator/service/ (the daemon)
# and the other orchestrator/ folders, either way, nor between the harness and the optimizer;
# inside the optimizer every include points down its layers (docs/DESIGN.md), never up or
# sideways; Boost.Process is used in one file only (common/child_process.cpp, the child-process
# owner). Prints each crossing; exit 1 if any.
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
    echo "the harness reaches into the optimizer: $hit"; status=1
done < <(grep -rn '#include "orchestrator/' harness --include=*.cpp --include=*.hpp)
while IFS= read -r hit; do
    echo "the optimizer reaches into the harness: $hit"; status=1
done < <(grep -rn '#include "harness/' orchestrator common --include=*.cpp --include=*.hpp)
while IFS= read -r hit; do
    echo "Boost.Process outside common/child_process.cpp: $hit"; status=1
done < <(grep -rln 'boost/process' orchestrator common harness --include=*.cpp --include=*.hpp |
             grep -v '^common/child_process.cpp$')

# The optimizer's layers, lowest first (folders on one line share a layer and do not include
# each other). A file includes its own folder and the layers below it.
layers=(
    "common"
    "orchestrator/contract orchestrator/model"
    "orchestrator/evaluation"
    "orchestrator/proposers"
    "orchestrator/search"
    "orchestrator/evidence"
    "orchestrator/artifacts"
    "orchestrator/gate"
    "orchestrator/commands"
    "orchestrator/main.cpp"
)
declare -A rank
for i in "${!layers[@]}"; do
    for folder in ${layers[i]}; do rank[$folder]=$i; done
done
# The layer a path belongs to, in REPLY: common, orchestrator/FOLDER or orchestrator/main.cpp.
layer_of() {
    case $1 in
        common/*) REPLY=common ;;
        orchestrator/*/*) REPLY=${1#orchestrator/}; REPLY=orchestrator/${REPLY%%/*} ;;
        *) REPLY=$1 ;;
    esac
}
while IFS=: read -r file line text; do
    layer_of "$file"; from=$REPLY
    target=${text#*\"}; layer_of "${target%%\"*}"; to=$REPLY
    [[ $from == "$to" || -z ${rank[$from]} || -z ${rank[$to]} ]] && continue
    if ((rank[$to] > rank[$from])); then
        echo "$from reaches up into $to: $file:$line:$text"; status=1
    elif ((rank[$to] == rank[$from])); then
        echo "$from reaches beside it into $to: $file:$line:$text"; status=1
    fi
done < <(grep -rn '#include "\(common\|orchestrator\)/' common orchestrator \
             --include=*.cpp --include=*.hpp)
exit $status
