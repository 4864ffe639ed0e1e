#!/bin/sh
# tests/check-includes-lint.sh: tools/check-includes fails on each kind of violation its rules
# name, shown on a small fake source tree (one violation per case), and passes the clean one.
#   tests/check-includes-lint.sh SOURCE_ROOT
set -eu
lint="$1/tools/check-includes"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tree() { # a clean tree: one file per folder the cases use
    rm -rf "$tmp/src"
    mkdir -p "$tmp/src/util" "$tmp/src/sim" "$tmp/src/report" "$tmp/src/plan" \
        "$tmp/src/schedule" "$tmp/src/sched/zb" "$tmp/src/sched/vshape" "$tmp/src/cli"
    echo '#include "util/fmt.h"' >"$tmp/src/sim/sim.c"
    : >"$tmp/src/sim/sim.h"
    : >"$tmp/src/sim/sim-internal.h"
    echo '#include "sim/run-result.h"' >"$tmp/src/report/report.c"
    echo '#include "sim/sim.h"' >"$tmp/src/plan/plan.c"
    : >"$tmp/src/schedule/index-private.h"
    echo '#include "sched/zb-auto.h"' >"$tmp/src/sched/vshape/v.c"
    echo '#include "cli/cli.h"' >"$tmp/src/main.c"
}
expect() { # $1 = case, $2 = file to write, $3 = its line, $4 = text the error must contain
    tree
    mkdir -p "$(dirname "$tmp/src/$2")"
    printf '%s\n' "$3" >"$tmp/src/$2"
    if out=$("$lint" "$tmp/src" 2>&1); then
        echo "check-includes-lint: $1: passed, expected a violation" >&2
        fail=1
    elif ! printf '%s\n' "$out" | grep -qF "$4"; then
        echo "check-includes-lint: $1: wrong message: $out" >&2
        fail=1
    fi
}
tree
"$lint" "$tmp/src" >/dev/null || { echo "check-includes-lint: the clean tree fails" >&2; exit 1; }
expect "folder rule" util/units.c '#include "sim/sim.h"' 'util/ may not include "sim/sim.h"'
expect "top level" sim-extra.c '' 'src/ holds only main.c'
expect "main.c" main.c '#include "sim/sim.h"' 'main.c may include cli/ and util/ only'
expect "sim interface" plan/plan.c '#include "sim/sim-internal.h"' 'is private to sim/'
expect "report reads results" report/report.c '#include "sim/sim.h"' 'may include sim/run-result.h only'
expect "private header" sim/sim.c '#include "schedule/index-private.h"' 'is private to schedule/'
expect "generator costs" sched/zb/z.c '#include "cost/cost-model.h"' 'cost/cost-estimates.h only'
expect "families" sched/vshape/v.c '#include "sched/zb/zb-list.h"' "family vshape/ may not include family zb/"
expect "unknown folder" newfolder/x.c '' "has no layering rule"
[ $fail -eq 0 ] || exit 1
echo "check-includes-lint: ok (9 violations caught, the clean tree passes)"
