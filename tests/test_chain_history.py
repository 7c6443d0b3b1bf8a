"""Tamper evidence over the whole history (trust work): archives are chain-walked, and only
the retention manifest can excuse missing seqs.

* deleting the oldest segment(s) of a log that was never compacted fails ``verify``
  (it passed with the same anchor: the first segment's link was taken as given);
* an archived record edited with its CRC, the archive's gzip and the manifest's checksum
  all fixed fails ``verify``, naming the seq (archives were never chain-walked).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import orjson

from swarmlog import Event, FileLog, open_log
from swarmlog.envelope import CRC_SEP
from swarmlog.file import archive as arc
from swarmlog.file.compact import compact
from tests.cli_util import run_cli


def _fill(root: Path, n: int = 90) -> None:
    log = open_log(root, segment_bytes=4096)
    try:
        for i in range(n):
            log.append(Event(agent="a", type="test.event", body={"i": i, "pad": "x" * 80}))
    finally:
        log.close()


def _recrc(line: bytes) -> bytes:
    head = line[: line.rfind(CRC_SEP)]
    return head + b',"crc":%d}' % zlib.crc32(head)


def test_deleting_the_oldest_segment_of_a_never_compacted_log_fails_verify(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    _fill(root)
    assert FileLog(root).verify().ok
    segs = sorted((root / "segments").iterdir())
    assert len(segs) >= 3
    segs[0].unlink()
    rep = FileLog(root).verify()
    assert not rep.ok
    assert any("are missing" in p for p in rep.problems), rep.problems
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1 and "are missing" in r.out


def test_an_edited_archived_record_fails_verify(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    log = FileLog(root)
    try:
        point = log.last_seq - 5
        log.checkpoints.save(point, b"state", "test/1")
        res = compact(log, point, "archive")
        assert res.segments
    finally:
        log.close()
    assert FileLog(root).verify().ok
    m = arc.load(str(root))
    ent = m.entries[0]
    path = root / "archive" / arc.archive_file(ent)
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    k = 2
    assert b'"i":2,' in lines[k]
    lines[k] = _recrc(lines[k].replace(b'"i":2,', b'"i":7,'))
    data = b"\n".join(lines)
    packed = arc.pack(data)
    path.write_bytes(packed)
    doc = orjson.loads((root / arc.MANIFEST).read_bytes())
    for e in doc["entries"]:
        if e["first"] == ent.first:
            e["checksum"] = arc.checksum(packed)
            e["bytes"] = len(packed)
            e["raw_bytes"] = len(data)
    (root / arc.MANIFEST).write_bytes(orjson.dumps(doc))
    rep = FileLog(root).verify()
    assert not rep.ok
    assert any("seq 3: hash chain broken in archive" in p for p in rep.problems), rep.problems


def test_a_re_chained_log_fails_verify_expect(tmp_path: Path) -> None:
    """A full re-chain (an edit, then every later chain value and CRC recomputed) passes
    the chain walk; the anchor an operator kept elsewhere catches it."""
    from swarmlog import chain as hashchain

    root = tmp_path / "s"
    _fill(root, 12)
    r = run_cli("--root", str(root), "verify", "--anchor")
    assert r.code == 0
    _, _, seq, value = next(ln for ln in r.out.splitlines() if ln.startswith("anchor:")).split()
    assert run_cli("--root", str(root), "verify", "--expect", f"{seq}:{value}").code == 0
    prev = hashchain.GENESIS
    for p in sorted((root / "segments").iterdir()):
        out = []
        for line in p.read_bytes().split(b"\n")[:-1]:
            if line.startswith(b'{"seq":2,'):
                line = line.replace(b'"i":1,', b'"i":9,')
            head = line[: line.rfind(hashchain.SEP)]
            value_b = hashchain.link(prev, head)
            rec = head + b',"chain":"%s"' % value_b
            out.append(rec + b',"crc":%d}' % zlib.crc32(rec))
            prev = value_b
        p.write_bytes(b"\n".join(out) + b"\n")
    assert run_cli("--root", str(root), "verify").code == 0  # the walk alone cannot tell
    r = run_cli("--root", str(root), "verify", "--expect", f"{seq}:{value}")
    assert r.code == 1 and f"anchor seq {seq}: chain value" in r.out, r.out
    bad = run_cli("--root", str(root), "verify", "--expect", "12")
    assert bad.code == 1 and "give SEQ:HASH" in bad.err and "Traceback" not in bad.err


def test_a_record_forged_into_a_scrubbed_marker_is_unexplained(tmp_path: Path) -> None:
    """Once a forget request exists, another agent's memory rewritten by hand (agent and
    body changed) and marked ``scrubbed:<its own chain>`` still chains; verify reports it
    (forget never scrubs a memory.shared), while forget's own scrubs stay explained."""
    from swarmlog.redaction import redact_line
    from synthesizer import Swarm

    root = tmp_path / "s"
    sw = Swarm.open(root)
    try:
        sw.agent("victim").share("the victim's secret words about the vault door")
        sw.agent("alice").share("alice's honest note about the build")
        sw.agent("bob").recall("what about the victim's secret words about the vault?")
        sw.synthesize()
    finally:
        sw.close()
    assert run_cli("--root", str(root), "forget", "--agent", "victim").code == 0
    r = run_cli("--root", str(root), "verify")
    assert r.code == 0, r.out  # forget's tombstones and scrubs are explained
    seg_path = sorted((root / "segments").iterdir())[0]
    lines = seg_path.read_bytes().split(b"\n")
    k = next(i for i, ln in enumerate(lines) if b"alice's honest note" in ln)
    forged_src = lines[k].replace(b'"agent":"alice"', b'"agent":"mallory"')
    new = redact_line(forged_src + b"\n", {"content": "mallory says: wire the money"})
    assert new is not None
    lines[k] = new[:-1]
    seg_path.write_bytes(b"\n".join(lines))
    assert FileLog(root).verify().ok  # the chain walk accepts the marker
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1 and "a redacted memory.shared by agent 'mallory'" in r.out, r.out
