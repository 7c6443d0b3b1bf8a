"""Tamper evidence without holes (trust work): the retention manifest is the only thing that
can excuse missing history, and it is chained itself.

Each manifest entry carries the chain value of the record at its cut and a link (a hash
of the previous entry's link and the entry); with the operator's chain key the links
are keyed, and ``verify --key --seal`` leaves keyed seals of the head in the root. Every
test edits real files, then expects ``swarmlog verify`` to exit 1 with a one-line reason.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import zlib
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog, open_log
from swarmlog import chain as hashchain
from swarmlog.envelope import CRC_SEP
from swarmlog.file import archive as arc
from swarmlog.file.compact import compact
from tests.cli_util import run_cli

KEY = "operator-key-kept-in-the-vault"
ROOT = Path(__file__).resolve().parents[1]


def _fill(root: Path, n: int = 90, start: int = 0) -> None:
    log = open_log(root, segment_bytes=4096)
    try:
        for i in range(start, start + n):
            log.append(Event(agent="a", type="test.event", body={"i": i, "pad": "x" * 80}))
    finally:
        log.close()


def _compact(root: Path, mode: str, back: int = 5) -> None:
    log = FileLog(root)
    try:
        point = log.last_seq - back
        log.checkpoints.save(point, b"state", "test/1")
        assert compact(log, point, mode).segments
    finally:
        log.close()


def _verify(root: Path, *args: str) -> tuple[int, list[str]]:
    r = run_cli("--root", str(root), "verify", *args)
    assert "Traceback" not in r.out + r.err
    return r.code, [ln for ln in r.out.splitlines() if ln.startswith("problem:")] + (
        [r.err.strip()] if r.err.strip() else []
    )


def _manifest(root: Path) -> dict:  # type: ignore[type-arg]
    return orjson.loads((root / arc.MANIFEST).read_bytes())  # type: ignore[no-any-return]


def _save(root: Path, doc: dict) -> None:  # type: ignore[type-arg]
    (root / arc.MANIFEST).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def _forge_deleted(root: Path, upto_first: int, chain: str = "", link: str = "") -> None:
    """What a forger who deleted the segments before ``upto_first`` writes: a manifest
    entry calling them deleted by retention, with an ids file matching its checksum."""
    ids = orjson.dumps({"ids": [f"x{i}" for i in range(1, upto_first)], "keys": {}})
    packed = arc.pack(ids)
    (root / "archive").mkdir(exist_ok=True)
    (root / "archive" / arc.ids_name(1)).write_bytes(packed)
    entry = {
        "first": 1,
        "last": upto_first - 1,
        "mode": "delete",
        "raw_bytes": 0,
        "ids_checksum": arc.checksum(packed),
        "first_ts": 0.0,
        "last_ts": 0.0,
        **({"chain": chain, "link": link} if chain else {}),  # (none: main's own format)
    }
    _save(root, {"first_seq": upto_first, "first_ts": None, "entries": [entry]})


def _last_chain_value(path: Path) -> str:
    parts = hashchain.stored(path.read_bytes().rstrip(b"\n").rpartition(b"\n")[2])
    assert parts is not None
    return parts[1].decode()


def test_compaction_writes_a_chained_manifest_that_verifies(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    _compact(root, "archive", back=40)
    _fill(root, 30, start=90)
    _compact(root, "delete")
    doc = _manifest(root)
    assert len(doc["entries"]) >= 3
    assert {e["mode"] for e in doc["entries"]} == {"archive", "delete"}
    assert all(len(e["chain"]) == 32 and len(e["link"]) == 32 for e in doc["entries"])
    assert _verify(root) == (0, [])


def test_deleting_the_oldest_segments_and_forging_a_deleted_entry_fails_verify(
    tmp_path: Path,
) -> None:
    """The issue's case: the oldest segments of a never-compacted log deleted and a
    manifest entry written saying retention deleted them (it passed verify on main)."""
    root = tmp_path / "s"
    _fill(root)
    segs = sorted((root / "segments").iterdir())
    cut = int(segs[2].name.split(".")[0])
    for p in segs[:2]:
        p.unlink()
    _forge_deleted(root, cut)
    code, problems = _verify(root)
    assert code == 1
    assert any(f"seqs 1..{cut - 1} are recorded as deleted" in p for p in problems), problems


def test_a_forged_entry_with_a_wrong_chain_value_fails_verify(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    segs = sorted((root / "segments").iterdir())
    cut = int(segs[2].name.split(".")[0])
    for p in segs[:2]:
        p.unlink()
    bogus = "0" * 32
    ent = arc.Entry(1, cut - 1, "delete", 0, "", 0.0, 0.0, chain=bogus)
    _forge_deleted(root, cut, bogus, arc.entry_link("", ent, None))
    code, problems = _verify(root)
    assert code == 1 and any(f"seq {cut}: hash chain broken" in p for p in problems), problems


def test_an_archived_entry_turned_into_a_deleted_one_fails_verify(tmp_path: Path) -> None:
    """Editing the manifest: an archived segment's entry marked deleted (its archive
    removed) no longer links to the entries around it."""
    root = tmp_path / "s"
    _fill(root)
    _compact(root, "archive")
    assert _verify(root)[0] == 0
    doc = _manifest(root)
    victim = doc["entries"][1]
    (root / "archive" / arc.archive_name(victim["first"])).unlink()
    victim.update(mode="delete", bytes=0, checksum="")
    _save(root, doc)
    code, problems = _verify(root)
    assert code == 1
    assert any(
        f"entry for seqs {victim['first']}..{victim['last']} does not link" in p for p in problems
    ), problems


def test_an_edited_chain_value_in_the_manifest_fails_verify(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    _compact(root, "archive")
    doc = _manifest(root)
    doc["entries"][0]["chain"] = "f" * 32
    _save(root, doc)
    code, problems = _verify(root)
    assert code == 1
    assert any("does not link" in p for p in problems), problems
    assert any("ends at chain value" in p for p in problems), problems


def test_an_edited_archived_record_with_its_crc_fixed_fails_verify(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    _compact(root, "archive")
    ent = arc.load(str(root)).entries[0]
    path = root / "archive" / arc.archive_file(ent)
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    head = lines[2].replace(b'"i":2,', b'"i":7,')
    head = head[: head.rfind(CRC_SEP)]
    lines[2] = head + b',"crc":%d}' % zlib.crc32(head)
    packed = arc.pack(b"\n".join(lines))
    path.write_bytes(packed)
    doc = _manifest(root)
    doc["entries"][0].update(checksum=arc.checksum(packed), bytes=len(packed))
    _save(root, doc)
    code, problems = _verify(root)
    assert code == 1 and len(problems) == 1, problems
    assert "seq 3: hash chain broken in archive" in problems[0]


def test_a_careful_forger_passes_plain_verify_but_not_verify_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key, whoever can read the log before deleting can write an entry with
    the right chain value and link (docs/trust.md); the operator's key tells: the links
    of a log compacted with the key are keyed, a forger's are not."""
    root = tmp_path / "s"
    _fill(root)
    segs = sorted((root / "segments").iterdir())
    cut = int(segs[2].name.split(".")[0])
    value = _last_chain_value(segs[1])
    for p in segs[:2]:
        p.unlink()
    ent = arc.Entry(1, cut - 1, "delete", 0, "", 0.0, 0.0, chain=value)
    _forge_deleted(root, cut, value, arc.entry_link("", ent, None))
    assert _verify(root)[0] == 0  # (what remains without a key)
    monkeypatch.setenv(arc.KEY_ENV, KEY)
    code, problems = _verify(root, "--key")
    assert code == 1
    assert any(f"entry for seqs 1..{cut - 1} is not keyed" in p for p in problems), problems


def test_keyed_links_and_seals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "s"
    keyfile = tmp_path / "vault" / "chain.key"
    keyfile.parent.mkdir()
    keyfile.write_text(KEY + "\n")
    monkeypatch.setenv(arc.KEY_FILE_ENV, str(keyfile))
    _fill(root)
    _compact(root, "archive")
    assert all(e["link"].startswith(arc.KEYED) for e in _manifest(root)["entries"])
    r = run_cli("--root", str(root), "verify", "--key", "--seal")
    assert r.code == 0 and "sealed:" in r.out, r.out
    assert _verify(root, "--key") == (0, [])
    monkeypatch.delenv(arc.KEY_FILE_ENV)
    r = run_cli("--root", str(root), "verify")  # without the key: a note, not a failure
    assert r.code == 0 and "keyed link(s) not checked" in r.out, r.out
    code, problems = _verify(root, "--key")
    assert code == 1 and "SWARMLOG_CHAIN_KEY" in problems[0]
    monkeypatch.setenv(arc.KEY_ENV, "another key")
    code, problems = _verify(root, "--key")
    assert code == 1
    assert any("not the one it was written with" in p for p in problems), problems
    assert any("seals line 1: its mac does not match" in p for p in problems), problems


def test_a_full_re_chain_fails_verify_key_at_the_seal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record edited and every later chain value and CRC recomputed passes the walk;
    the keyed seal (which nobody without the key can write anew) does not hold."""
    monkeypatch.setenv(arc.KEY_ENV, KEY)
    root = tmp_path / "s"
    _fill(root, 12)
    r = run_cli("--root", str(root), "verify", "--key", "--seal")
    assert r.code == 0, r.out
    prev = hashchain.GENESIS
    for p in sorted((root / "segments").iterdir()):
        out = []
        for line in p.read_bytes().split(b"\n")[:-1]:
            if line.startswith(b'{"seq":2,'):
                line = line.replace(b'"i":1,', b'"i":9,')
            head = line[: line.rfind(hashchain.SEP)]
            value = hashchain.link(prev, head)
            rec = head + b',"chain":"%s"' % value
            out.append(rec + b',"crc":%d}' % zlib.crc32(rec))
            prev = value
        p.write_bytes(b"\n".join(out) + b"\n")
    assert run_cli("--root", str(root), "verify").code == 0  # the walk alone cannot tell
    code, problems = _verify(root, "--key")
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("problem: seal at seq 12: chain value"), problems


def test_a_key_file_under_the_root_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    _fill(root, 5)
    (root / "my.key").write_text(KEY)
    monkeypatch.setenv(arc.KEY_FILE_ENV, str(root / "my.key"))
    code, problems = _verify(root, "--key")
    assert code == 1 and any("is under the root" in p for p in problems), problems
    monkeypatch.setenv(arc.KEY_FILE_ENV, str(tmp_path / "missing.key"))
    code, problems = _verify(root, "--key")
    assert code == 1 and "cannot read the chain key" in problems[0], problems


_SEALER = """
import sys
from swarmlog import FileLog
from swarmlog.file import chain_key, seal_head
log = FileLog(sys.argv[1], notify=False)
rep = log.verify()
for _ in range(int(sys.argv[2])):
    seal_head(log, rep, chain_key())
log.close()
"""


@pytest.mark.slow
def test_sealers_at_once_lose_no_seal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four processes sealing the head at once (``verify --key --seal``'s call, 25 times
    each): every seal is in the file and holds. The file is read, extended and renamed
    over, so without ``compact.lock`` around that two sealers each renamed their own copy
    and a seal was lost."""
    root = tmp_path / "s"
    _fill(root, 12)
    env = {**os.environ, arc.KEY_ENV: KEY, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _SEALER, str(root), "25"], cwd=ROOT, env=env)
        for _ in range(4)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0] * 4
    lines = (root / "seals").read_bytes().splitlines()
    assert len(lines) == 100
    monkeypatch.setenv(arc.KEY_ENV, KEY)
    assert _verify(root, "--key") == (0, [])
    assert not [n for n in os.listdir(root) if n.endswith(".tmp")]  # (none left behind)
