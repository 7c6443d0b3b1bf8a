#!/usr/bin/env bash
# Issue 24's many-core figures in one device run (about five minutes on 16 cores).
#
# The one unmet 16-core line of issue 24 is "throughput non-decreasing from 1 to 16
# writers" for page-cache appends (session 6: 53,589 -> 29,433/s). The lever ready to
# measure is the sticky combiner (SWARMLOG_COMBINE_STICKY, view/combine.py: a holder
# that combined keeps appending what is posted meanwhile, up to N more batches). This
# script measures it against the default in the same run, then the issue's table.
#
# Here, once (the device machine reaches no package registry):
#     scripts/bench/device_issue24.sh wheels      # Python 3.12 manylinux wheels -> .whl/
# Then with the device tool:
#     run(command="bash scripts/bench/device_issue24.sh run", carry=[".whl"], timeout_s=540)
# Results: $OUT/issue24.txt (the printouts, each run's command and settings above it).
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
run)
    PY=python3
    if [ -z "${SKIP_INSTALL:-}" ]; then
        python3 -m venv /tmp/swarmlog-venv
        /tmp/swarmlog-venv/bin/pip install -q --no-index --find-links .whl $DEPS
        PY=/tmp/swarmlog-venv/bin/python
    fi
    export PYTHONPATH="$PWD"
    OUT="${OUT:-/tmp/issue24-out}"
    mkdir -p "$OUT"
    S="${SECONDS_PER:-2}"
    log="$OUT/issue24.txt"
    {
        echo "# $(date -u) on $(nproc) CPUs, $($PY -V)"
        for round in 1 2; do
            for sticky in 0 4 16; do
                echo "## lock_hold_probe, SWARMLOG_COMBINE_STICKY=$sticky, round $round"
                SWARMLOG_COMBINE_STICKY=$sticky $PY scripts/bench/lock_hold_probe.py \
                    --writers 1,16,64 --seconds "$S" 2>&1 | tail -4
            done
        done
        for sticky in 0 4; do
            echo "## concurrency_bench, SWARMLOG_COMBINE_STICKY=$sticky"
            SWARMLOG_COMBINE_STICKY=$sticky $PY scripts/bench/concurrency_bench.py \
                --writers 1,16,64 --durability process,fsync --seconds "$S" --no-write 2>&1
        done
    } 2>&1 | tee "$log"
    ;;
*)
    echo "usage: $0 wheels|run" >&2
    exit 1
    ;;
esac
