"""A damaged lexicon never changes a verdict silently and never raises.

Why: the merge rule's verdicts depend on the WordNet files. A folder named by
``SWARMLOG_WORDNET`` that is cut, emptied, garbled or foreign is refused with one warning
and the shipped copy used (the same verdicts as without it); a damaged shipped copy gives
no lexicon (the safe side) with one warning; and the reader, even handed bad files
unverified, reads bad data as unknown words instead of raising.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from synthesizer.merge import lexicon as lexmod

ROOT = Path(__file__).resolve().parent.parent


def _verdict_script() -> ModuleType:
    path = ROOT / "scripts" / "lexicon_verdicts.py"
    spec = importlib.util.spec_from_file_location("lexicon_verdicts", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


V = _verdict_script()
PAIRS = V.pairs_of()


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _garble(path: Path) -> None:
    """Digits shifted in the middle tenth of the file (same size, offsets now wrong)."""
    data = bytearray(path.read_bytes())
    n = len(data)
    for i in range(n * 9 // 20, n * 11 // 20):
        if 48 <= data[i] <= 57:
            data[i] = 48 + (data[i] - 48 + 3) % 10
    path.write_bytes(bytes(data))


DAMAGE: dict[str, tuple[str, Callable[[Path], None]]] = {
    "data.noun cut in half": ("data.noun", _cut),
    "data.adj emptied": ("data.adj", _empty),
    "digits garbled in data.verb": ("data.verb", _garble),
    "index.noun cut": ("index.noun", _cut),
}


@pytest.fixture()
def clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every merge cache empty before and after (the lexicon's choice included)."""
    monkeypatch.delenv("SWARMLOG_WORDNET", raising=False)
    V._clear_caches()
    yield
    V._clear_caches()


@pytest.fixture(scope="module")
def reference() -> list[dict[str, object]]:
    """The shipped copy's verdicts on every labelled pair."""
    V._clear_caches()
    try:
        assert lexmod.lexicon() is not None
        return V.verdicts(PAIRS)
    finally:
        V._clear_caches()


def _damaged(tmp_path: Path, case: str) -> Path:
    root = tmp_path / "wordnet"
    shutil.copytree(lexmod.SHIPPED, root)
    name, damage = DAMAGE[case]
    damage(root / name)
    return root


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == lexmod.__name__ and r.levelno >= logging.WARNING
    ]


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_folder_is_refused_for_the_shipped_copy(
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    clean: None,
    reference: list[dict[str, object]],
) -> None:
    root = _damaged(tmp_path, case)
    assert lexmod.check_folder(root) is not None
    monkeypatch.setenv("SWARMLOG_WORDNET", str(root))
    with caplog.at_level(logging.WARNING, logger=lexmod.__name__):
        got = V.verdicts(PAIRS)  # no exception
        lex = lexmod.lexicon()
    assert lex is not None and lex.root == lexmod.SHIPPED
    warned = _warnings(caplog)
    assert len(warned) == 1, warned
    assert str(root) in warned[0] and DAMAGE[case][0] in warned[0]
    assert got == reference


@pytest.mark.parametrize("foreign", ["no manifest", "missing folder", "another manifest"])
def test_a_foreign_folder_is_refused(
    foreign: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    clean: None,
) -> None:
    root = tmp_path / "wordnet"
    if foreign != "missing folder":
        shutil.copytree(lexmod.SHIPPED, root)
    if foreign == "no manifest":  # WordNet's own files, as Debian installs them
        (root / "MANIFEST.json").unlink()
    if foreign == "another manifest":
        (root / "MANIFEST.json").write_text('{"format": "nltk", "files": {}}')
    monkeypatch.setenv("SWARMLOG_WORDNET", str(root))
    with caplog.at_level(logging.WARNING, logger=lexmod.__name__):
        lex = lexmod.lexicon()
        assert lexmod.lexicon() is lex
        assert V.verdicts(PAIRS[:50])
    assert lex is not None and lex.root == lexmod.SHIPPED
    assert len(_warnings(caplog)) == 1


def test_an_intact_copy_elsewhere_is_used(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    clean: None,
) -> None:
    root = tmp_path / "wordnet"
    shutil.copytree(lexmod.SHIPPED, root)
    shipped_identity = lexmod.lexicon_identity()
    V._clear_caches()
    monkeypatch.setenv("SWARMLOG_WORDNET", str(root))
    with caplog.at_level(logging.WARNING, logger=lexmod.__name__):
        lex = lexmod.lexicon()
    assert lex is not None and lex.root == root.resolve()
    assert lexmod.lexicon_identity() == shipped_identity
    assert not _warnings(caplog)


def test_the_folder_is_verified_once_per_process(
    monkeypatch: pytest.MonkeyPatch, clean: None
) -> None:
    calls = []
    check = lexmod.check_folder
    monkeypatch.setattr(lexmod, "check_folder", lambda p: calls.append(p) or check(p))
    for a, b in [p[1:] for p in PAIRS[:30]]:
        V.verdicts([("x", a, b)])
    assert calls == [lexmod.SHIPPED]


def test_a_damaged_shipped_copy_gives_no_lexicon(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    clean: None,
) -> None:
    root = _damaged(tmp_path, "data.noun cut in half")
    monkeypatch.setattr(lexmod, "SHIPPED", root)
    with caplog.at_level(logging.WARNING, logger=lexmod.__name__):
        assert lexmod.lexicon() is None
        assert lexmod.lexicon_identity() == "none"
        got = V.verdicts(PAIRS)  # no exception: the rule without a lexicon
    assert len(_warnings(caplog)) == 1
    assert all(v["plain"][0] in ("same", "contradicts", "different", "unsure") for v in got)


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_the_reader_never_raises_on_bad_files(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean: None
) -> None:
    """Bad files handed to the reader unverified: every pair still gets a verdict."""
    lex = lexmod.Lexicon(_damaged(tmp_path, case))
    for name, mod in V.sys.modules.items():
        if name.startswith("synthesizer.") and getattr(mod, "lexicon", None) is lexmod.lexicon:
            monkeypatch.setattr(mod, "lexicon", lambda: lex)
    got = V.verdicts(PAIRS)
    assert len(got) == len(PAIRS)
    for word in ("server", "deploy", "fast", "quickly", "zzzz", "", "a b"):
        lex.synsets(word)
        lex.pos_of(word)
    for key in ("n:00000000", "n:99999999", "v:00001234", "a:-1", "r:x", "q:1", "n"):
        lex.synset(key)
