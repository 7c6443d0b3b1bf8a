"""A misbehaving HTTP judge beside ``swarmlog synth --follow``: decisions, stop, memory.

    .venv/bin/python scripts/bench/judge_fault_bench.py [--modes none,trickle,hang,huge]
        [--agents 4] [--rate 5] [--seconds 20] [--tree DIR] [--json FILE]

For each mode a fresh swarm (``synthesizer.near_duplicate=0.3``, so reworded statements
are unsure pairs), a chat-completions stub on loopback named by ``synthesizer.judge``
(none in mode ``none``: the baseline of the same run), one real ``synth --follow``
process, then ``--agents`` processes sharing plain memories (distinct random words: the
merge rule decides them alone) at ``--rate``/s each for ``--seconds``; agent 0 also shares
an unsure pair (category ``unsure``) every tenth memory, which asks the judge. Modes:

* ``trickle``: a 200 with headers at once, then one byte of the answer every 5 s;
* ``hang``: accepts the request and never answers;
* ``huge``: a 200 without a length, then a 300 MB body (until the client hangs up).

Measured from the log and /proc: the share of plain memories decided within 1 s (the
log's ts of a memory -> the ts of the decision citing it) and their p50/p99; the time
from SIGTERM to the process's exit (a judge call still in flight then); the
synthesizer's peak RSS (VmHWM) against the no-judge run. The machine's load average is
shown beside each row. The table is printed (docs/faults.md keeps a run's); no timing is
asserted anywhere.
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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
DECISIONS = ("fact.created", "fact.corroborated", "fact.revived")
HUGE = 300 << 20
TRICKLE_S = 5.0
PAIR = ("The {w} test is flaky on CI", "The {w} test passes and fails at random in CI")
WORDS = [f"w{a}{b}{c}" for a in "bcdfgklmnp" for b in "aeiou" for c in "rstvxz"]


class Stub:
    """A chat-completions endpoint on 127.0.0.1 that misbehaves as ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.open = 0  # requests being answered (a judge call in flight)
        self.sent = 0  # body bytes written, all requests
        self.closing = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                stub.requests += 1
                stub.open += 1
                try:
                    stub.answer(self)
                except OSError:
                    pass  # the client gave up (its deadline or its size cap)
                finally:
                    stub.open -= 1

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat/completions"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        """Misbehave: trickle, hang, or stream a huge body."""
        if self.mode == "hang":
            self.closing.wait(3600)
            return
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        out = json.dumps({"choices": [{"message": {"content": '{"verdict": "same"}'}}]}).encode()
        if self.mode == "trickle":
            h.send_header("Content-Length", str(len(out)))
            h.end_headers()
            for i in range(len(out)):
                if self.closing.wait(TRICKLE_S):
                    return
                h.wfile.write(out[i : i + 1])
                h.wfile.flush()
                self.sent += 1
            return
        h.send_header("Connection", "close")  # huge: no length, the body until closed
        h.end_headers()
        block = b" " * (1 << 20)
        while self.sent < HUGE and not self.closing.is_set():
            h.wfile.write(block)
            self.sent += len(block)

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


def child_agent(path: str, idx: int, rate: float, seconds: float, start: float) -> None:
    """Share plain memories at ``rate``/s from ``start``; agent 0 adds unsure pairs."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import Event, open_log

    rng = random.Random(idx)
    log = open_log(path)
    while time.time() < start:
        time.sleep(0.01)
    for k in range(int(rate * seconds)):
        time.sleep(max(0.0, start + k / rate - time.time()))
        words = " ".join(rng.sample(WORDS, 6))
        evs = [Event(agent=f"agent-{idx}", type="memory.shared", body={"content": words})]
        if idx == 0 and k % 10 == 0:
            w = f"{rng.choice(WORDS)}{k}"
            for j, text in enumerate(PAIR):
                body = {"content": text.format(w=w), "category": "unsure"}
                evs.append(Event(agent=f"pair-{j}", type="memory.shared", body=body))
        log.append_many(evs)
    log.close()


def _scan(path: Path) -> dict[str, Any]:
    """Plain memories' (ts, decision ts) and the judge's questions and answers."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import open_log

    plain: dict[int, float] = {}
    dec: dict[int, float] = {}
    asked = answered = 0
    with open_log(path) as log:
        for batch in log.read_batches(1):
            for d in batch:
                t = d["type"]
                if t == "memory.shared" and d["body"].get("category") != "unsure":
                    plain[d["seq"]] = d["ts"]
                elif t in DECISIONS and isinstance(d["body"].get("evidence"), int):
                    dec.setdefault(d["body"]["evidence"], d["ts"])
                asked += t == "judge.asked"
                answered += t == "judge.answered"
    lat = sorted(dec[s] - t for s, t in plain.items() if s in dec)
    return {"plain": len(plain), "lat": lat, "asked": asked, "answered": answered}


def _kib(pid: int, field: str) -> int:
    """A /proc/PID/status memory field in KiB (0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cli(tree: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([PY, "-m", "dashboards", *args], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def _start(tree: Path, work: Path) -> subprocess.Popen[bytes]:
    """``synth --follow`` on ``work``, once it says it is following."""
    err = work.parent / "synth.err"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [PY, "-m", "dashboards", "synth", "--follow", "--root", str(work)]
    with open(err, "w") as f:
        p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=f)
    deadline = time.time() + 120
    while "following" not in err.read_text():
        if p.poll() is not None or time.time() > deadline:
            p.kill()
            raise SystemExit(f"judge_fault_bench: synth did not start: {err.read_text()}")
        time.sleep(0.1)
    return p


def run_mode(mode: str, tree: Path, agents: int, rate: float, seconds: float) -> dict[str, Any]:
    """One run (see the module docstring); the figures as a dict."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import Event, open_log

    stub = Stub(mode) if mode != "none" else None
    work = Path(tempfile.mkdtemp(prefix="swarmlog-judge-")) / "s"
    _cli(tree, "init", "--root", str(work))
    settings = ["synthesizer.near_duplicate=0.3"]
    if stub is not None:
        settings += [f"synthesizer.judge={stub.url}", "synthesizer.judge_model=m"]
    _cli(tree, "config", "set", "--root", str(work), *settings)
    load0 = os.getloadavg()[0]
    synth = _start(tree, work)
    with open_log(work) as log:  # an unsure pair first: the judge is asked from the start
        log.append_many(
            Event(agent=f"pair-{j}", type="memory.shared",
                  body={"content": t.format(w="warmup"), "category": "unsure"})
            for j, t in enumerate(PAIR)
        )  # fmt: skip
    deadline = time.time() + 60
    while time.time() < deadline and (stub is not None and stub.requests == 0):
        time.sleep(0.1)
    start = time.time() + 2.0
    each = [str(rate), str(seconds), str(start)]
    kids = [subprocess.Popen([PY, __file__, "--child-agent", str(work), str(i), *each])
            for i in range(agents)]  # fmt: skip
    rss = 0
    while any(k.poll() is None for k in kids):
        rss = max(rss, _kib(synth.pid, "VmRSS"))
        time.sleep(0.2)
    deadline = time.time() + 30
    while time.time() < deadline:
        got = _scan(work)
        if len(got["lat"]) >= got["plain"]:
            break
        time.sleep(0.5)
    hwm = max(rss, _kib(synth.pid, "VmHWM"))
    in_flight = stub.open if stub is not None else 0
    t0 = time.monotonic()
    synth.send_signal(signal.SIGTERM)
    try:
        synth.wait(timeout=60)
        stop_s = round(time.monotonic() - t0, 2)
    except subprocess.TimeoutExpired:
        synth.kill()
        stop_s = float("inf")
    got = _scan(work)
    lat = got["lat"]
    if stub is not None:
        stub.close()
    shutil.rmtree(work.parent, ignore_errors=True)
    within = sum(1 for x in lat if x <= 1.0)
    return {
        "mode": mode,
        "plain": got["plain"],
        "decided": len(lat),
        "within_1s_pct": round(100.0 * within / max(1, got["plain"]), 1),
        "p50_ms": _pct_ms(lat, 50),
        "p99_ms": _pct_ms(lat, 99),
        "asked": got["asked"],
        "answered": got["answered"],
        "judge_requests": stub.requests if stub is not None else 0,
        "judge_bytes_sent": stub.sent if stub is not None else 0,
        "in_flight_at_sigterm": in_flight,
        "sigterm_to_exit_s": stop_s,
        "exit_code": synth.returncode,
        "peak_rss_mib": round(hwm / 1024, 1),
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
    }


def _pct_ms(xs: list[float], p: float) -> float:
    """The ``p``th percentile of sorted seconds ``xs``, in ms (nan when empty)."""
    if not xs:
        return float("nan")
    return round(1000 * xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))], 1)


def _row(r: dict[str, Any], base: float) -> str:
    ratio = f"{r['peak_rss_mib'] / base:.2f}x" if base else "no baseline"
    return (
        f"| {r['mode']} | {r['decided']}/{r['plain']} | {r['within_1s_pct']:g}% | "
        f"{r['p50_ms']:g} / {r['p99_ms']:g} ms | {r['asked']} / {r['answered']} | "
        f"{r['judge_requests']} ({r['in_flight_at_sigterm']} in flight) | "
        f"{r['sigterm_to_exit_s']:g} s (exit {r['exit_code']}) | "
        f"{r['peak_rss_mib']:g} MiB ({ratio}) | {r['load'][0]:g}-{r['load'][1]:g} |"
    )


HEADER = (
    "| judge | plain decided | within 1 s | p50 / p99 | asked / answered | judge calls "
    "| SIGTERM to exit | peak RSS (vs none) | load avg |\n|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-agent":
        a = sys.argv[2:]
        child_agent(a[0], int(a[1]), float(a[2]), float(a[3]), float(a[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="none,trickle,hang,huge")
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--rate", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--tree", default=str(ROOT), help="the source tree whose synth runs")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if bad := [m for m in modes if m not in ("none", "trickle", "hang", "huge")]:
        raise SystemExit(f"judge_fault_bench: a mode is none, trickle, hang or huge: {bad[0]!r}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _table import cached_bytecode

    cached_bytecode()
    results = []
    for mode in modes:
        r = run_mode(mode, Path(args.tree).resolve(), args.agents, args.rate, args.seconds)
        print(json.dumps(r), flush=True)
        results.append(r)
    base = next((r["peak_rss_mib"] for r in results if r["mode"] == "none"), 0.0)
    print(HEADER)
    for r in results:
        print(_row(r, base))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
