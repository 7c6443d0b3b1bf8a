"""swarmlog.numpyload: numpy loaded on first use with OpenBLAS's idle threads asleep.

The contract is about the environment OpenBLAS sees when it loads: a stand-in ``numpy``
package (first on ``sys.path`` in a fresh interpreter) records ``OPENBLAS_THREAD_TIMEOUT``
as it is imported, so each case checks what a real OpenBLAS would have read, and that
nothing of it is left in the process's environment (or its children's) afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = """
import os
SEEN = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
"""


def _run(tmp_path: Path, body: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``body`` in a fresh interpreter whose ``numpy`` is the stand-in; its JSON."""
    pkg = tmp_path / "numpy"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text(STAND_IN)
    e = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    e["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    e.update(env or {})
    out = subprocess.run(
        [sys.executable, "-c", body], env=e, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = """
import json, os, subprocess, sys
child = subprocess.run([sys.executable, "-c",
    "import os; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
    capture_output=True, text=True).stdout.strip()
print(json.dumps({"seen": np.SEEN, "after": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
                  "child": child}))
"""


def test_first_import_runs_with_idle_threads_asleep_and_leaves_no_trace(tmp_path: Path) -> None:
    got = _run(tmp_path, "from swarmlog.numpyload import np\n" + REPORT)
    assert got == {"seen": "4", "after": None, "child": "None"}


def test_a_value_the_user_set_is_kept(tmp_path: Path) -> None:
    got = _run(
        tmp_path,
        "from swarmlog.numpyload import np\n" + REPORT,
        env={"OPENBLAS_THREAD_TIMEOUT": "20"},
    )
    assert got == {"seen": "20", "after": "20", "child": "20"}


def test_numpy_loaded_before_is_left_as_it_was(tmp_path: Path) -> None:
    got = _run(tmp_path, "import numpy\nfrom swarmlog.numpyload import np\n" + REPORT)
    assert got["seen"] is None and got["after"] is None


def test_with_another_thread_running_the_environment_is_not_touched(tmp_path: Path) -> None:
    body = (
        "import threading\n"
        "stop = threading.Event()\n"
        "t = threading.Thread(target=stop.wait); t.start()\n"
        "from swarmlog.numpyload import np\n"
        "stop.set(); t.join()\n" + REPORT
    )
    got = _run(tmp_path, body)
    assert got["seen"] is None and got["after"] is None


def test_the_lazy_sites_load_numpy_through_it(tmp_path: Path) -> None:
    """A writer's first view snapshot is where numpy loads in a writer process: the real
    numpy there, loaded through numpyload (the variable set while it loaded)."""
    pytest.importorskip("numpy")
    body = """
import json, os, sys, tempfile
seen = []
real = os.environ.__class__.__setitem__
def spy(self, k, v):
    if k == "OPENBLAS_THREAD_TIMEOUT" and "numpy" not in sys.modules:
        seen.append(v)
    return real(self, k, v)
os.environ.__class__.__setitem__ = spy
from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot
assert "numpy" not in sys.modules
snapshot.SAVE_AFTER = 5
d = tempfile.mkdtemp()
a, b = FileLog(d), FileLog(d)
for i in range(40):
    (a if i % 2 else b).append(Event(agent="x", session="s", type="t", body={"i": i}))
print(json.dumps({"loaded": "numpy" in sys.modules, "seen": seen,
                  "after": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}))
"""
    e = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    e["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", body], env=e, capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"loaded": True, "seen": ["4"], "after": None}


def test_no_lazy_site_loads_numpy_by_its_own_names() -> None:
    """A function-level ``import numpy`` / ``from numpy...`` would load numpy without
    numpyload (only ``TYPE_CHECKING`` blocks and numpyload itself may name it)."""
    import re

    bad = []
    for pkg in ("swarmlog", "synthesizer"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name == "numpyload.py":
                continue
            lines = path.read_text().splitlines()
            for i, line in enumerate(lines):
                if not re.match(r"\s+(import numpy|from numpy)\b", line):
                    continue
                j = i - 1
                while j >= 0 and (not lines[j].strip() or lines[j].lstrip().startswith("#")):
                    j -= 1
                if not lines[j].lstrip().startswith("if TYPE_CHECKING"):
                    bad.append(f"{path.relative_to(ROOT)}:{i + 1}")
    assert not bad, bad
