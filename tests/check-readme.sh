#!/bin/sh
# tests/check-readme.sh: the README's quick-start output is what ppsim prints today. The
# command and its output are both read from README.md: the line after the marker
# "<!-- output of: ARGS -->" names the arguments, the fenced block after it is the expected
# stdout. Fails with the diff.
#   tests/check-readme.sh PPSIM SOURCE_ROOT
set -eu
ppsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$2"
marker=$(grep -c '^<!-- output of: ' README.md || true)
[ "$marker" -ge 1 ] || { echo "check-readme: no '<!-- output of: ...' marker in README.md" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
grep -n '^<!-- output of: ' README.md | while IFS=: read -r line rest; do
    args=$(printf '%s\n' "$rest" | sed 's/^<!-- output of: \(.*\) -->$/\1/')
    # the fenced block after the marker
    awk -v start="$line" 'NR > start && /^```/ { if (inb) exit; inb = 1; next } inb' README.md \
        >"$tmp/want"
    [ -s "$tmp/want" ] || { echo "check-readme: no output block after README.md:$line" >&2; exit 1; }
    # shellcheck disable=SC2086
    "$ppsim" $args >"$tmp/got" 2>"$tmp/err" || {
        echo "check-readme: 'ppsim $args' failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    if ! diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
        echo "check-readme: README.md:$line: 'ppsim $args' prints something else now:" >&2
        cat "$tmp/diff" >&2
        exit 1
    fi
    echo "check-readme: README.md:$line 'ppsim $args': $(wc -l <"$tmp/want") lines match"
done
