"""An offline Hopwise over a real Milvus Lite knowledge base of small documents, for tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from graph.offline import OfflineReasoner
from graph.protocols import EvidenceItem
from hopwise.app import Hopwise, open_store
from hopwise.settings import Settings
from ingest.pipeline import ingest_bytes


@contextmanager
def offline_app(
    path: Path, docs: Mapping[str, str], groups: Sequence[str] = ("all",)
) -> Iterator[Hopwise]:
    """Each named text ingested with `groups`; no model, no web, the built-in embedder off."""
    settings = Settings(data_dir=path, web_search=False, llm_base_url=None, llm_model=None,
                        embedding_base_url=None, milvus_uri=None)  # fmt: skip
    store = open_store(settings)
    try:
        for name, text in docs.items():
            ingest_bytes(text.encode(), name, store, groups=list(groups), config=settings.ingest)
        yield Hopwise(settings, store, OfflineReasoner())
    finally:
        store.close()


def evidence(n: int, text: str, source: str) -> EvidenceItem:
    """A numbered passage of `source`, as the answer step receives it."""
    return EvidenceItem(n=n, chunk_id=f"c{n}", title=source, source=source, text=text)


def offline_answer(question: str, *items: EvidenceItem) -> str:
    """The offline reasoner's whole answer text over the passages, no hops."""
    parts = OfflineReasoner().answer(question, list(items), [])
    return "".join(p for p in parts if isinstance(p, str))


def leads_with(answer: str, value: str) -> bool:
    """Whether the answer's first line gives `value` as the answer: stated ('Answer: value
    [2]'), or quoted in the unit that holds it, in bold when a span is bold (the fitted reader
    quotes when it is less sure than its `state` threshold, and bolds only above `bold`)."""
    first = answer.strip().splitlines()[0] if answer.strip() else ""
    stated = first.removeprefix("Answer:").removeprefix("答案：").strip()
    if stated.startswith(f"{value} ["):
        return True
    quoted = first.startswith(("The documents say", "文档原文"))
    return quoted and (f"**{value}**" in first if "**" in first else value in first)
