"""The meaning similarity the reader and the claim check share: cosine by the store's
embedder, each passage text embedded once however often it is compared."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from hopwise import app as app_module
from hopwise.app import meaning_similarity


class CountingEmbedder:
    """Two-dimensional vectors from the text's length and its count of 'a': enough to tell
    texts apart, and every text it is asked to embed is recorded."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [[float(len(t)), float(t.count("a"))] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float(len(text)), float(text.count("a"))]


def test_no_embedder_means_no_similarity() -> None:
    assert meaning_similarity(SimpleNamespace()) is None


def test_cosine_and_each_passage_embedded_once() -> None:
    embedder = CountingEmbedder()
    similarity = meaning_similarity(SimpleNamespace(embedder=embedder))
    assert similarity is not None
    passages = ["aaaa", "bbbb", "aabb"]
    first = similarity("aaaa", passages)
    assert first[0] == pytest.approx(1.0) and first[0] > first[2] > first[1]
    again = similarity("bb", passages + ["aaaa", "cc"])  # repeats are not embedded again
    assert again[:3] == pytest.approx([similarity("bb", [p])[0] for p in passages])
    assert embedder.embedded == ["aaaa", "bbbb", "aabb", "cc"]
    assert similarity("x", []) == []


def test_the_kept_vectors_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "PASSAGE_VECTOR_CACHE", 2)
    embedder = CountingEmbedder()
    similarity = meaning_similarity(SimpleNamespace(embedder=embedder))
    assert similarity is not None
    similarity("q", ["a", "b", "c"])
    similarity("q", ["a"])  # the oldest was let go, so it is embedded again
    assert embedder.embedded == ["a", "b", "c", "a"]
