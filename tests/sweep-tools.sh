#!/bin/bash
# tests/sweep-tools.sh parallel|slurm: a sharded sweep through tools/sweep-parallel (GNU
# parallel) or tools/sweep-slurm (a one-machine Slurm started by tools/slurm-local) gives the
# same file, byte for byte, as one `ppsim sweep` run, also when the first run of shard 2 is
# killed with SIGKILL part-way (the tool runs it again, resuming its part). Exit 77 (skipped)
# when the tool is not there or Slurm cannot start here, with the reason on stderr.
set -uo pipefail
what=$1
src=${PPSIM_TEST_SRCDIR:?}
export PPSIM=${PPSIM_EXE:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/sweep.yaml" <<YAML
scenario: $src/tests/data/scenarios/ok/explicit-1f1b.yaml
axes:
  training.pp: [2, 4]
  training.microbatches: {from: 4, to: 16, times: 2}
  schedule: [1f1b, zb-h1, {name: interleaved, group_size: 4}]
set: {training.chunks: 2}
constraints: ["m % pp == 0"]
YAML
"$PPSIM" sweep "$tmp/sweep.yaml" -o "$tmp/one.csv" -q >/dev/null || exit 1
# The tools run this wrapper: the first run of shard 2/N is killed with SIGKILL after a random
# 0-60 ms (a lost node, a preemption), mid-write or before it wrote anything.
real=$PPSIM
cat > "$tmp/killer" <<WRAP
#!/bin/bash
case " \$* " in
*" 2/"*)
    if mkdir "$tmp/killed" 2>/dev/null; then
        "$real" "\$@" & pid=\$!
        sleep 0.0\$((RANDOM % 7))
        kill -9 \$pid; wait \$pid
        kill -9 \$\$
    fi ;;
esac
exec "$real" "\$@"
WRAP
chmod +x "$tmp/killer"
export PPSIM=$tmp/killer
case $what in
parallel)
    command -v parallel >/dev/null || { echo "skipped: GNU parallel is not installed" >&2; exit 77; }
    "$src/tools/sweep-parallel" -n 3 -j 2 "$tmp/sweep.yaml" "$tmp/par.csv" >/dev/null || exit 1
    [ -d "$tmp/killed" ] || { echo "shard 2 was never killed" >&2; exit 1; }
    cmp "$tmp/one.csv" "$tmp/par.csv" || exit 1
    # a shard that fails every time fails the run, naming it, and nothing is merged
    rm -rf "$tmp/killed"
    cat > "$tmp/always" <<WRAP
#!/bin/bash
case " \$* " in *" 2/"*) kill -9 \$\$ ;; esac
exec "$real" "\$@"
WRAP
    chmod +x "$tmp/always"
    if PPSIM=$tmp/always RETRIES=1 "$src/tools/sweep-parallel" -n 3 -j 2 "$tmp/sweep.yaml" \
        "$tmp/fail.csv" >/dev/null 2>"$tmp/fail.err"; then
        echo "a shard that always dies did not fail the run" >&2; exit 1
    fi
    grep -q "shard(s) 2 of 3 did not finish" "$tmp/fail.err" || { cat "$tmp/fail.err" >&2; exit 1; }
    [ ! -e "$tmp/fail.csv" ] || { echo "a partial merge was written" >&2; exit 1; }
    ;;
slurm)
    conf=$("$src/tools/slurm-local" start "$tmp/slurm") || {
        echo "skipped: a one-machine Slurm could not start here (tools/slurm-local)" >&2
        exit 77
    }
    SLURM_CONF=$conf "$src/tools/sweep-slurm" -n 2 "$tmp/sweep.yaml" "$tmp/slurm.csv" >/dev/null
    rc=$?
    "$src/tools/slurm-local" stop "$tmp/slurm"
    [ $rc -eq 0 ] || exit 1
    [ -d "$tmp/killed" ] || { echo "shard 2 was never killed" >&2; exit 1; }
    cmp "$tmp/one.csv" "$tmp/slurm.csv" || exit 1
    ;;
*) echo "usage: $0 parallel|slurm" >&2; exit 2 ;;
esac
echo "ok: $what shards merge to the single-run file ($(wc -l < "$tmp/one.csv") lines), shard 2 killed once and rerun"
