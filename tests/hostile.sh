#!/bin/bash
# tests/hostile.sh: hostile inputs and faults against the ppsim executable, one block per
# class of issue 31 (see tests/README.md):
#   1 size     inputs of any size fail fast, naming the file and the limit
#   2 quote    messages quote input capped at ~100 characters, control bytes escaped
#   3 edges    verdicts at the edges (a 0-byte GPU, NUL in a CSV, empty grids, exit messages)
#   4 words    messages name the key, the expected type and what was given
#   5 kill     a sweep SIGKILLed at random moments and resumed ends byte-identical
#   6 faults   two sweeps on one file, a full disk, a corrupt or foreign optpipe cache
#              entry, a CBC killed mid-solve
# Each check prints "ok: ..." or "FAIL: ..." and the script exits 1 if any failed.
# Runs with PPSIM_EXE (the binary) and PPSIM_TEST_SRCDIR (the checkout), as meson sets them.
set -uo pipefail
P=${PPSIM_EXE:?}
src=${PPSIM_TEST_SRCDIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
failed=0
ok() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    failed=1
}
# run CMD...: runs ppsim with a 20 s guard; sets rc, out (stdout) and err (stderr)
run() {
    timeout 20 "$P" "$@" >out.txt 2>err.txt
    rc=$?
    out=$(cat out.txt)
    err=$(cat err.txt)
}
# expect RC TEXT WHAT: the last run exited RC and its stderr has TEXT (fixed string)
expect() {
    if [ "$rc" -eq "$1" ] && grep -qF -- "$2" err.txt; then
        ok "$3"
    else
        fail "$3: exit $rc, stderr: $(head -c 400 err.txt)"
    fi
}
# short WHAT: the last stderr is small (no echo of megabytes) and holds no raw control byte
# other than newline
short() {
    local n
    n=$(wc -c <err.txt)
    if [ "$n" -gt 1000 ]; then
        fail "$1: $n bytes on stderr"
    elif LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' err.txt; then
        fail "$1: a raw control byte on stderr"
    else
        ok "$1 ($n bytes on stderr)"
    fi
}

explicit() { # explicit.yaml with schedule $1
    printf 'training: {pp: 2, microbatches: 4}\nschedule: %s\ncosts: {forward: 1, backward_input: 1, backward_weight: 1}\n' "$1" >explicit.yaml
}
explicit 1f1b

# ---- 1 size -----------------------------------------------------------------------------
start=$(date +%s%N)
run check /dev/zero
expect 1 "/dev/zero:1:1: a NUL byte" "scenario from /dev/zero fails at its first byte"
run sweep /dev/zero
expect 1 "a NUL byte (a sweep file is text" "sweep file from /dev/zero"
run run explicit.yaml --no-artifacts --with /dev/zero
expect 1 "a NUL byte (a scenario fragment is text" "--with fragment from /dev/zero"
run run explicit.yaml --no-artifacts --set 'schedule={name: custom, file: /dev/zero}'
expect 1 "a NUL byte (a schedule CSV is text" "schedule CSV from /dev/zero"
run merge /dev/zero
expect 1 "a NUL byte" "sweep part from /dev/zero"
elapsed=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed" -lt 10000 ] && ok "five /dev/zero inputs refused in $elapsed ms" ||
    fail "/dev/zero inputs took $elapsed ms"
# endless text without NUL: the limit stops it while reading
mkfifo fifo
(yes 'name: x' >fifo 2>/dev/null &)
run check fifo
expect 1 "more than 64 MiB, the limit for a scenario file" "endless scenario from a FIFO"
truncate -s 65M big.yaml # sparse: refused by its size before a byte is read
run check big.yaml
expect 1 "'big.yaml': more than 64 MiB, the limit for a scenario file" "65 MiB scenario file"
truncate -s 1025M big.csv
run run explicit.yaml --no-artifacts --set 'schedule={name: custom, file: big.csv}'
expect 1 "more than the 1024 MiB a schedule file may have" "1 GiB + 1 MiB schedule CSV"
printf 'scenario: big.yaml\naxes: {training.pp: [2]}\n' >big-sweep.yaml
run sweep big-sweep.yaml
expect 1 "more than 64 MiB, the limit for a scenario file" "a sweep's 65 MiB base scenario"
run run explicit.yaml --no-artifacts --set "name=$(head -c 300 /dev/zero | tr '\0' x)" \
    --set "$(head -c 300 /dev/zero | tr '\0' k)=1"
expect 1 "a key path of more than 256 characters" "--set key path of 300 characters"

# ---- 2 quote ----------------------------------------------------------------------------
huge=$(head -c 200000 /dev/zero | tr '\0' x)
printf 'training: {pp: 2, microbatches: 4}\nhardware: {preset: %s}\ncosts: {forward: 1, backward_input: 1, backward_weight: 1}\n' "$huge" >bigpreset.yaml
run check bigpreset.yaml
expect 1 "unknown hardware preset 'xxxxxxxx" "200 KB preset name"
short "200 KB preset name"
grep -qF "…" err.txt && ok "the quoted preset ends in …" || fail "no … in $(head -c 300 err.txt)"
explicit "$huge"
run check explicit.yaml
expect 1 "unknown schedule" "200 KB schedule name"
short "200 KB schedule name"
explicit "{name: custom, file: s.csv}"
printf '0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1X1\033[31mRED%s\n' "$huge" >s.csv
run run explicit.yaml --no-artifacts
expect 1 "in '1X1\\x1B[31mRED" "ESC in a CSV cell shown as \\x1B"
short "ESC and 200 KB in a CSV cell"
printf '0F0,0F1,0B0,0B1\r1F0,1B0,1F1,1B1\r' >s.csv
run run explicit.yaml --no-artifacts
expect 1 "'0B1\\r1F0' (a CR inside a line: lines end in LF or CRLF)" "CR-only CSV lines"
short "CR-only CSV lines"
explicit 1f1b
run run explicit.yaml --no-artifacts --set "name=$(printf 'a\xff\x1b[2J')"
expect 2 "--set: the value 'name=a\\xFF\\x1B[2J' is not UTF-8 text" \
    "non-UTF-8 --set value names the flag, bytes escaped"
run run explicit.yaml --no-artifacts --set="name=$(printf 'a\xff')"
expect 2 "--set: the value 'name=a\\xFF' is not UTF-8 text" "non-UTF-8 --set=value names the flag"
run run explicit.yaml --no-artifacts --format "$(head -c 5000 /dev/zero | tr '\0' f)"
expect 2 "got 'ffff" "5000-byte --format value"
short "5000-byte --format value"
run "$(printf 'bad\033[2Jcommand')"
expect 2 "unknown command 'bad\\x1B[2Jcommand'" "ESC in an unknown command"

# ---- 3 edges ----------------------------------------------------------------------------
scen=$src/scenarios/a100_8gpu.yaml
run run "$scen" --schedule 1f1b --no-artifacts --format json --set hardware.gpu.memory=0B
n_oom=$(grep -o '"oom":true' out.txt | wc -l)
[ "$rc" -eq 0 ] && [ "$n_oom" -eq 8 ] && ok "a 0-byte GPU: all 8 devices out of memory" ||
    fail "a 0-byte GPU: exit $rc, $n_oom devices oom"
grep -qF "'hardware.gpu.memory' is 0 bytes: every device is out of memory" err.txt &&
    ok "a 0-byte GPU is a warning" || fail "no 0-byte warning: $err"
run run "$scen" --schedule 1f1b --no-artifacts --format json --set hardware.gpu.memory=1GiB
n_oom=$(grep -o '"oom":true' out.txt | wc -l)
[ "$n_oom" -eq 8 ] && ok "a GPU smaller than the static state: all out of memory" ||
    fail "1 GiB GPU: $n_oom devices oom"
run run "$scen" --schedule 1f1b --no-artifacts --format json --set memory.limit=0B
n_oom=$(grep -o '"oom":true' out.txt | wc -l)
[ "$n_oom" -eq 0 ] && ok "memory.limit: 0 still means no limit" || fail "memory.limit 0: $n_oom oom"
explicit "{name: custom, file: s.csv}"
printf '0F0,0F1,0B0,0B1\n1F0,1B0\0,1F1,1B1\n' >s.csv
run run explicit.yaml --no-artifacts
expect 1 "s.csv:2:8: a NUL byte (a schedule CSV is text" "NUL byte in a schedule CSV"
for g in p= m= v= costs=; do
    run validate -s 1f1b --grid "$g"
    expect 2 "--grid '$g': an empty list" "validate --grid $g"
done
run validate -s 1f1b --grid p=3000000000
expect 2 "expected whole numbers from 1 to 2^24" "validate --grid p=3000000000"
run validate -s 1f1b --grid p=64 --grid m=100000
expect 2 "makes about 2.56e+07 ops, more than the 8.39e+06 one run replays" "validate huge grid"
run validate -s 1f1b --grid p=8 --grid m=16 --grid costs=10000s:1:1
expect 1 "1 of 1 rows failed" "validate: a failing run says so on stderr"

# ---- 4 words ----------------------------------------------------------------------------
printf 'training: {pp: 2, microbatches: 2}\nhardware: {preset: [a, b]}\ncosts: {forward: 1, backward_input: 1, backward_weight: 1}\n' >listpreset.yaml
run check listpreset.yaml
expect 1 "listpreset.yaml:2:20: 'hardware.preset' must be a preset name (a string), got a list" \
    "a list as a preset"
for s in zb zb-v v-half adaoffload; do
    explicit "{name: $s, memory_limit: inf}"
    run check explicit.yaml
    if [ "$rc" -eq 1 ] && grep -q "finite" err.txt && ! grep -q "too small" err.txt; then
        ok "$s memory_limit: inf is not finite (not 'too small')"
    else
        fail "$s memory_limit inf: $err"
    fi
    explicit "{name: $s, memory_limit: 1e300}"
    run check explicit.yaml
    [ "$rc" -eq 0 ] && ok "$s memory_limit: 1e300 is no cap" || fail "$s memory_limit 1e300: $err"
done
printf 'training: {pp: 2, microbatches: 4}\nschedule: 1f1b\nmemory: {limit: inf}\ncosts: {forward: 1, backward_input: 1, backward_weight: 1}\n' >inf.yaml
run check inf.yaml
expect 1 "'memory.limit' must be a number from 0 to 1e+12, got 'inf' (infinity is not a value here)" \
    "memory.limit: inf"
run run explicit.yaml --no-artifacts --set "training.pp=[1, 2]"
expect 1 "got a list" "a list where an integer is expected"

# ---- 5 kill -----------------------------------------------------------------------------
# 1,152 rows (96 KB: many stdio flushes to be cut at), about 1 s on 2 threads
cat >sweep.yaml <<YAML
scenario: $src/tests/data/scenarios/ok/explicit-1f1b.yaml
axes:
  training.pp: [2, 4, 8]
  training.microbatches: {from: 8, to: 1024, step: 8}
  schedule: [1f1b, gpipe, zb-h1]
YAML
"$P" sweep sweep.yaml -o ref.csv -q -j 2 >/dev/null || fail "reference sweep"
for trial in 1 2 3 4 5 6; do
    rm -f k.csv
    "$P" sweep sweep.yaml -o k.csv -q -j 2 >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    before=$(wc -c <k.csv 2>/dev/null || echo 0)
    "$P" sweep sweep.yaml -o k.csv -q -j 2 --resume >/dev/null 2>err.txt
    if cmp -s k.csv ref.csv; then
        ok "sweep SIGKILLed at $before bytes, resumed: byte-identical (trial $trial)"
    else
        fail "sweep SIGKILLed at $before bytes, resumed: differs (trial $trial) $(cat err.txt)"
    fi
done

# ---- 6 faults ---------------------------------------------------------------------------
# two sweeps on one output: while one holds the file's lock (flock(1) stands for it, so the
# check never races), another refuses and touches nothing
if command -v flock >/dev/null; then
    echo "someone else's rows" >held.csv
    flock -x held.csv sleep 3 &
    holder=$!
    sleep 0.3
    run sweep sweep.yaml -o held.csv -q -j 2
    expect 1 "held.csv is being written by another ppsim sweep" "a sweep on a locked output refuses"
    [ "$(cat held.csv)" = "someone else's rows" ] && ok "the locked output is untouched" ||
        fail "the locked output was changed"
    run sweep sweep.yaml -o held.csv -q -j 2 --resume
    expect 1 "is being written by another ppsim sweep" "--resume on a locked output refuses too"
    wait "$holder"
else
    ok "skipped: no flock(1) to hold a lock"
fi
# ... and two real sweeps started together: whichever order they end in, one refuses or
# finds the other done, and the file is one sweep's rows, never interleaved
"$P" sweep sweep.yaml -o two.csv -q -j 2 >/dev/null 2>first.err &
pid=$!
for _ in $(seq 100); do [ -e two.csv ] && break; sleep 0.01; done
run sweep sweep.yaml -o two.csv -q -j 2
wait "$pid"
first=$?
if [ "$rc" -eq 1 ] && grep -qF "two.csv is being written by another ppsim sweep" err.txt; then
    ok "the second of two concurrent sweeps refused"
elif [ "$rc" -eq 0 ]; then
    ok "the second sweep started after the first had ended (no overlap to refuse)"
else
    fail "second sweep: exit $rc, $err"
fi
[ "$first" -eq 0 ] && cmp -s two.csv ref.csv && ok "the output of two concurrent sweeps is whole" ||
    fail "two.csv differs (first exit $first)"
# a full disk (test hook): a clear error naming --resume; resuming completes the file
for limit in 100 2500 50000; do
    rm -f full.csv
    PPSIM_TEST_WRITE_FAIL_AFTER=$limit run sweep sweep.yaml -o full.csv -q -j 2
    expect 1 "writing full.csv: No space left on device (the rows written so far are kept: make room, then run the same command with --resume)" \
        "full disk after $limit bytes"
    run sweep sweep.yaml -o full.csv -q -j 2 --resume
    cmp -s full.csv ref.csv && ok "resumed after a full disk at $limit bytes: byte-identical" ||
        fail "resume after a full disk at $limit bytes differs"
done
# optpipe's cache: a corrupt entry and a foreign one are ignored with a warning
mkdir cache
explicit "{name: optpipe, cache_dir: $tmp/cache}"
run run explicit.yaml --no-artifacts --format csv
good=$out
[ "$rc" -eq 0 ] && [ "$(ls cache | wc -l)" -eq 2 ] && ok "optpipe stored a cache entry" ||
    fail "no cache entry: $err"
csv=$(ls cache/*.csv)
printf '0F0,0B0\n1F0,1B0\n' >"$csv" # a valid schedule of another shape: someone else's
run run explicit.yaml --no-artifacts --format csv
[ "$rc" -eq 0 ] && [ "$out" = "$good" ] && grep -qF "ignored: its checksum is not the one" err.txt &&
    ok "a foreign cache CSV is ignored with a warning, same result" || fail "foreign cache: $err"
run run explicit.yaml --no-artifacts --format csv # rewritten by the run above
printf '\x00\xff garbage' >"$csv"
run run explicit.yaml --no-artifacts --format csv
[ "$rc" -eq 0 ] && [ "$out" = "$good" ] && grep -qF "cached schedule ignored" err.txt &&
    ok "a corrupt cache CSV is ignored with a warning, same result" || fail "corrupt cache: $err"
json=$(ls cache/*.json)
printf '{"version":2,"key":"another"}\n' >"$json"
run run explicit.yaml --no-artifacts --format csv
[ "$rc" -eq 0 ] && [ "$out" = "$good" ] && grep -qF "stale or corrupt metadata" err.txt &&
    ok "foreign cache metadata is ignored with a warning, same result" || fail "foreign meta: $err"
# CBC dies mid-solve (test hook: the solver process raises the signal after its LP bound)
explicit "{name: optpipe, cache_dir: none}"
for sig in 9 6; do # (ASan intercepts SIGSEGV in the child; SIGABRT is what a failed assert raises)
    PPSIM_TEST_CBC_SIGNAL=$sig run run explicit.yaml --no-artifacts --format json
    if [ "$rc" -eq 0 ] && grep -qF '"status":"crashed"' out.txt &&
        grep -qF "the MILP solver (CBC) died (killed by signal $sig" err.txt; then
        ok "CBC killed by signal $sig: the warm start is kept and the run says so"
    else
        fail "CBC signal $sig: exit $rc, $err"
    fi
done
# ... and killed from outside: a solve that runs for seconds, its process SIGKILLed
printf 'training: {pp: 3, microbatches: 8}\nschedule: {name: optpipe, time_limit: 15, cache_dir: none}\nmemory: {limit: 2}\ncosts: {forward: 1, backward_input: 1, backward_weight: 1, offload: 0.5}\n' >slow.yaml
# the children of a process, from /proc (no procps needed)
children() { cat /proc/"$1"/task/*/children 2>/dev/null; }
"$P" run slow.yaml --no-artifacts --format json >out.txt 2>err.txt &
pid=$!
child=""
for _ in $(seq 200); do
    child=$(children "$pid" | awk '{print $1}')
    [ -n "$child" ] && break
    sleep 0.02
done
if [ -z "$child" ]; then
    wait "$pid"
    ok "skipped: no solver process seen to kill (the solve ended first, or no /proc children)"
else
    sleep 0.2
    kill -9 "$child" 2>/dev/null
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 0 ] && grep -qF '"status":"crashed"' out.txt &&
        grep -qF "the MILP solver (CBC) died (killed by signal 9" err.txt; then
        ok "CBC SIGKILLed from outside mid-solve: the warm start is kept and the run says so"
    else
        fail "CBC killed from outside: exit $rc, $(head -c 300 err.txt)"
    fi
fi

exit $failed
