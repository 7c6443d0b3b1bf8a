"""A view snapshot saved after the append lock (view/ixsnap.py) that a redaction overtakes
must not leave the strings the redaction renamed in ``view.idx``.

The race, made deterministic here: a writer copies its view under the lock, checks the
redaction count after it (unchanged), and only then writes the file; a redaction that
renames an event id and a key runs in between (dropping the indexes). Before the fix the
late file kept the old id and key in the root after the erasure finished.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot as viewsnap
from swarmlog.redaction import Rewrite


def test_a_save_overtaken_by_a_renaming_redaction_leaves_no_old_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(viewsnap, "SAVE_AFTER", 20)
    root = tmp_path / "s"
    a, b, c = FileLog(root), FileLog(root), FileLog(root)
    victim = a.append(Event(agent="v", type="note", id="req-ZQXRACE-1", key="k-ZQXRACE", body={}))
    real = viewsnap.save_tables
    raced: list[int] = []

    def save_tables(*args: Any, **kw: Any) -> bool:
        if not raced:  # (the count was checked: the redaction runs before the rename)
            raced.append(0)  # (the redaction's own catch-up saves too: not again)
            rename = Rewrite({}, {"id": "~erased-id", "key": "~erased-key"})
            raced[0] = c.redact({victim.seq: rename})
        return real(*args, **kw)

    monkeypatch.setattr(viewsnap, "save_tables", save_tables)
    for i in range(200):
        (a, b)[i % 2].append(Event(agent="w", type="note", body={"i": i}))
        if raced:
            break
    assert raced == [1], "no snapshot save happened"
    for log in (a, b, c):
        log.close()
    snap = root / viewsnap.NAME
    assert not snap.exists() or b"ZQXRACE" not in snap.read_bytes()
    # the log goes on: a fresh writer's view has the pseudonyms, not the old names
    with FileLog(root) as d:
        assert d.version("k-ZQXRACE") == 0
        assert d.version("~erased-key") == victim.seq
        again = d.append(Event(agent="v", type="note", id="req-ZQXRACE-1", body={}))
        assert again.seq == d.last_seq and again.seq != victim.seq
