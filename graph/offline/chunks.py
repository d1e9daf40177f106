"""Chunks put back together: a document the reader sees whole as one passage, and a run of
neighbouring chunks of one document as one (a table cut between two chunks is whole again).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph.offline.params import PARAMS
from graph.offline.units import table_cells
from graph.protocols import EvidenceItem

_CHUNK_RE = re.compile(r"^(?P<doc>.+)-(?P<index>\d+)$")


def whole_documents(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The documents read whole (every chunk the reader may see is in the evidence), each as
    one passage: its chunks in order, the text two neighbours share said once."""
    parts: dict[str, list[tuple[int, EvidenceItem]]] = {}
    for item in items:
        m = _CHUNK_RE.match(item.chunk_id or "")
        if item.whole_document and m:
            parts.setdefault(m.group("doc"), []).append((int(m.group("index")), item))
    out = []
    for chunks in parts.values():
        chunks.sort(key=lambda x: x[0])
        out.append(_run_passage([item for _, item in chunks], table_header=""))
    return out


def neighbours_joined(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """Each run of two or more neighbouring chunks of one document in the evidence, as one
    passage (a table cut between chunk 3 and chunk 4 is whole again when both were found)."""
    parts: dict[str, dict[int, EvidenceItem]] = {}
    for item in items:
        m = _CHUNK_RE.match(item.chunk_id or "")
        if m and not item.whole_document:
            parts.setdefault(m.group("doc"), {})[int(m.group("index"))] = item
    out = []
    for chunks in parts.values():
        run: list[EvidenceItem] = []
        for index in sorted(chunks):
            if run and index - 1 not in chunks:
                out += [_run_passage(run)] if len(run) > 1 else []
                run = []
            run.append(chunks[index])
        out += [_run_passage(run)] if len(run) > 1 else []
    return out


def _run_passage(run: Sequence[EvidenceItem], **update: str) -> EvidenceItem:
    """Neighbouring chunks, in order, as one passage: the first one's, with their joined text."""
    text = run[0].text
    for item in run[1:]:
        text = _joined(text, item.text)
    return run[0].model_copy(update={"text": text, **update})


def _joined(a: str, b: str) -> str:
    """Two neighbouring chunks as one text: their overlap once; a table cut between them
    stays one block."""
    for k in range(min(len(a), len(b)), PARAMS.chunk_overlap_chars - 1, -1):
        if a.endswith(b[:k]):
            return a + b[k:]
    last, first = a.rstrip().rsplit("\n", 1)[-1], b.lstrip().split("\n", 1)[0]
    rows = len(table_cells(last)) >= 2 and len(table_cells(first)) >= 2
    return f"{a.rstrip()}{chr(10) if rows else chr(10) * 2}{b.lstrip()}"
