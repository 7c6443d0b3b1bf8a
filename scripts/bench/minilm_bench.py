"""The real embedder in a synthesizer pass (synthesizer-load work): MiniLMEmbedder.embed over 2,000
memories beside raw onnxruntime on the same model and texts, same process, interleaved.

    .venv/bin/python scripts/bench/minilm_bench.py [--texts 2000] [--rounds 3]

Raw: the tokenizer's ``encode_batch`` and one ``InferenceSession.run`` per 32 texts of
similar length (the same session options: one thread), nothing else — the floor any
embedding of these texts pays. MiniLMEmbedder adds its pooling over real tokens and the
normalisation. Also timed: a worker pass of 2,000 memories on an empty minilm swarm
(embedding in one batch before the append, outside the log's lock and the lease check).
Needs the ``embed`` extra.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import sentence


def raw_run(texts: list[str], emb: object) -> float:
    """Seconds of tokenizer + onnxruntime alone over ``texts`` (batches of 32 by length)."""
    tok, sess = emb._tokenizer, emb._session  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    ids = [e.ids for e in tok.encode_batch(texts)]
    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    for lo in range(0, len(order), 32):
        batch = [ids[i] for i in order[lo : lo + 32]]
        width = max(len(t) for t in batch)
        tokens = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(tokens)
        for r, t in enumerate(batch):
            tokens[r, : len(t)] = t
            mask[r, : len(t)] = 1
        feeds = {"input_ids": tokens, "attention_mask": mask, "token_type_ids": tokens * 0}
        sess.run(None, feeds)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from synthesizer.search.minilm import MiniLMEmbedder

    rng = random.Random(25)
    texts = [sentence(rng, i) for i in range(args.texts)]
    emb = MiniLMEmbedder()
    emb.embed(texts[:8])  # load the model
    ours, raw = [], []
    for _ in range(args.rounds):
        raw.append(raw_run(texts, emb))
        t0 = time.perf_counter()
        emb.embed(texts)
        ours.append(time.perf_counter() - t0)
    r, o = min(raw), min(ours)
    print(f"raw onnxruntime: {len(texts) / r:.0f} texts/s ({r:.2f} s)")
    print(f"MiniLMEmbedder.embed: {len(texts) / o:.0f} texts/s ({o:.2f} s); ratio {r / o:.2f}x raw")

    from swarmlog import Event, open_log
    from synthesizer.config import SynthConfig
    from synthesizer.worker.synth import Synthesizer

    work = Path(tempfile.mkdtemp(prefix="swarmlog-minilm-"))
    try:
        log = open_log(work / "s")
        w = Synthesizer(log, config=SynthConfig(embedder="minilm"))
        log.append_many(
            [Event(agent="a", type="memory.shared", body={"content": t}) for t in texts]
        )
        w.catch_up()
        t0 = time.perf_counter()
        n = w.decide_pending()
        dt = time.perf_counter() - t0
        print(
            f"worker pass: {n} decisions in {dt:.2f} s ({n / dt:.0f}/s); embedding alone {o:.2f} s"
        )
        log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
