"""SwarmStore (integrations work): a differential test against LangGraph's own InMemoryStore over
seeded random operations, plus sharing between two stores on one root, async methods,
conditional puts, index fields and TTL."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from swarmlog import open_log
from synthesizer.integrations.langgraph import ItemConflict, SwarmStore
from synthesizer.swarm import Swarm

pytestmark = pytest.mark.timeout(300)

WORDS = ["cache", "login", "deploy", "flaky", "ttl", "arm64", "runner", "db", "token", "queue"]


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic toy embedding: word counts over WORDS plus a length feature."""
    out = []
    for t in texts:
        toks = t.split()
        out.append([float(toks.count(w)) for w in WORDS] + [len(toks) / 10.0])
    return out


INDEX: dict[str, Any] = {"dims": len(WORDS) + 1, "embed": embed, "fields": ["text"]}


class ReferenceStore(InMemoryStore):
    """InMemoryStore, except that a namespace exists only while it holds items.

    InMemoryStore keeps (and lists) namespaces a get touched or a delete emptied
    (langgraph #8734); SwarmStore never lists those, so the reference drops them.
    """

    def _prune(self) -> None:
        for ns in [ns for ns, items in self._data.items() if not items]:
            del self._data[ns]

    def _apply_put_ops(self, put_ops: Any) -> None:
        self._prune()
        super()._apply_put_ops(put_ops)
        self._prune()


NAMESPACES = [
    ("a",),
    ("a", "x"),
    ("a", "y"),
    ("a", "x", "z"),
    ("b",),
    ("b", "x"),
    ("c", "y", "z"),
]
KEYS = [f"k{i}" for i in range(6)]


class Gen:
    """Seeded random operations (texts unique, so InMemoryStore's batch embed works)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.n = 0

    def value(self) -> dict[str, Any]:
        r = self.r
        self.n += 1
        text = " ".join(r.choices(WORDS, k=r.randint(1, 5))) + f" n{self.n}"
        v: dict[str, Any] = {"text": text, "n": r.randint(0, 9), "tag": r.choice(["red", "blue"])}
        if r.random() < 0.5:
            v["meta"] = {"color": r.choice(["green", "grey"]), "size": r.randint(1, 3)}
        if r.random() < 0.3:
            v["list"] = [r.randint(0, 2) for _ in range(r.randint(0, 2))]
        return v

    def filter(self) -> dict[str, Any] | None:
        r = self.r
        return r.choice(
            [
                None,
                None,
                {"tag": r.choice(["red", "blue"])},
                {"n": {"$gt": r.randint(0, 9)}},
                {"n": {"$gte": r.randint(0, 5), "$lte": r.randint(4, 9)}},
                {"n": {"$lt": r.randint(0, 9)}},
                {"n": {"$ne": r.randint(0, 9)}},
                {"n": {"$eq": r.randint(0, 9)}},
                {"meta": {"color": r.choice(["green", "grey"])}},
                {"tag": "red", "n": {"$gte": 3}},
                {"list": [0, 1]},
                {"missing": {"$eq": None}},
            ]
        )

    def prefix(self) -> tuple[str, ...]:
        ns = self.r.choice(NAMESPACES)
        return ns[: self.r.randint(0, len(ns))]

    def op(self) -> Any:
        r = self.r
        x = r.random()
        ns, key = r.choice(NAMESPACES), r.choice(KEYS)
        if x < 0.38:
            return PutOp(ns, key, self.value(), index=r.choice([None, ["text"]]))
        if x < 0.48:
            return PutOp(ns, key, None)
        if x < 0.62:
            return GetOp(ns, key)
        if x < 0.88:
            return SearchOp(
                self.prefix(),
                filter=self.filter(),
                limit=r.randint(1, 6),
                offset=r.choice([0, 0, 1, 3]),
                query=r.choice([None, " ".join(r.choices(WORDS, k=2))]),
            )
        conds = []
        if r.random() < 0.6:
            p = list(r.choice(NAMESPACES)[: r.randint(1, 2)])
            if r.random() < 0.3:
                p[0] = "*"
            conds.append(MatchCondition("prefix", tuple(p)))
        if r.random() < 0.4:
            conds.append(MatchCondition("suffix", (r.choice(["x", "y", "z", "*"]),)))
        return ListNamespacesOp(
            tuple(conds) or None,
            max_depth=r.choice([None, None, 1, 2]),
            limit=r.randint(1, 10),
            offset=r.choice([0, 0, 1, 2]),
        )


def norm(result: Any) -> Any:
    """What must agree: items as (namespace, key, value[, score]); timestamps ignored."""
    if result is None:
        return None
    if isinstance(result, list):
        return [norm(r) for r in result]
    if isinstance(result, tuple):
        return result
    d = (result.namespace, result.key, result.value)
    score = getattr(result, "score", "n/a")
    return (*d, None if score is None else score if score == "n/a" else round(score, 9))


def run_both(
    swarm: SwarmStore, ref: InMemoryStore, ops: list[Any], seen: dict[str, int] | None = None
) -> None:
    got, want = swarm.batch(ops), ref.batch(ops)
    assert norm(got) == norm(want), ops
    for op, res in zip(ops, got, strict=True):  # what the run exercised
        if seen is not None and res:
            kind = type(op).__name__
            if isinstance(op, SearchOp) and any(r.score is not None for r in res):
                kind = "ScoredSearch"
            seen[kind] = seen.get(kind, 0) + 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_differential_against_in_memory_store(tmp_path: Path, seed: int) -> None:
    swarm = SwarmStore(tmp_path / "swarm", index=INDEX)
    ref = ReferenceStore(index=INDEX)
    gen = Gen(seed)
    done = 0
    seen: dict[str, int] = {}
    try:
        while done < 600:
            if gen.r.random() < 0.1:  # a batch of several ops, one put per key
                ops, keys = [], set()
                for _ in range(gen.r.randint(2, 6)):
                    op = gen.op()
                    if isinstance(op, PutOp):
                        if (op.namespace, op.key) in keys:
                            continue
                        keys.add((op.namespace, op.key))
                    ops.append(op)
            else:
                ops = [gen.op()]
            run_both(swarm, ref, ops, seen)
            done += len(ops)
        # the run hit items: gets found some, searches (also ranked ones) and listings too
        for kind in ("GetOp", "SearchOp", "ScoredSearch", "ListNamespacesOp"):
            assert seen.get(kind, 0) >= 20, seen
        # the end state agrees too: every item, and every namespace
        everything = [SearchOp((), limit=1000), ListNamespacesOp(limit=1000)]
        run_both(swarm, ref, everything)
        assert swarm.list_namespaces(limit=1000), "the random run left no items"
        # ... and a fresh store replaying the log sees the same
        again = SwarmStore(tmp_path / "swarm", index=INDEX)
        assert norm(again.batch(everything)) == norm(ref.batch(everything))
        again.close()
    finally:
        swarm.close()


def test_public_methods_agree_with_in_memory_store(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", index=INDEX) as s:
        ref = ReferenceStore(index=INDEX)
        for st in (s, ref):
            st.put(("docs", "u1"), "a", {"text": "cache ttl", "n": 1})
            st.put(("docs", "u2"), "b", {"text": "login flaky", "n": 5})
            st.put(("docs", "u1"), "c", {"text": "deploy queue", "n": 7})
            st.delete(("docs", "u2"), "b")
            st.delete(("docs", "u2"), "never")
        assert norm(s.get(("docs", "u1"), "a")) == norm(ref.get(("docs", "u1"), "a"))
        assert s.get(("docs", "u2"), "b") is None
        assert norm(s.search(("docs",), query="cache")) == norm(
            ref.search(("docs",), query="cache")
        )
        assert norm(s.search(("docs",), filter={"n": {"$gt": 2}})) == norm(
            ref.search(("docs",), filter={"n": {"$gt": 2}})
        )
        assert s.list_namespaces() == [("docs", "u1")]
        assert s.list_namespaces(prefix=("docs", "*")) == [("docs", "u1")]
        plain = InMemoryStore()  # langgraph #8734: it lists the namespace a delete emptied
        plain.put(("docs", "u2"), "b", {"n": 5})
        plain.delete(("docs", "u2"), "b")
        assert plain.list_namespaces() == [("docs", "u2")]


def test_namespaces_validated_as_langgraph_does(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s") as s:
        for bad in [(), ("langgraph", "x"), ("a.b",), ("",), ("a", 3)]:
            with pytest.raises(InvalidNamespaceError):
                s.put(bad, "k", {"v": 1})  # type: ignore[arg-type]
        with pytest.raises(InvalidNamespaceError):
            s.batch([PutOp(("a.b",), "k", {"v": 1})])
        with pytest.raises(InvalidNamespaceError):
            s.batch([PutOp((), "k", {"v": 1})])
        with pytest.raises(InvalidNamespaceError):
            s.search(("a.b",))
        with pytest.raises(InvalidNamespaceError):
            s.list_namespaces(prefix=("x.y",))
        with pytest.raises(ValueError, match="operator"):
            s.put(("a",), "k", {"v": 1})
            s.search(("a",), filter={"v": {"$in": [1]}})
        assert s.list_namespaces() == [("a",)]


def test_a_second_store_on_the_same_root_sees_the_first_ones_items(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with SwarmStore(root, index={"fields": ["text"]}) as one:
        one.put(("team", "notes"), "n1", {"text": "the cache TTL is five minutes"})
        with SwarmStore(root, index={"fields": ["text"]}) as two:
            item = two.get(("team", "notes"), "n1")
            assert item is not None and item.value == {"text": "the cache TTL is five minutes"}
            two.put(("team", "notes"), "n2", {"text": "login test flaky on CI"})
        # the swarm's own (configured) embedder answers semantic queries (no "embed")
        with Swarm.open(root) as sw:
            assert one.space == f"swarm:{sw.embedder.id}"
        hits = one.search(("team",), query="flaky login test")
        assert [h.key for h in hits][:1] == ["n2"] and hits[0].score is not None
        assert hits[0].score > hits[1].score


def test_a_store_in_another_process_shares_the_items(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with SwarmStore(root) as mine:
        mine.put(("p",), "from-parent", {"v": 1})
        script = textwrap.dedent(
            f"""
            from synthesizer.integrations.langgraph import SwarmStore
            s = SwarmStore({str(root)!r})
            assert s.get(("p",), "from-parent").value == {{"v": 1}}
            s.put(("p",), "from-child", {{"v": 2}})
            s.close()
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        item = mine.get(("p",), "from-child")
        assert item is not None and item.value == {"v": 2}
        assert [i.key for i in mine.search(("p",))] == ["from-parent", "from-child"]


def test_async_methods(tmp_path: Path) -> None:
    async def main() -> None:
        with SwarmStore(tmp_path / "s", index=INDEX) as s:
            await s.aput(("a",), "k", {"text": "cache ttl", "n": 3})
            await s.aput(("a", "b"), "k2", {"text": "login", "n": 4})
            item = await s.aget(("a",), "k")
            assert item is not None and item.value["n"] == 3
            hits = await s.asearch(("a",), query="cache", limit=1)
            assert [h.key for h in hits] == ["k"]
            assert await s.alist_namespaces(max_depth=1) == [("a",)]
            got = await s.abatch([GetOp(("a", "b"), "k2"), PutOp(("a",), "k", None)])
            assert got[0] is not None and got[0].key == "k2" and got[1] is None
            assert await s.aget(("a",), "k") is None
            v = s.version(("a", "b"), "k2")
            await s.adelete(("a", "b"), "k2", expected_version=v)
            assert await s.alist_namespaces() == []
            with pytest.raises(ItemConflict):
                await s.aput(("a",), "k", {"n": 1}, expected_version=v)

    asyncio.run(main())


def test_conditional_put_conflicts_on_a_stale_version(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s") as s:
        s.put(("cfg",), "limits", {"max": 1}, expected_version=0)  # create-if-absent
        item = s.get(("cfg",), "limits")
        assert item is not None and item.version == s.version(("cfg",), "limits") > 0
        with pytest.raises(ItemConflict) as e:
            s.put(("cfg",), "limits", {"max": 9}, expected_version=0)
        assert e.value.actual == item.version
        s.put(("cfg",), "limits", {"max": 2}, expected_version=item.version)
        newer = s.get(("cfg",), "limits")
        assert newer is not None and newer.version > item.version
        with pytest.raises(ItemConflict, match=f"version {newer.version}") as e:
            s.put(("cfg",), "limits", {"max": 3}, expected_version=item.version)
        assert e.value.expected == item.version and e.value.actual == newer.version
        with pytest.raises(ItemConflict):
            s.delete(("cfg",), "limits", expected_version=item.version)
        final = s.get(("cfg",), "limits")
        assert final is not None and final.value == {"max": 2}  # nothing was overwritten
        with pytest.raises(ValueError, match="expected_version"):
            s.put(("cfg",), "limits", {"max": 4}, expected_version=-1)
        # versions survive a reopen (they are the log's)
        with SwarmStore(tmp_path / "s") as again:
            it = again.get(("cfg",), "limits")
            assert it is not None and it.version == newer.version


def test_index_fields_and_index_false(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", index={**INDEX, "fields": ["text"]}) as s:
        s.put(("d",), "plain", {"text": "queue"}, index=False)
        s.put(("d",), "tags", {"text": "x", "tags": ["db", "cache ttl"]}, index=["tags[*]"])
        s.put(("d",), "text", {"text": "cache cache ttl"})
        hits = s.search(("d",), query="cache ttl")
        scored = [(h.key, h.score) for h in hits]
        assert scored[-1] == ("plain", None)  # not indexed: after the scored ones, unscored
        assert {k for k, _ in scored[:2]} == {"tags", "text"}
        # re-put without index: the old vectors go
        s.put(("d",), "tags", {"text": "x"}, index=False)
        assert [h.score for h in s.search(("d",), query="cache ttl") if h.key == "tags"] == [None]


def test_vectors_of_another_embedder_are_not_mixed_in(tmp_path: Path) -> None:
    root = tmp_path / "s"
    same_width = {"dims": 384, "embed": lambda texts: [[1.0] * 384 for _ in texts]}
    with SwarmStore(root, index=INDEX) as s:
        s.put(("d",), "toy", {"text": "cache ttl"})
    with SwarmStore(root, index={**same_width, "fields": ["text"]}) as s:
        s.put(("d",), "flat", {"text": "cache ttl"})
    with SwarmStore(root, index={"fields": ["text"]}) as s:  # the configured embedder
        s.put(("d",), "own", {"text": "cache ttl"})
        hits = s.search(("d",), query="cache ttl")
        scored = [(h.key, h.score is not None) for h in hits]
        assert scored == [("own", True), ("toy", False), ("flat", False)]


def test_ttl_expires_items_and_reads_refresh_it(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", ttl={"default_ttl": 60.0}) as s:
        s.put(("t",), "gone", {"v": 1}, ttl=1e-6)  # 60 microseconds
        s.put(("t",), "kept", {"v": 2})
        time.sleep(0.01)
        assert s.get(("t",), "gone") is None
        assert [i.key for i in s.search(("t",))] == ["kept"]
        assert s.list_namespaces() == [("t",)]
        v = s.version(("t",), "kept")
        before = s.view.get(("t",), "kept", 0.0)
        assert before is not None and before.expires_at is not None
        exp = before.expires_at
        time.sleep(0.01)
        s.get(("t",), "kept")
        after = s.view.get(("t",), "kept", 0.0)
        assert after is not None and after.expires_at is not None and after.expires_at > exp
        assert s.version(("t",), "kept") == v  # a read never changes the version
        s.get(("t",), "kept", refresh_ttl=False)
        assert s.view.get(("t",), "kept", 0.0).expires_at == after.expires_at  # type: ignore[union-attr]
        for bad in (0, -1.0, float("nan")):
            with pytest.raises(ValueError, match="ttl"):
                s.put(("t",), "bad", {"v": 3}, ttl=bad)
        s.put(("t",), "forever", {"v": 4}, ttl=None)
        it = s.view.get(("t",), "forever", 0.0)
        assert it is not None and it.expires_at is None


@pytest.mark.slow
def test_conditional_puts_from_racing_processes_lose_no_increment(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with SwarmStore(root) as s:
        s.put(("c",), "counter", {"n": 0}, expected_version=0)
    script = textwrap.dedent(
        f"""
        from synthesizer.integrations.langgraph import ItemConflict, SwarmStore
        s = SwarmStore({str(root)!r})
        conflicts = 0
        for _ in range(25):
            while True:
                it = s.get(("c",), "counter")
                new = {{"n": it.value["n"] + 1}}
                try:
                    s.put(("c",), "counter", new, expected_version=it.version)
                    break
                except ItemConflict:
                    conflicts += 1
        print(conflicts)
        s.close()
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    with SwarmStore(root) as s:
        item = s.get(("c",), "counter")
        assert item is not None and item.value == {"n": 75}


def test_the_store_leaves_the_swarm_log_valid(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", index=INDEX) as s:
        s.put(("a",), "k", {"text": "cache", "n": 1})
        s.delete(("a",), "k")
    with open_log(tmp_path / "s") as log:
        assert log.verify().ok
        assert [e.type for e in log.read()] == ["store.item.put", "store.item.deleted"]
