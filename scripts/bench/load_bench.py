"""The synthesizer under a swarm's steady load, measured from the log itself.

    .venv/bin/python scripts/bench/load_bench.py [--rows 8x25@50000,8x50@100000]
        [--traffic mixed,one-topic] [--seconds 30] [--compare DIR] [--no-write]

For each row ``AxR@M``: a copy of a swarm pre-filled with ``M`` live facts (checkpointed
with its vectors, cached: ``scale_bench.build``), one ``swarmlog synth --follow`` process,
then ``A`` agent processes appending ``memory.shared`` at ``R``/s each (paced on a common
clock) for ``--seconds``. ``--traffic`` names what they share, each a row of its own:

* ``mixed``: notes of two topic words and four words of a 5,000-word vocabulary, in a
  swarm of the same (``scale_bench.content``): few candidates per memory;
* ``one-topic``: one task's statements, 6-12 words of one domain's ~60, in a swarm of the
  same (``_one_topic``), with rediscoveries of earlier facts in other words: most
  memories have many candidates over the contest floor.

Afterwards the synthesizer gets up to ``--drain`` s to decide
what is left, is stopped (SIGTERM), and the log is read:

* offered rate: memories appended per second of the agents' window;
* decided rate: decisions (``fact.created`` / ``corroborated`` / ``revived``) logged in
  that window per second;
* decision latency: the log's ts of a memory -> the ts of the decision citing it
  (p50 / p99 / max, over every memory of the run);
* backlog (memories logged and not yet decided) each second, and at the agents' end.

``--compare DIR`` runs another source tree's synthesizer (e.g. an export of main:
``git archive main | tar -x -C DIR``) on a fresh copy of the same swarm, same agents,
right after this tree's: the baseline of the same run. The agents are this tree's code in
both (they only append). The machine's load average is reported beside each run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import cached_bytecode, write_table

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
DECISIONS = ("fact.created", "fact.corroborated", "fact.revived")


# ---------------------------------------------------------------- children


def child_agent(
    path: str, idx: int, rate: float, seconds: float, start: float, traffic: str = "mixed"
) -> None:
    """Append ``memory.shared`` at ``rate``/s from ``start`` (wall clock) for ``seconds``.

    Mixed traffic: mostly new memories; every 10th repeats one of this agent's earlier
    ones (exact duplicate, other case) and every 10th rewords one (a word added):
    corroborations. One-topic traffic: ``_one_topic.memory``.
    """
    sys.path.insert(0, str(ROOT))
    import _one_topic

    from swarmlog import Event, open_log

    rng = random.Random(1000 + idx)
    log = open_log(path)
    prefilled = _prefilled(Path(path))
    sent: list[str] = []
    n = int(rate * seconds)
    while time.time() < start:
        time.sleep(min(0.05, max(0.0, start - time.time())))
    for k in range(n):
        due = start + k / rate
        wait = due - time.time()
        if wait > 0:
            time.sleep(wait)
        if traffic == "one-topic":
            text = _one_topic.memory(idx, k, rng, sent, prefilled)
        elif sent and k % 10 == 3:
            text = rng.choice(sent).upper()
        elif sent and k % 10 == 7:
            text = rng.choice(sent) + " again"
        else:
            w = [f"w{rng.randrange(5000)}" for _ in range(4)]
            text = f"agent {idx} note {k}: {' '.join(w)} case {idx * 1_000_003 + k * 7919}"
            sent.append(text)
        log.append(
            Event(
                agent=f"agent{idx}",
                type="memory.shared",
                body={"content": text, "category": "discovery", "importance": 0.5},
            )
        )
    log.close()


def _prefilled(path: Path) -> int:
    """How many facts a cached swarm was built with (its READY line; 0 when unknown)."""
    try:
        return int((path / "READY").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


# ---------------------------------------------------------------- one run


def _pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def _cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` and of the children it has reaped (its checkpoint
    writers), from /proc (0.0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _scan(path: Path, after: int) -> tuple[dict[int, float], dict[int, float], int]:
    """(memory seq -> ts, memory seq -> ts of its decision, checkpoints after ``after``)."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import open_log

    log = open_log(path)
    try:
        mem: dict[int, float] = {}
        dec: dict[int, float] = {}
        for batch in log.read_batches(after + 1):
            for d in batch:
                t = d["type"]
                if t == "memory.shared":
                    mem[d["seq"]] = d["ts"]
                elif t in DECISIONS:
                    ev = d["body"].get("evidence")
                    if isinstance(ev, int) and ev > after:
                        dec.setdefault(ev, d["ts"])
        ckpts = sum(1 for i in log.checkpoints.list() if i.seq > after)
    finally:
        log.close()
    return mem, dec, ckpts


def run_one(
    swarm: Path,
    agents: int,
    rate: float,
    seconds: float,
    drain: float,
    tree: Path | None,
    settings: list[str] | None = None,
    traffic: str = "mixed",
) -> dict[str, Any]:
    """One synthesizer (this tree's or ``tree``'s) under ``agents`` x ``rate``/s;
    ``settings`` (KEY=VALUE) are recorded in the copy's configuration first, by that
    tree's own ``swarmlog config set``."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import Event, open_log

    work = Path(tempfile.mkdtemp(prefix="swarmlog-load-")) / "s"
    shutil.copytree(swarm, work)
    src = tree or ROOT
    env = {**os.environ, "PYTHONPATH": str(src)}
    if settings:
        subprocess.run(
            [PY, "-m", "dashboards", "config", "set", "--root", str(work), *settings],
            cwd=src,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    load0 = os.getloadavg()[0]
    cmd = [PY, "-m", "dashboards", "synth", "--follow", "--root", str(work)]
    if os.environ.get("LOAD_BENCH_SYNTH"):  # a wrapper (profiling): same arguments
        cmd[1:3] = [os.environ["LOAD_BENCH_SYNTH"]]
    err_path = work.parent / "synth.err"
    with open(err_path, "w") as err:
        synth = subprocess.Popen(cmd, cwd=src, env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.time() + 120
    while "following" not in err_path.read_text():  # "following from seq N as ...": open
        if synth.poll() is not None or time.time() > deadline:
            synth.kill()
            raise SystemExit(f"load_bench: the synthesizer did not start: {err_path.read_text()}")
        time.sleep(0.1)
    # warm-up: one memory decided before the agents start (the worker's first pass maps
    # and fits what a steady worker has at hand; its startup is not what is measured)
    log = open_log(work)
    warm = log.append(
        Event(agent="warmup", type="memory.shared", body={"content": "warm-up note zz0"})
    )
    log.close()
    deadline = time.time() + 300
    while warm.seq not in _scan(work, warm.seq - 1)[1] and time.time() < deadline:
        time.sleep(0.2)
    seq0 = warm.seq
    cpu0 = _cpu(synth.pid)
    start = time.time() + 2.0  # every agent process imported and open by then
    each = [str(rate), str(seconds), str(start), traffic]
    kids = [
        subprocess.Popen(
            [PY, __file__, "--child-agent", str(work), str(i), *each],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for i in range(agents)
    ]
    for k in kids:
        k.wait()
    end = start + seconds
    expected = int(rate * seconds) * agents
    deadline = time.time() + drain
    while time.time() < deadline:
        mem, dec, _ = _scan(work, seq0)
        if len(mem) >= expected and len(dec) >= len(mem):
            break
        time.sleep(1.0)
    cpu = _cpu(synth.pid) - cpu0
    synth.send_signal(signal.SIGTERM)
    try:
        synth.wait(timeout=120)
    except subprocess.TimeoutExpired:
        synth.kill()
    load1 = os.getloadavg()[0]
    mem, dec, ckpts = _scan(work, seq0)
    if os.environ.get("LOAD_BENCH_STDERR"):  # keep the synthesizer's stderr (profiling)
        shutil.copy(err_path, os.environ["LOAD_BENCH_STDERR"])
    shutil.rmtree(work.parent, ignore_errors=True)
    lat = [(dec[s] - t) * 1000 for s, t in mem.items() if s in dec]
    in_window = sum(1 for t in dec.values() if start <= t <= end)
    offered = sum(1 for t in mem.values() if t <= end) / seconds
    backlog = []
    ts_mem = sorted(mem.values())
    ts_dec = sorted(dec.values())
    t = start
    while t <= end + drain:
        m = sum(1 for x in ts_mem if x <= t)
        d = sum(1 for x in ts_dec if x <= t)
        backlog.append(m - d)
        if t > end and m == d:
            break
        t += 1.0
    at_end = sum(1 for x in ts_mem if x <= end) - sum(1 for x in ts_dec if x <= end)
    return {
        "memories": len(mem),
        "undecided": len(mem) - len(lat),
        "offered_per_s": round(offered, 1),
        "decided_per_s": round(in_window / seconds, 1),
        "p50_ms": round(_pct(lat, 50), 1),
        "p99_ms": round(_pct(lat, 99), 1),
        "max_ms": round(max(lat, default=float("nan")), 1),
        "backlog_end": at_end,
        "backlog_max": max(backlog, default=0),
        "backlog": backlog,
        "checkpoints": ckpts,
        "synth_cpu_s": round(cpu, 1),
        "load": [round(load0, 1), round(load1, 1)],
    }


# ---------------------------------------------------------------- main


def _hanging_judge() -> str:
    """A chat-completions URL on loopback that accepts connections and never answers
    (each connection held open until the process ends): a judge that hangs."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            conn, _ = srv.accept()
            held.append(conn)  # read nothing, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/v1/chat/completions"


def _row(spec: str) -> tuple[int, float, int]:
    try:
        left, facts = spec.split("@")
        a, r = left.split("x")
        return int(a), float(r), int(facts)
    except ValueError:
        raise SystemExit(f"load_bench: a row is AGENTSxRATE@FACTS, got {spec!r}") from None


def _cells(r: dict[str, Any]) -> str:
    return (
        f"{r['offered_per_s']:g} / {r['decided_per_s']:g} | "
        f"{r['p50_ms']:g} / {r['p99_ms']:g} / {r['max_ms']:g} ms | "
        f"{r['backlog_end']} / {r['backlog_max']} | {r['checkpoints']} | "
        f"{r['synth_cpu_s']:g} s | "
        f"{r['load'][0]:g}-{r['load'][1]:g}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-agent":
        a = sys.argv[2:]
        child_agent(a[0], int(a[1]), float(a[2]), float(a[3]), float(a[4]), *a[5:6])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="8x25@50000,8x50@100000")
    ap.add_argument(
        "--traffic",
        default="mixed,one-topic",
        help="what the agents share, comma-separated, each a row: mixed, one-topic",
    )
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--drain", type=float, default=60.0)
    ap.add_argument("--compare", default=None, help="another source tree (baseline)")
    ap.add_argument("--compare-label", default="main")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting recorded in each run's copy (e.g. synthesizer.contest_floor=0.9)",
    )
    ap.add_argument(
        "--hanging-judge",
        action="store_true",
        help="run each row twice: without a judge, then with a judge endpoint that accepts "
        "connections and never answers (synthesizer.judge=its URL)",
    )
    args = ap.parse_args()
    traffics = args.traffic.split(",")
    if bad := [t for t in traffics if t not in ("mixed", "one-topic")]:
        raise SystemExit(f"load_bench: --traffic is mixed or one-topic, got {bad[0]!r}")
    cached_bytecode()
    import _one_topic
    import scale_bench

    results: list[dict[str, Any]] = []
    rows: list[list[str]] = []
    for spec, traffic in [(r, t) for r in args.rows.split(",") for t in traffics]:
        agents, rate, facts = _row(spec)
        swarm = (_one_topic.build if traffic == "one-topic" else scale_bench.build)(facts)
        trees: list[tuple[str, Path | None]] = [("this tree", None)]
        if args.compare:
            trees.append((args.compare_label, Path(args.compare).resolve()))
        runs = [(label, tree, args.config) for label, tree in trees]
        if args.hanging_judge:
            url = _hanging_judge()
            runs.append(
                ("this tree, hanging judge", None, [*args.config, f"synthesizer.judge={url}"])
            )
        for label, tree, config in runs:
            r = run_one(swarm, agents, rate, args.seconds, args.drain, tree, config, traffic)
            r.update(row=spec, tree=label, config=args.config, traffic=traffic)
            results.append(r)
            print(json.dumps(r), flush=True)
            where = f"{traffic}, {facts:,} facts, {agents} x {rate:g}/s" + "".join(
                f", {c}" for c in args.config
            )
            rows.append([where, label, *_cells(r).split(" | ")])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    header = [
        "swarm, load",
        "synthesizer",
        "offered / decided per s",
        "decision latency p50 / p99 / max",
        "backlog end / max",
        "checkpoints",
        "synthesizer CPU",
        "load avg",
    ]
    table = "\n".join(" | ".join(r) for r in rows)
    print(table)
    if not args.no_write:
        write_table(
            "load",
            "The synthesizer under a steady load (load_bench, the synthesizer-load work)",
            header,
            rows,
            notes=(
                f"{args.seconds:g} s of agents per run, 2 CPUs shared with other jobs "
                "(load average at the start and end of each run). Latency: the log's ts of a "
                "memory -> ts of the decision citing it. Run: "
                "`.venv/bin/python scripts/bench/load_bench.py --compare DIR` (DIR: an "
                "export of main)."
            ),
        )


if __name__ == "__main__":
    main()
