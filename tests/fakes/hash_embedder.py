"""A deterministic bag-of-words embedder for tests: similar texts get similar vectors."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[A-Za-z0-9]+|[\u4e00-\u9fff]")


class HashEmbedder:
    """Hashes words (and CJK characters and their bigrams) into `dim` buckets, L2-normalised."""

    def __init__(self, dim: int = 64, name: str = "hash-embedder") -> None:
        self.dim = dim
        self.name = name
        self.calls = 0
        self.fail_queries = False  # simulate an embedding endpoint outage at search time

    def _tokens(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        cjk = [t for t in tokens if len(t) == 1 and "\u4e00" <= t <= "\u9fff"]
        return tokens + [a + b for a, b in zip(cjk, cjk[1:], strict=False)]

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for token in self._tokens(text):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0:
            vec[0] = 1.0
            return vec
        return [x / norm for x in vec]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        if self.fail_queries:
            raise RuntimeError("embedding endpoint down")
        return self._vector(text)
