#!/bin/bash
# The documentation, checked: README.md stays a front door (at most 250 lines), shows the
# command .ci/run runs, and every relative link in README.md and docs/*.md ([text](path),
# ![image](path), outside fenced code) names a file or folder that exists. Prints each
# problem; exit 1 if any.
cd "$(dirname "$0")/.." || exit 2
status=0
max_lines=250
lines=$(wc -l <README.md)
if ((lines > max_lines)); then
    echo "README.md has $lines lines; the front door holds at most $max_lines (move detail into docs/)"
    status=1
fi
# CI runs exactly the README's test command: each command .ci/run runs must begin a line of
# README.md (its code block), alone or followed by a space and a comment.
while IFS= read -r command; do
    if ! awk -v c="$command" 'index($0, c) == 1 && (length($0) == length(c) ||
                              substr($0, length(c) + 1, 1) == " ") { found = 1 }
                              END { exit !found }' README.md; then
        echo "README.md does not show the command .ci/run runs: $command"
        status=1
    fi
done < <(grep -v '^#\|^set \|^cd \|^[[:space:]]*$' .ci/run)
for page in README.md docs/*.md; do
    dir=$(dirname "$page")
    # Links outside ``` fences, one per line as "LINE:TARGET".
    while IFS=: read -r line target; do
        case $target in
        http://* | https://* | mailto:* | '#'*) continue ;;
        esac
        path=${target%%#*}
        path=${path%% *}
        [[ -z $path || -e $dir/$path ]] && continue
        missing=$dir/$path
        echo "$page:$line: link to $target, but ${missing#./} does not exist"
        status=1
    done < <(awk '/^[ \t]*```/ { fenced = !fenced; next }
                  !fenced {
                      text = $0
                      while (match(text, /\]\([^)]+\)/)) {
                          print FNR ":" substr(text, RSTART + 2, RLENGTH - 3)
                          text = substr(text, RSTART + RLENGTH)
                      }
                  }' "$page")
done
exit $status
