"""A checkpoint's mapped vectors on a full tmpfs (docs/faults.md, "The writer index lost,
replaced or cut; ..."): the vector file kept a sparse tail (spare rows for new facts) and
the recall codes one too; a reader maps them copy-on-write, and on tmpfs the first touch
of a hole page allocates it, so on a full disk a reader adding a fact died of SIGBUS.
Side files are now written fully allocated. On a small tmpfs the test mounts (root)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from synthesizer.swarm import Swarm
from tests.test_disk_full import (
    fill,
    tmpfs,  # noqa: F401 (the fixture)
)

pytestmark = pytest.mark.timeout(180)

READER = """
import sys
from synthesizer.swarm import Swarm
with Swarm.open(sys.argv[1]) as sw:
    hits = sw.search("module 29 caches the tokens")
    print(len(sw.state().facts), hits[0].fact.content if hits else "")
"""


def _allocated(path: Path) -> bool:
    st = os.stat(path)
    return st.st_blocks * 512 >= st.st_size


def test_a_reader_of_mapped_vectors_survives_a_full_tmpfs(
    tmpfs: Callable[[str], Path],  # noqa: F811 (the fixture)
) -> None:
    root = tmpfs("16m") / "s"
    with Swarm.open(root) as sw:
        for i in range(20):
            sw.agent(f"a{i % 3}").share(f"module {i} caches the tokens of request kind k{i}")
        sw.synthesize()
        sw.checkpoint()  # vectors of 20 facts, spare rows after them
        for i in range(20, 30):  # 10 more facts after the checkpoint: a reader adds them
            sw.agent("a9").share(f"module {i} caches the tokens of request kind k{i}")
        sw.synthesize()
    side = sorted((root / "checkpoints").rglob("*.f32"))
    assert side, sorted(p.name for p in root.rglob("*"))
    assert all(_allocated(p) for p in side)  # no hole left to allocate at a touch
    fill(root.parent)
    r = subprocess.run([sys.executable, "-c", READER, str(root)],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split()[0] == "30" and "module 29" in r.stdout, r.stdout
