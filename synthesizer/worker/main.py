"""A synthesizer worker as a background process: ``python -m synthesizer.worker.main TARGET``.

Follows the log (woken by its change notifications) until SIGTERM or SIGINT, then folds
what is left, stores a checkpoint and exits 0. Prints one ``ready`` line on stdout once
the log is open, so a parent can wait for it. The demo starts it; operators use
``swarmlog synth --follow``, which does the same.
"""

from __future__ import annotations

import argparse
import signal
import sys

from swarmlog import open_log
from synthesizer.worker.follow import Follower
from synthesizer.worker.synth import Synthesizer


def serve(target: str, poll: float = 0.25) -> int:
    """Run the worker on ``target`` until signalled; return the number of decisions."""
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    log = open_log(target)
    try:
        worker = Synthesizer(log, background_checkpoints=True)
        print("ready", flush=True)
        Follower(worker).run(stop=lambda: stopping, poll=poll)  # (waits out a full disk)
        worker.release()  # a clean stop: the next worker need not wait for the timeout
        worker.catch_up()
        worker.maybe_checkpoint(force=True)
        return worker.decisions
    finally:
        log.close()


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, serve, report the decision count on stdout."""
    p = argparse.ArgumentParser(prog="python -m synthesizer.worker.main")
    p.add_argument("target", help="log directory or nats://host:port/STREAM")
    p.add_argument("--poll", type=float, default=0.25, help="wake-up net in seconds")
    args = p.parse_args(argv)
    n = serve(args.target, args.poll)
    print(f"stopped after {n} decision(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
