"""Hybrid recall: identifiers kept whole and split, an exact identifier first among
look-alikes (both embedders), the lexical index following merges, board writes and
erasure, and the same ranking from a checkpoint as from the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthesizer.config import SynthConfig
from synthesizer.replay import state_at
from synthesizer.search.factindex import FactIndex
from synthesizer.search.lexical import LexicalIndex, identifiers, is_identifier, terms
from synthesizer.search.recall import RecallQuery, recall
from synthesizer.swarm import Swarm

LOOKALIKES = [
    ("data-1", "The nightly ETL fails with ORA-00942 because the staging table was renamed."),
    ("data-2", "The nightly ETL fails with ORA-00904 because the loader selects a dropped column."),
    ("pay-1", "Tax rounding for each line item happens in src/billing/invoice.py before summing."),
    ("pay-2", "The portal lists past bills through src/billing/invoices.py, fifty rows at a time."),
    ("pay-3", "JIRA-4411 tracks the duplicate charge when a customer double-clicks pay."),
    ("pay-4", "JIRA-4412 tracks the rounding error on yen invoices, which have no minor unit."),
    ("plat-1", "API gateway v2.14.3 fixes the header size regression and is the one to run."),
    ("plat-2", "API gateway v2.14.2 rejects large headers, which broke the SSO callback."),
    ("sec-1", "CVE-2024-3094 is the xz backdoor; build images were rebuilt with a clean xz."),
    ("sec-2", "CVE-2024-3049 affects the booth cluster ticket manager, which we do not install."),
]
ASKED = {
    "ORA-00942": "ORA-00942",
    "ORA-00904": "ORA-00904",
    "src/billing/invoice.py": "invoice.py ",
    "src/billing/invoices.py": "invoices.py",
    "JIRA-4412": "JIRA-4412",
    "v2.14.2": "v2.14.2 rejects",
    "CVE-2024-3049": "CVE-2024-3049",
    "what is CVE-2024-3094 about": "CVE-2024-3094",
}


def test_paths_codes_versions_split_and_whole() -> None:
    t = terms("Failed in src/billing/invoice.py:")
    for want in ("src/billing/invoice.py", "billing/invoice.py", "invoice.py", "src", "billing"):
        assert want in t
    assert {"invoice", "py", "failed"} <= set(t)
    assert terms("ORA-00942") == ["ora-00942", "ora", "00942"]
    v = terms("deployed v2.14.3.")
    assert "v2.14.3" in v and "14" not in v and "3" not in v  # short numeric parts: noise
    assert {"maxpoolsize", "max", "pool", "size"} <= set(terms("MaxPoolSize"))
    assert {"db.pool.max_size", "db", "pool", "max", "size"} <= set(terms("db.pool.max_size"))
    assert "the" not in terms("the table") and "table" in terms("the tables")  # plural folded
    assert identifiers("is ORA-00942 in src/a.py on v2.1, MaxPool or JIRA-1?") == [
        "ora-00942",
        "src/a.py",
        "v2.1",
        "maxpool",
        "jira-1",
    ]
    assert not any(is_identifier(w) for w in ("table", "Table", "ETL", "why"))


def test_bm25_prefers_the_rarer_term_and_forgets_words() -> None:
    class F:
        def __init__(self, content: str) -> None:
            self.content = content

    lex = LexicalIndex()
    facts = {
        "a": F("queue latency on shard one"),
        "b": F("queue depth grows"),
        "c": F("zebra queue"),
    }
    lex.sync(facts)
    got = lex.scores("zebra queue", 10)
    assert max(got, key=lambda k: got[k]) == "c"
    del facts["c"]
    lex.sync(facts, ["c"])
    assert "zebra" not in lex.vocabulary() and "c" not in lex
    facts["a"] = F("queue latency on shard two")  # a board write changed the content
    lex.sync(facts)
    assert "one" not in lex.vocabulary() and "two" in lex.vocabulary()


def _swarm(path: Path, embedder: str) -> Swarm:
    sw = Swarm.open(path, config=SynthConfig(embedder=embedder))
    for agent, text in LOOKALIKES:
        sw.agent(agent).share(text)
    sw.synthesize()
    return sw


def _check_identifiers_first(sw: Swarm) -> None:
    asker = sw.agent("asker")
    for query, marker in ASKED.items():
        hits = asker.recall(query, limit=3, log=False)
        assert marker in hits[0].fact.content + " ", (query, [h.fact.content for h in hits])


def test_an_exact_identifier_ranks_first_among_lookalikes_hash(tmp_path: Path) -> None:
    with _swarm(tmp_path, "hash") as sw:
        _check_identifiers_first(sw)
        # the same through swarm.search (the CLI's and MCP's path)
        assert "ORA-00904" in sw.search("ORA-00904", limit=1)[0].fact.content


def test_an_exact_identifier_ranks_first_among_lookalikes_minilm(tmp_path: Path) -> None:
    from synthesizer.search.embed import embedder_for

    try:
        embedder_for("minilm").embed(["probe"])
    except Exception as e:  # the extra or its model missing here
        pytest.skip(f"minilm unavailable: {e}")
    with _swarm(tmp_path, "minilm") as sw:
        _check_identifiers_first(sw)
        dense = [
            h.fact.content for h in sw.agent("a").recall("ORA-00904", 2, log=False, mode="dense")
        ]
        assert len(dense) == 2  # (dense ranks them close; the hybrid decides, above)


def test_modes_and_a_lexical_only_hit(tmp_path: Path) -> None:
    with _swarm(tmp_path, "hash") as sw:
        a = sw.agent("asker")
        lex = a.recall("yen", limit=5, log=False, mode="lexical")
        assert [h.fact.content for h in lex] == [LOOKALIKES[5][1]]
        with pytest.raises(ValueError):
            a.recall("yen", log=False, mode="sparse")


def test_the_lexical_index_follows_merges_board_writes_and_erasure(tmp_path: Path) -> None:
    with _swarm(tmp_path, "hash") as sw:
        # a rewording from another agent merges into the fact: one document still
        sw.agent("data-9").share(LOOKALIKES[0][1])
        sw.agent("mallory").share("Mallory's note: the ZQX-7781 relay on host mal-01 leaks.")
        sw.synthesize()
        a = sw.agent("asker")
        hits = a.recall("ZQX-7781", limit=3, log=False)
        assert "ZQX-7781" in hits[0].fact.content
        lex = sw.index.lexical
        assert lex is not None and len(lex) == len(sw.refresh().facts)
        assert "zqx-7781" in lex.vocabulary()
        # a board write of new content: the old words leave, the new ones are found
        fid = a.recall("JIRA-4411", limit=1, log=False)[0].fact.id
        f = sw.board.get(fid)
        sw.board.cas(fid, f.version, content="JIRA-4411 is closed: idempotency keys shipped.")
        assert a.recall("idempotency", limit=1, log=False, mode="lexical")[0].fact.id == fid
        assert "double" not in sw.index.lexical_for(sw.refresh()).vocabulary()
        # erasure: the only-evidence fact and its words leave the index
        sw.forget(agent="mallory")
        state = sw.refresh()
        assert not any("ZQX" in f.content for f in state.facts.values())
        got = sw.agent("asker").recall("ZQX-7781 mal-01", limit=5, log=False)
        assert not any("ZQX" in h.fact.content for h in got)
        vocab = sw.index.lexical_for(sw.refresh()).vocabulary()
        assert not {"zqx-7781", "zqx", "mal-01", "mallory"} & vocab


def _ranking(hits: list) -> list[tuple[str, float]]:
    return [(h.fact.id, round(h.relevance, 9)) for h in hits]


def test_replay_from_a_checkpoint_ranks_as_replay_from_the_start(tmp_path: Path) -> None:
    queries = ["ORA-00942", "invoices.py portal", "gateway header regression", "yen rounding"]
    with _swarm(tmp_path, "hash") as sw:
        for q in queries:  # the lexical index is built now, then kept current
            sw.agent("asker").recall(q, log=False)
        sw.checkpoint()
        sw.agent("data-3").share("ORA-00942 also breaks the hourly export since the rename.")
        sw.agent("plat-3").share("API gateway v2.15.0 adds gRPC transcoding, still in canary.")
        sw.synthesize()
        live = {q: _ranking(sw.agent("asker").recall(q, log=False)) for q in queries}
        log_path = tmp_path
    with Swarm.open(log_path) as reopened:  # from the checkpoint (vectors mapped)
        again = {q: _ranking(reopened.agent("asker").recall(q, log=False)) for q in queries}
        scratch = state_at(reopened.log, from_start=True)
        index = FactIndex(reopened.embedder)
        fresh = {}
        for q in queries:
            vec = reopened.embedder.embed([q])[0]
            fresh[q] = _ranking(recall(scratch, index, vec, RecallQuery(limit=5, text=q)))
    assert live == again == fresh
    assert len(live["ORA-00942"]) >= 2  # the fact after the checkpoint is found too


def test_a_checkpoint_carries_the_lexical_index_and_a_bad_file_is_not_used(
    tmp_path: Path,
) -> None:
    queries = ["ORA-00942 export", "JIRA-4412", "gateway v2.15.0"]
    with _swarm(tmp_path, "hash") as sw:
        sw.checkpoint()
        sw.agent("data-3").share("ORA-00942 also breaks the hourly export since the rename.")
        sw.agent("pay-5").share("JIRA-4412 is fixed by rounding yen to whole units.")
        sw.synthesize()
        want = {q: _ranking(sw.agent("a").recall(q, log=False)) for q in queries}
    with Swarm.open(tmp_path) as reopened:  # read from the checkpoint, then the tail
        got = {q: _ranking(reopened.agent("a").recall(q, log=False)) for q in queries}
        lex = reopened.index.lexical
        assert lex is not None and lex.frozen > 0
    assert got == want
    (side,) = [p for p in tmp_path.rglob("lex-*.bin")]
    data = bytearray(side.read_bytes())
    data[-5] ^= 0xFF  # a flipped byte: the checkpoint's digest no longer holds
    side.write_bytes(bytes(data))
    with Swarm.open(tmp_path) as reopened:
        got = {q: _ranking(reopened.agent("a").recall(q, log=False)) for q in queries}
        lex = reopened.index.lexical
        assert lex is not None and lex.frozen == 0  # built from the facts instead
    assert got == want
