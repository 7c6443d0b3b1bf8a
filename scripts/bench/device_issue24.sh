#!/usr/bin/env bash
# The write-path work's many-core figures in one device run (about three minutes on 16 cores).
#
# "run": the switches of view/combine.py that shape many writers on many cores (the
# holder's extra rounds, SWARMLOG_COMBINE_STICKY; a poster's nap between tries,
# SWARMLOG_POST_NAP), each variant at 16 writers twice (lock_hold_probe; ISSUE24_VARIANTS
# replaces the list, its first entry the reference), then the steps of the best timed
# (--phases), then the issue's table for the reference and for the best, all in the same
# run. Session 9's runs chose the defaults on 8+ CPUs with it (docs/benchmarks.md).
#
# Here, once (the device machine reaches no package registry):
#     scripts/bench/device_issue24.sh wheels      # Python 3.12 manylinux wheels -> .whl/
# Then with the device tool:
#     run(command="bash scripts/bench/device_issue24.sh run", carry=[".whl"], timeout_s=540)
# Results: $OUT/issue24.txt (the printouts, each run's command and settings above it).
# "confirm" instead of "run": the issue's table for the code as committed, no switch set,
# beside the export of another commit (BASE=.base86: git archive 86a12eb swarmlog | tar
# -x -C .base86; carry it too), then lock_hold_probe at 1-16 writers.
# Locally (no install, a quick check that every step runs): SKIP_INSTALL=1 SECONDS_PER=0.5
set -euo pipefail
cd "$(dirname "$0")/../.."
DEPS="pydantic orjson watchfiles typer rich numpy threadpoolctl"

case "${1:-run}" in
wheels)
    mkdir -p .git/info
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
    python3 -m pip download -q --only-binary=:all: --implementation cp --python-version 3.12 \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 -d .whl $DEPS
    ls .whl
    ;;
run | confirm)
    PY=python3
    if [ -z "${SKIP_INSTALL:-}" ]; then
        if python3 -m venv /tmp/swarmlog-venv &&
            /tmp/swarmlog-venv/bin/pip install -q --no-index --find-links .whl $DEPS; then
            PY=/tmp/swarmlog-venv/bin/python
        else # (no venv module there: the wheels into a folder on the path)
            python3 -m pip install -q --no-index --find-links .whl --target /tmp/swarmlog-deps $DEPS
            export PYTHONPATH=/tmp/swarmlog-deps
        fi
    fi
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
    OUT="${OUT:-/tmp/issue24-out}"
    mkdir -p "$OUT"
    S="${SECONDS_PER:-2}"
    log="$OUT/issue24.txt"
    if [ "$1" = confirm ]; then # the defaults as committed (no switch set), beside BASE
        base="${BASE:-.base}"   # (an export of the commit to compare: git archive REV swarmlog)
        {
            echo "# $(date -u) on $(nproc) CPUs, $($PY -V); baseline $base"
            $PY scripts/bench/concurrency_bench.py --writers 1,2,4,8,16,64 --durability process \
                --seconds "$S" --no-write --baseline "$base" 2>&1 | tail -7
            $PY scripts/bench/concurrency_bench.py --writers 1,16,64 --durability fsync \
                --seconds "$S" --no-write --baseline "$base" 2>&1 | tail -4
            $PY scripts/bench/lock_hold_probe.py --writers 1,2,4,6,8,16 --seconds 1.5 2>&1
            echo "# $(date -u) done"
        } 2>&1 | tee "$log"
        exit 0
    fi
    # Each variant: the switches of view/combine.py it sets; ISSUE24_VARIANTS (";"
    # between variants) replaces the list. "before" is the code as it was before these
    # switches (a posted writer yields, a holder takes one more look).
    IFS=";" read -r -a VARIANTS <<<"${ISSUE24_VARIANTS:-before:SWARMLOG_POST_NAP=0 SWARMLOG_COMBINE_STICKY=0;nap20+sticky16:SWARMLOG_POST_NAP=20 SWARMLOG_COMBINE_STICKY=16;nap20+sticky64:SWARMLOG_POST_NAP=20 SWARMLOG_COMBINE_STICKY=64;nap50+sticky64:SWARMLOG_POST_NAP=50 SWARMLOG_COMBINE_STICKY=64;nap100+sticky64:SWARMLOG_POST_NAP=100 SWARMLOG_COMBINE_STICKY=64;nap200+sticky64:SWARMLOG_POST_NAP=200 SWARMLOG_COMBINE_STICKY=64;yield+sticky64:SWARMLOG_POST_NAP=0 SWARMLOG_COMBINE_STICKY=64}"
    BENCH_W="${ISSUE24_BENCH_WRITERS:-1,4,16,64}"
    probe() { # name, env, extra args: one lock_hold_probe run, its lines tagged
        local name="$1" sets="$2"
        shift 2
        echo "## lock_hold_probe $name ($sets) $*"
        env $sets $PY scripts/bench/lock_hold_probe.py --seconds "$S" "$@" 2>&1 |
            grep -v '^tree' | sed "s/^/[$name] /"
    }
    {
        echo "# $(date -u) on $(nproc) CPUs, $($PY -V), kernel $(uname -r)"
        lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\))' || true
        echo "## combine_cost_probe (one process: the holder's work per record, warm)"
        $PY scripts/bench/combine_cost_probe.py --posters 0,7,15 --records 20000 2>&1 | tail -3
        for round in 1 2; do
            probe before "${VARIANTS[0]#*:}" --writers 1
            for v in "${VARIANTS[@]}"; do
                probe "${v%%:*}" "${v#*:}" --writers 16
            done
        done
    } 2>&1 | tee "$log"
    # The variant with the most 16-writer appends/s over both rounds.
    best=$(grep -E '^\[[^]]+\] 16 writers:' "$log" |
        sed -E 's/^\[([^]]+)\] 16 writers: ([0-9,]+) appends.*/\1 \2/' | tr -d , |
        awk '{s[$1]+=$2} END {for (k in s) print s[k], k}' | sort -n | tail -1 | cut -d' ' -f2)
    sets=""
    for v in "${VARIANTS[@]}"; do [ "${v%%:*}" = "$best" ] && sets="${v#*:}"; done
    {
        echo "# best: $best ($sets)"
        probe "$best" "$sets" --writers 16 --phases
        first="${VARIANTS[0]}"
        if [ "$best" != "${first%%:*}" ]; then
            echo "## concurrency_bench ${first%%:*} (${first#*:})"
            env ${first#*:} $PY scripts/bench/concurrency_bench.py --writers "$BENCH_W" \
                --durability process --seconds "$S" --no-write 2>&1 | tail -6
        fi
        echo "## concurrency_bench $best ($sets)"
        env $sets $PY scripts/bench/concurrency_bench.py --writers "$BENCH_W" \
            --durability process,fsync --seconds "$S" --no-write 2>&1 | tail -10
        echo "# $(date -u) done"
    } 2>&1 | tee -a "$log"
    ;;
*)
    echo "usage: $0 wheels|run|confirm" >&2
    exit 1
    ;;
esac
