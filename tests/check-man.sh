#!/bin/sh
# tests/check-man.sh: the man page (build/ppsim.1, made by tools/make-man) names every command
# `ppsim --help` lists, every option each command's --help prints, and every schedule and
# generator option `ppsim list schedules` prints. Fails naming what is missing.
#   tests/check-man.sh PPSIM MAN_PAGE
set -eu
ppsim=$1
man=$2
[ -s "$man" ] || { echo "check-man: no man page at '$man'" >&2; exit 1; }
# roff escapes '-' as '\-'; undo it to search the text
text=$(sed 's/\\-/-/g; s/\\e/\\/g' "$man")
missing=0
need() { # $1 = what must appear, $2 = where it comes from
    if ! printf '%s\n' "$text" | grep -qF -- "$1"; then
        echo "check-man: '$1' ($2) is not in $man" >&2
        missing=$((missing + 1))
    fi
}
commands=$(LC_ALL=C.UTF-8 "$ppsim" --help | sed -n '/^commands:/,/^$/p' | awk 'NF>1 {print $1}')
[ -n "$commands" ] || { echo "check-man: 'ppsim --help' lists no commands" >&2; exit 1; }
n_opts=0
for c in $commands; do
    need "$c" "ppsim --help"
    [ "$c" = help ] || [ "$c" = version ] && continue
    need "PPSIM $(echo "$c" | tr a-z A-Z)" "a section for ppsim $c"
    for opt in $(LC_ALL=C.UTF-8 "$ppsim" "$c" --help | grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z-]*' |
        grep -oE -- '--[a-z][a-z-]*'); do
        need "$opt" "ppsim $c --help"
        n_opts=$((n_opts + 1))
    done
done
n_sched=0
for s in $("$ppsim" list schedules | grep -oE '^[a-z0-9][a-z0-9-]*'); do
    need "$s" "ppsim list schedules"
    n_sched=$((n_sched + 1))
done
for o in $("$ppsim" list schedules | grep -oE '^ +option [a-z_]+' | awk '{print $2}' | sort -u); do
    need "option $o" "ppsim list schedules"
done
[ $n_opts -gt 20 ] && [ $n_sched -gt 10 ] ||
    { echo "check-man: found only $n_opts options and $n_sched schedules to look for" >&2; exit 1; }
[ $missing -eq 0 ] || { echo "check-man: $missing missing" >&2; exit 1; }
echo "check-man: ok ($n_opts options, $n_sched schedules)"
