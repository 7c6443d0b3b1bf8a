"""One task's traffic: a swarm whose agents all work on the same problem.

Every statement is 6-12 words drawn from one domain's ~60 words (a greenhouse's
irrigation, made up for the benchmarks), so most memories share many words with many
live facts: the contest's candidates are many, unlike the mixed traffic of
``scale_bench.content`` where two memories rarely share more than a topic word.
A rediscovery is an earlier statement said again in other words: synonyms swapped in,
the order moved, a filler word added or dropped.

Deterministic for a given seed: every run of a script measures the same text.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from pathlib import Path

NOUNS = [
    "pump", "valve", "sensor", "tank", "hose", "nozzle", "filter", "timer", "tray",
    "seedling", "tomato", "basil", "lettuce", "root", "leaf", "soil", "nutrient", "fan",
    "vent", "heater", "lamp", "bench", "zone", "line", "pipe", "gauge", "controller",
]  # fmt: skip
VERBS = [
    "fails", "leaks", "clogs", "stops", "drifts", "floods", "overheats", "wilts",
    "needs", "drops", "rises", "resets",
]  # fmt: skip
MODS = [
    "north", "south", "morning", "night", "low", "high", "slow", "fast", "broken",
    "empty", "wet", "dry", "after", "before", "during", "every", "watering", "pressure",
    "humidity", "moisture", "flow",
]  # fmt: skip
VOCAB = NOUNS + VERBS + MODS  # 60 words

# the other words a rediscovery uses (each pair a plain English synonym or near one)
SYNONYMS = {
    "pump": "impeller", "valve": "tap", "tank": "reservoir", "hose": "tubing",
    "fails": "breaks", "leaks": "drips", "clogs": "blocks", "stops": "halts",
    "rises": "climbs", "drops": "falls", "broken": "faulty", "fast": "quick",
    "slow": "sluggish", "wet": "soaked", "dry": "parched", "night": "evening",
    "empty": "drained", "lamp": "light", "heater": "warmer", "gauge": "meter",
}  # fmt: skip
FILLERS = ["again", "today", "still", "often", "seen"]


def statement(rng: random.Random) -> str:
    """A new statement: a noun and a verb, then 4-10 more words of the domain."""
    words = [rng.choice(NOUNS), rng.choice(VERBS)]
    words += [rng.choice(VOCAB) for _ in range(rng.randint(4, 10))]
    return " ".join(words)


def reword(text: str, rng: random.Random) -> str:
    """The same finding in other words: every word with a synonym swapped, two words
    moved, one filler word added (and one word dropped when the statement is long)."""
    words = [SYNONYMS.get(w, w) for w in text.lower().split()]
    i, j = rng.randrange(len(words)), rng.randrange(len(words))
    words[i], words[j] = words[j], words[i]
    if len(words) > 8:
        del words[rng.randrange(2, len(words))]
    words.insert(rng.randrange(len(words) + 1), rng.choice(FILLERS))
    return " ".join(words)


def prefill(i: int) -> str:
    """The ``i``-th statement of the pre-filled swarm (seeded by ``i``: an agent may
    rediscover any of them without reading the log)."""
    return statement(random.Random(7_000_000 + i))


def swarm_dir(n: int) -> Path:
    """The cached one-topic swarm of ``n`` facts."""
    return Path(tempfile.gettempdir()) / f"swarmlog-onetopic-v1-{n}"


def build(n: int) -> Path:
    """A swarm of ``n`` live one-topic facts, checkpointed with its vectors (cached).

    As ``scale_bench.build``: the synthesizer's decisions for each memory written
    directly (every memory its own fact), the read path's state, not the contest's."""
    import scale_bench

    from swarmlog import Event
    from synthesizer import Swarm, SynthConfig
    from synthesizer import events as T
    from synthesizer.config import PoolConfig
    from synthesizer.state._fast import paused_gc

    path = swarm_dir(n)
    if (path / "READY").exists():
        scale_bench._checkpoint_tail(path)
        return path
    shutil.rmtree(path, ignore_errors=True)
    rng = random.Random(n)
    t0 = time.perf_counter()
    config = SynthConfig(pool=PoolConfig(capacity=2 * n + 10_000))
    with paused_gc(), Swarm.open(path, config=config) as sw:
        lease = 0
        for start in range(0, n, 5000):
            shares = [
                Event(
                    agent=f"agent{i % 8}",
                    type=T.MEMORY_SHARED,
                    body={
                        "content": prefill(i),
                        "category": rng.choice(["discovery", "decision", "warning"]),
                        "importance": rng.choice([0.2, 0.5, 0.9]),
                    },
                )
                for i in range(start, min(n, start + 5000))
            ]
            stored = sw.log.append_many(shares)
            made = [
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.FACT_CREATED,
                    key=f"f{e.seq}",
                    body={"evidence": e.seq, "signature": f"s{e.seq}", "lease": lease},
                )
                for e in stored
            ]
            made.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.SYNTH_PROGRESS,
                    key="synthesizer",
                    body={"upto": stored[-1].seq, "lease": lease},
                )
            )
            lease = sw.log.append_many(made, expect={"synthesizer": lease})[-1].seq
        sw.tick()
        sw.checkpoint()
        live = len(sw.refresh().facts)
    if live != n:
        raise SystemExit(f"one-topic swarm: built {live} live facts, expected {n}")
    (path / "READY").write_text(f"{live} facts, built in {time.perf_counter() - t0:.0f} s\n")
    return path


def memory(idx: int, k: int, rng: random.Random, sent: list[str], prefilled: int) -> str:
    """Agent ``idx``'s ``k``-th memory of one-topic traffic: mostly new statements; every
    10th a rediscovery of a pre-filled fact in other words, every 10th one of this agent's
    own earlier statements in other words, every 20th an exact repeat (other case)."""
    if k % 10 == 3 and prefilled:
        return reword(prefill(rng.randrange(prefilled)), rng)
    if sent and k % 10 == 7:
        return reword(rng.choice(sent), rng)
    if sent and k % 20 == 11:
        return rng.choice(sent).upper()
    text = statement(rng)
    sent.append(text)
    return text
