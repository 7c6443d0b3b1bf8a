"""What each JetStream server feature costs per acked publish, N writer processes.

Isolates the gap between swarmlog appends and raw acked publishes: the same N writer
processes publish the same payloads, one at a time awaiting each PubAck, against
streams that differ in one setting each, and the server's CPU per message is read from
``/proc/<pid>/stat`` around each run (client CPU from each writer). Variants (``--variants``):

- ``bare``: nats-py ``js.publish``, stream without ``republish``, no ``Nats-Msg-Id``;
- ``msgid``: + ``Nats-Msg-Id`` (the server's duplicate window);
- ``repub``: + the stream republishing every message's headers (swarmlog's stamps), nobody
  subscribed (what the bench's raw baseline runs against);
- ``stamps``: + each writer subscribed to its own stamps (what the server does for a
  swarmlog append);
- ``onesubj``: as ``stamps``, every writer on one subject instead of one per agent;
- ``sync``: swarmlog's blocking socket (syncpath/conn.py) without the log around it,
  ``repub`` stream, own stamps;
- ``swarmlog``: ``JetStreamLog.append`` (the full stream; one leased sealer);
- ``noseal``: ``JetStreamLog.append`` with sealing switched off (diagnostic);
- ``late``: ``JetStreamLog.append``, each writer closing its log only once all are done.

Server CPU is counted from "go" to the last writer's last PubAck (closes not included).

    .venv/bin/python scripts/bench/jetstream_cost.py --writers 16 [--per-run 16000]
        [--reps 2] [--store /dev/shm] [--variants bare,msgid,...]
    .venv/bin/python scripts/bench/jetstream_cost.py --batch-probe

``--seal-probe N [--tree DIR]``: what the one sealer pays per record it seals (the
records of another writer, which it reads back): a process appends N events with sealing
off, then a fresh handle seals them; client CPU and wall time per record, for this tree
and each ``--tree`` (a checkout of another commit) in turn, on the same stream.

``--batch-probe``: what an atomic batch (the synthesizer's decisions) costs against a
single append, store on disk, on tmpfs, and with ``sync_interval: always``.
Diagnostics: ``JS_COST_SPANS=1`` prints each writer's end time (the sealer's marked ``*``),
``JS_COST_CLOSE=1`` each swarmlog writer's ``close`` time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import release, start_writers  # noqa: E402

from swarmlog.envelope import DEFAULT_LIMITS  # noqa: E402
from swarmlog.jetstream import JetStreamLog  # noqa: E402
from swarmlog.jetstream.proto import prepare  # noqa: E402
from swarmlog.jetstream.setup import stream_config  # noqa: E402
from swarmlog.jetstream.stampfeed import stamp_filter  # noqa: E402
from swarmlog.jetstream.subjects import Subjects  # noqa: E402
from tests.natsserver import NatsServer  # noqa: E402

VARIANTS = ["bare", "msgid", "repub", "stamps", "onesubj", "sync", "swarmlog", "noseal", "late"]
STREAM = {"bare": "BARE", "msgid": "BARE"}  # every other variant: the full stream


def ev(i: int, agent: str) -> Any:
    from scripts.bench.jetstream_bench import ev as bench_ev

    return bench_ev(i, agent=agent)


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def make_streams(url: str) -> None:
    """FULL: swarmlog's own configuration (through JetStreamLog); BARE: the same
    without ``republish``."""
    JetStreamLog(f"{url}/FULL").close()

    async def go() -> None:
        import nats

        nc = await nats.connect(url)
        cfg = stream_config("BARE", "BARE", 1, 600.0, DEFAULT_LIMITS)
        del cfg["republish"]
        await nc.request("$JS.API.STREAM.CREATE.BARE", json.dumps(cfg).encode(), timeout=5)
        await nc.close()

    asyncio.run(go())


def child(variant: str, url: str, m: int, agent: str) -> None:
    """One writer: prepare, say ready, wait for go, publish ``m`` events, print times."""
    stream = STREAM.get(variant, "FULL")
    subjects = Subjects(f"swarmlog.{stream}")
    evs = [ev(i, agent) for i in range(m)]
    ps = prepare(evs, stream, subjects, DEFAULT_LIMITS)
    subject = [p.subject if variant != "onesubj" else f"swarmlog.{stream}.one" for p in ps]
    stamps = stamp_filter(subjects.agent(agent))
    if variant == "onesubj":
        stamps = f"swarmlog-stamp.{stream}.one"
    msgid = variant != "bare"

    if variant in ("swarmlog", "noseal", "late"):
        log = JetStreamLog(f"{url}/{stream}", create=False)
        if variant == "noseal":
            log._seals.kick = lambda *a: None  # type: ignore[method-assign]
        log.append(ev(-1, agent))

        def run() -> None:
            for e in evs:
                log.append(e)

        timed(run, log)
        if variant == "late":  # close once every writer is done
            sys.stdin.readline()
        c = time.perf_counter()
        holder = log._seals.lease.holding
        log.close()
        if os.environ.get("JS_COST_CLOSE"):
            print(
                f"close {time.perf_counter() - c:.3f}s holder={holder} {log._seals.error}",
                file=sys.stderr,
            )
        return
    if variant == "sync":
        from swarmlog.jetstream.syncpath.conn import SyncConn

        conn = SyncConn([url], 5.0, stream)
        conn.connect()
        conn.subscribe_stamps(stamps)

        def run() -> None:
            for p, s in zip(ps, subject, strict=True):
                conn.request(s, p.payload, {"Nats-Msg-Id": p.event.id}, time.monotonic() + 5)
                conn.stamps.clear()

        timed(run)
        conn.close()
        return

    async def main() -> None:
        import nats

        nc = await nats.connect(url)
        js = nc.jetstream()
        if variant in ("stamps", "onesubj"):

            async def noop(msg: Any) -> None:
                pass

            await nc.subscribe(stamps, cb=noop)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, ready)
        c0, t0 = time.process_time(), time.time()
        for p, s in zip(ps, subject, strict=True):
            hdrs = {"Nats-Msg-Id": p.event.id} if msgid else None
            await js.publish(s, p.payload, headers=hdrs)
        report(c0, t0)
        await nc.close()

    asyncio.run(main())


def ready() -> None:
    print("ready", flush=True)
    sys.stdin.readline()


def report(c0: float, t0: float, sealer: bool = False) -> None:
    t1, c1 = time.time(), time.process_time()
    print(json.dumps({"t0": t0, "t1": t1, "cpu": c1 - c0, "sealer": sealer}), flush=True)


def timed(run: Any, log: Any = None) -> None:
    ready()
    c0, t0 = time.process_time(), time.time()
    run()
    report(c0, t0, bool(log is not None and log._seals.lease.holding))


def writers(variant: str, url: str, n: int, total: int, server_pid: int) -> dict[str, float]:
    """events/s, client and server CPU (us) per event of ``n`` writers of ``variant``."""
    m = max(1, total // n)
    me = [sys.executable, __file__, "--child", variant, url, str(m)]
    procs = start_writers(me, n)
    s0 = cpu_ticks(server_pid)
    release(procs)
    spans = []
    for p in procs:
        assert p.stdout is not None
        spans.append(json.loads(p.stdout.readline()))
    s1 = cpu_ticks(server_pid)
    if os.environ.get("JS_COST_SPANS"):  # each writer's time, the sealer's marked
        t0 = min(s["t0"] for s in spans)
        print(
            "  spans: "
            + " ".join(f"{s['t1'] - t0:.2f}{'*' if s['sealer'] else ''}" for s in spans),
            flush=True,
        )
    for p in procs:
        p.communicate("close\n" if variant == "late" else None, timeout=600)
    tick = os.sysconf("SC_CLK_TCK")
    events = n * m
    return {
        "rate": events / (max(s["t1"] for s in spans) - min(s["t0"] for s in spans)),
        "client_us": sum(s["cpu"] for s in spans) * 1e6 / events,
        "server_us": (s1 - s0) / tick * 1e6 / events,
    }


def batch_probe(store: str | None, sync_always: bool, n: int = 200) -> str:
    """One writer: latency of ``append`` (one message) and ``append_many`` of two (an
    atomic batch), alternated, and whether the server takes ``persist_mode: async``
    (no fsync before the ack) on a stream that allows atomic batches."""
    with tempfile.TemporaryDirectory(dir=store) as d:
        srv = NatsServer(d, sync_always=sync_always)
        srv.start()
        try:
            one: list[float] = []
            two: list[float] = []
            with JetStreamLog(f"{srv.url}/PROBE") as log:
                log.append(ev(-1, "probe"))
                log.append_many([ev(-2, "probe"), ev(-3, "probe")])
                for i in range(n):
                    t = time.perf_counter()
                    log.append(ev(i, "probe"))
                    one.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    log.append_many([ev(i, "probe"), ev(i, "probe")])
                    two.append(time.perf_counter() - t)

            async def async_mode() -> str:
                import nats

                nc = await nats.connect(srv.url)
                cfg = stream_config("ASYNC", "ASYNC", 1, 600.0, DEFAULT_LIMITS)
                cfg["persist_mode"] = "async"
                msg = await nc.request(
                    "$JS.API.STREAM.CREATE.ASYNC", json.dumps(cfg).encode(), timeout=5
                )
                await nc.close()
                r = json.loads(msg.data)
                return str((r.get("error") or {}).get("description") or "accepted")

            refused = asyncio.run(async_mode())
        finally:
            srv.stop()

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[int(p * (len(xs) - 1))] * 1e3

    return (
        f"| {store or 'disk'} | {'always' if sync_always else 'default'} | "
        f"{q(one, 0.5):.2f} / {q(one, 0.99):.2f} | {q(two, 0.5):.2f} / {q(two, 0.99):.2f} | "
        f"{refused} |"
    )


SEAL_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from swarmlog.jetstream import JetStreamLog
url, n = sys.argv[2], int(sys.argv[3])
log = JetStreamLog(url, create=False)
sealer = log._seals.sealer
c0, t0 = time.process_time(), time.perf_counter()
log._run(sealer.seal(n), 600)
c1, t1 = time.process_time(), time.perf_counter()
print((c1 - c0) / n * 1e6, (t1 - t0) / n * 1e6)
"""


def seal_probe(n: int, trees: list[str]) -> str:
    """Sealing cost per record: ``n`` records appended by one writer (sealing off), then
    sealed from scratch by a fresh handle of each tree, on a stream of its own."""
    rows = []
    with tempfile.TemporaryDirectory() as d:
        srv = NatsServer(d)
        srv.start()
        try:
            for k, tree in enumerate([str(ROOT), *trees]):
                url = f"{srv.url}/SEAL{k}"
                log = JetStreamLog(url)  # open until the probe ran: its close would seal
                log._seals.kick = lambda *a: None  # type: ignore[method-assign]
                for i in range(n):
                    log.append(ev(i, "writer"))
                out = subprocess.run(
                    [sys.executable, "-c", SEAL_CHILD, tree, url, str(n)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                log.close()
                rows.append(f"| {tree} | {float(out[0]):.1f} | {float(out[1]):.1f} |")
        finally:
            srv.stop()
    return (
        f"{n} records of another writer sealed by a fresh handle, load "
        f"{os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}\n\n"
        "| tree | client CPU us/record | wall us/record |\n|---|---|---|\n" + "\n".join(rows)
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--per-run", type=int, default=16000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--store", help="directory for the server's store (e.g. /dev/shm)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument(
        "--batch-probe", action="store_true", help="atomic batch vs single append latency"
    )
    ap.add_argument("--seal-probe", type=int, metavar="N", help="sealing cost per record")
    ap.add_argument("--tree", action="append", default=[], help="another checkout (seal probe)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.seal_probe:
        print(seal_probe(a.seal_probe, a.tree))
        return
    if a.batch_probe:
        print(
            f"one writer, 200 x (append, append_many of 2), load {os.getloadavg()[0]:.1f}\n\n"
            "| store | sync_interval | append p50 / p99 ms | atomic batch of 2 p50 / p99 ms "
            "| persist_mode async with allow_atomic |\n|---|---|---|---|---|"
        )
        for store, always in ((None, False), ("/dev/shm", False), (None, True)):
            print(batch_probe(store, always), flush=True)
        return
    if a.child:
        variant, url, m, agent = a.child
        child(variant, url, int(m), agent)
        return
    variants = a.variants.split(",")
    load = os.getloadavg()[0]
    got: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(dir=a.store) as d:
        srv = NatsServer(d)
        srv.start()
        try:
            make_streams(srv.url)
            assert srv.proc is not None
            for _ in range(a.reps):
                for v in variants:
                    r = writers(v, srv.url, a.writers, a.per_run, srv.proc.pid)
                    got[v].append(r)
                    print(
                        f"  {v}: {r['rate']:,.0f}/s, client {r['client_us']:.0f} us, "
                        f"server {r['server_us']:.0f} us per event",
                        flush=True,
                    )
        finally:
            srv.stop()
    med = statistics.median
    print(
        f"\n{a.writers} writers, {a.per_run} events per run, {a.reps} round(s), store "
        f"{a.store or 'disk (tmp)'}, load {load:.1f} -> {os.getloadavg()[0]:.1f}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}\n"
    )
    print("| variant | events/s | client CPU us/event | server CPU us/event |\n|---|---|---|---|")
    for v in variants:
        rs = got[v]
        print(
            f"| {v} | {med(r['rate'] for r in rs):,.0f} | "
            f"{med(r['client_us'] for r in rs):.0f} | {med(r['server_us'] for r in rs):.0f} |"
        )


if __name__ == "__main__":
    main()
