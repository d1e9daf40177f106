"""Phrase keys are built off the insert path: BM25 finds a chunk at once, its phrase keys follow
from a background step, and neither a restart nor a reindex loses them. Background work (the
phrase worker, the embedding worker) yields to searches and questions, without starving."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.offline.spans import question_spans
from ingest.busy import BusySignal
from ingest.models import Chunk
from ingest.phrases import phrase_key
from ingest.store import MilvusStore
from ingest.store.phrase_table import PhraseWorker
from ingest.vectors import EmbeddingWorker
from tests.fakes.hash_embedder import HashEmbedder
from tests.fakes.memory_store import MemoryStore

TEXTS = [
    "Colonel Pleasonton's cavalry won the Battle of Mine Creek in the autumn of 1864.",
    "After the Battle of Mine Creek, the Army of Missouri retreated south.",
    "Fort Scott supplied the Union columns with fresh horses.",
]
QUESTION = "who retreated after the battle of mine creek and where did the army of missouri go"
BATTLE, ARMY = phrase_key("Battle of Mine Creek"), phrase_key("Army of Missouri")


def chunks(doc_id: str, texts: list[str], version: int = 1) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"{doc_id}-v{version}-{i}",
            doc_id=doc_id,
            doc_version=version,
            title="Kansas campaign",
            source=f"{doc_id}.md",
            section_path=f"Kansas > {i}",
            start_char=i * 100,
            end_char=i * 100 + len(t),
            text=t,
            groups=["all"],
            checksum=f"sum-{doc_id}-{version}",
            created_at=1.0,
        )  # fmt: skip
        for i, t in enumerate(texts)
    ]


def held_worker(store: MilvusStore) -> PhraseWorker:
    """The store's phrase worker, told to wait a minute for writes to pause: what it has not
    built yet stays unbuilt until a phrase count (or build_phrases) asks it to hurry."""
    assert store.phrases is not None
    store.phrase_worker = PhraseWorker(store.phrases, store.busy, quiet_s=60, defer_s=60).start()
    return store.phrase_worker


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MilvusStore]:
    with MilvusStore(str(tmp_path / "kb.db")) as opened:
        yield opened


def test_bm25_finds_a_chunk_at_once_and_its_phrase_keys_follow(store: MilvusStore) -> None:
    held_worker(store)
    store.replace_document(chunks("kansas", TEXTS))
    assert store.search("Mine Creek cavalry", ["all"], k=1)[0].chunk_id == "kansas-v1-0"
    assert store.phrases is not None and store.phrases.count() == 0  # not built on insert
    assert not store.phrases.complete()
    assert store.build_phrases(timeout_s=60)
    assert store.phrases.complete() and store.phrases.count() == 3
    assert store.phrase_counts([BATTLE, ARMY, "fort scott"], ["all"]) == {
        BATTLE: 2, ARMY: 1, "fort scott": 1,
    }  # fmt: skip


def test_phrase_boosted_spans_match_phrases_built_inline(store: MilvusStore) -> None:
    """The question's spans from the background-built table equal those of a store that
    builds phrase keys as it writes (the in-memory one: the behaviour before the change)."""
    reference = MemoryStore()
    for kb in (store, reference):
        kb.replace_document(chunks("kansas", TEXTS))
    expected = question_spans(QUESTION, lambda keys: reference.phrase_counts(keys, ["all"]))
    assert {s.text for s in expected if s.source == "corpus"} >= {
        "battle of mine creek", "army of missouri",
    }  # fmt: skip
    store.build_phrases(timeout_s=60)
    got = question_spans(QUESTION, lambda keys: store.phrase_counts(keys, ["all"]))
    assert got == expected


def test_a_phrase_count_right_after_a_write_waits_for_its_keys(store: MilvusStore) -> None:
    held_worker(store)  # would wait a minute for writes to pause
    store.replace_document(chunks("kansas", TEXTS))
    started = time.monotonic()
    assert store.phrase_counts([BATTLE], ["all"]) == {BATTLE: 2}  # the count asked it to hurry
    assert time.monotonic() - started < 30


def test_a_restart_with_pending_phrase_work_completes_it(tmp_path: Path) -> None:
    path = str(tmp_path / "kb.db")
    with MilvusStore(path) as first:
        held_worker(first)
        first.replace_document(chunks("kansas", TEXTS))
        first.replace_document(chunks("forts", ["Fort Scott guarded the Military Road."]))
        assert first.phrases is not None and first.phrases.count() == 0
    with MilvusStore(path) as second:  # nothing built: the work left is what the table lacks
        assert second.phrases is not None and not second.phrases.complete()
        worker = second.start_phrase_worker()
        assert worker is not None
        deadline = time.monotonic() + 60
        while not second.phrases.complete() and time.monotonic() < deadline:
            time.sleep(0.05)  # no count asks it to hurry: the background step alone
        assert second.phrases.count() == 4
        assert second.phrase_counts([BATTLE, "military road"], ["all"]) == {
            BATTLE: 2, "military road": 1,
        }  # fmt: skip


def test_a_new_version_and_a_delete_take_their_phrase_keys_with_them(store: MilvusStore) -> None:
    store.replace_document(chunks("kansas", TEXTS))
    assert store.phrase_counts([BATTLE], ["all"]) == {BATTLE: 2}
    store.replace_document(
        chunks("kansas", ["Fighting at the Battle of Mine Creek ended by noon."], 2)
    )
    assert store.phrase_counts([BATTLE, ARMY], ["all"]) == {BATTLE: 1}
    assert store.phrases is not None and store.phrases.count() == 1
    store.delete_document("kansas")
    assert store.phrase_counts([BATTLE], ["all"]) == {} and store.phrases.count() == 0


def test_reindex_keeps_the_phrase_keys(store: MilvusStore) -> None:
    store.replace_document(chunks("kansas", TEXTS))
    assert store.build_phrases(timeout_s=60)
    store.phraser = "phrases-0"  # a collection built by an older extractor: reindex rebuilds it
    held_worker(store)  # nothing may be rebuilt in the background meanwhile
    done = store.reindex_format()
    assert done.rebuilt and store.index_current
    assert store.phrases is not None and store.phrases.count() == 3 and store.phrases.complete()
    assert store.phrase_counts([BATTLE], ["all"]) == {BATTLE: 2}


def test_the_phrase_worker_starts_a_batch_only_when_writes_pause(store: MilvusStore) -> None:
    """Off the insert path: while documents keep coming it waits (up to its deferral bound)."""
    assert store.phrases is not None
    worker = PhraseWorker(store.phrases, store.busy, quiet_s=0.3, defer_s=60)
    store.phrase_worker = worker.start()
    for i in range(4):
        store.replace_document(chunks(f"doc{i}", [f"Depot {i} of the Kansas Pacific line."]))
        assert store.phrases.count() == 0
    deadline = time.monotonic() + 60
    while not store.phrases.complete() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.phrases.count() == 4


# ---- background work yields to searches and questions -------------------------------------


class RecordingEmbedder(HashEmbedder):
    """Notes when each document batch was embedded."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.times: list[float] = []

    def embed_documents(self, texts):  # noqa: ANN001, ANN201
        self.times.append(time.monotonic())
        return super().embed_documents(texts)


def hold(busy: BusySignal, seconds: float) -> threading.Thread:
    """A question in flight for `seconds` (in another thread)."""
    holding = threading.Event()

    def run() -> None:
        with busy.held():
            holding.set()
            time.sleep(seconds)

    thread = threading.Thread(target=run)
    thread.start()
    holding.wait()
    return thread


def test_embedding_waits_while_a_search_holds_the_busy_signal(store: MilvusStore) -> None:
    embedder = RecordingEmbedder()
    index = store.attach_vectors(HashEmbedder(dim=16), document_embedder=embedder)
    store.replace_document(chunks("kansas", TEXTS))
    question = hold(store.busy, 0.8)
    released = time.monotonic() + 0.8
    EmbeddingWorker(index).run_once()
    question.join()
    assert embedder.times and min(embedder.times) >= released - 0.05
    assert store.busy.yields >= 1 and index.coverage().complete


def test_embedding_never_starves_behind_questions(store: MilvusStore) -> None:
    embedder = RecordingEmbedder()
    index = store.attach_vectors(HashEmbedder(dim=16), document_embedder=embedder)
    store.replace_document(chunks("kansas", TEXTS))
    store.busy.max_wait_s = 0.2  # the bound
    question = hold(store.busy, 30.0)  # a question that outlasts the whole fill
    started = time.monotonic()
    EmbeddingWorker(index).run_once()
    assert index.coverage().complete and store.busy.busy  # done while the question still ran
    assert time.monotonic() - started < 10
    assert min(embedder.times) >= started + 0.15  # it did wait (one bound) before its call
    question.join(0)  # daemon-free: let it finish in the background
    store.busy.max_wait_s = 0.0


def test_a_search_holds_the_busy_signal_while_it_runs(store: MilvusStore) -> None:
    store.replace_document(chunks("kansas", TEXTS))
    seen: list[bool] = []
    original = store.visibility_filter

    def watching() -> str:
        seen.append(store.busy.busy)
        return original()

    store.visibility_filter = watching  # type: ignore[method-assign]
    store.search("Mine Creek", ["all"])
    assert seen and all(seen) and not store.busy.busy
