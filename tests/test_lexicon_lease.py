"""The lexicon the merge rule decides with is recorded in every synthesizer batch's mark,
and a worker with another lexicon does not take the lease over (two lexicons decide one
pair two ways), unless told to, when its marks record its own."""

from __future__ import annotations

from pathlib import Path

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.merge.lexicon import lexicon_identity
from synthesizer.worker.lease import Lease


def _batch(log: object, lease: Lease, upto: int) -> Event:
    mark = lease.mark(upto)
    stored = log.append(mark, expect={"synthesizer": lease.version})  # type: ignore[attr-defined]
    lease.won(stored)
    return stored


def test_a_mark_names_the_lexicon(tmp_path: Path) -> None:
    with open_log(tmp_path / "s") as log:
        lease = Lease(log, 30.0, name="w1")
        stored = _batch(log, lease, 0)
        assert stored.type == T.SYNTH_PROGRESS
        assert stored.body["lexicon"] == lexicon_identity() != "none"


def test_a_worker_with_another_lexicon_is_refused_unless_told(tmp_path: Path) -> None:
    with open_log(tmp_path / "s") as log:
        first = Lease(log, 30.0, name="w1", lexicon="wordnet-3.0:aaaa")
        _batch(log, first, 0)
        first.release(0)  # a clean stop: the lease is free
        other = Lease(log, 30.0, name="w2", lexicon="wordnet-3.0:bbbb", accept_lexicon=False)
        other.observe(log.version("synthesizer"))
        line = other.lexicon_conflict()
        assert line is not None and "aaaa" in line and "bbbb" in line and "\n" not in line
        assert not other.may_write()
        told = Lease(log, 30.0, name="w3", lexicon="wordnet-3.0:bbbb", accept_lexicon=True)
        told.observe(log.version("synthesizer"))
        assert told.may_write()
        stored = _batch(log, told, 0)
        assert stored.body["lexicon"] == "wordnet-3.0:bbbb"
        same = Lease(log, 30.0, name="w4", lexicon="wordnet-3.0:bbbb", accept_lexicon=False)
        same.observe(log.version("synthesizer"))
        assert same.lexicon_conflict() is None  # the new identity is the recorded one now


def test_the_variable_tells_a_worker_to_proceed(tmp_path: Path, monkeypatch: object) -> None:
    monkeypatch.setenv("SWARMLOG_ACCEPT_LEXICON", "1")  # type: ignore[attr-defined]
    with open_log(tmp_path / "s") as log:
        first = Lease(log, 30.0, name="w1", lexicon="wordnet-3.0:aaaa")
        _batch(log, first, 0)
        first.release(0)
        other = Lease(log, 30.0, name="w2", lexicon="wordnet-3.0:bbbb")
        other.observe(log.version("synthesizer"))
        assert other.lexicon_conflict() is None and other.may_write()
