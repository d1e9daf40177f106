"""Evaluation datasets: NAME.corpus.jsonl + NAME.questions.jsonl (see shared/eval/dev/README.md)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str


@dataclass
class Question:
    id: str
    question: str
    answer: str
    aliases: list[str]
    groups: list[list[str]]
    decomposition: list[str] = field(default_factory=list)
    decomposition_answers: list[str] = field(default_factory=list)
    answer_parts: list[list[str]] = field(default_factory=list)
    type: str = ""
    lang: str = "en"

    @property
    def golds(self) -> list[str]:
        return [self.answer, *self.aliases]

    @property
    def supporting_ids(self) -> set[str]:
        return {pid for group in self.groups for pid in group}


@dataclass
class Dataset:
    name: str
    lang: str
    passages: list[Passage]
    questions: list[Question]
    corpus_checksum: str


def resolve_prefix(prefix: str | Path) -> tuple[Path, Path]:
    """The corpus and questions files of a path prefix ('dir/musique_en' or either file)."""
    text = str(prefix)
    for suffix in (".corpus.jsonl", ".questions.jsonl"):
        text = text.removesuffix(suffix)
    corpus, questions = Path(f"{text}.corpus.jsonl"), Path(f"{text}.questions.jsonl")
    for path in (corpus, questions):
        if not path.is_file():
            raise FileNotFoundError(f"no such dataset file: {path}")
    return corpus, questions


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc})") from None
    return rows


def _question(row: dict[str, Any]) -> Question:
    groups = row.get("supporting_groups") or [[pid] for pid in row.get("supporting_ids", [])]
    return Question(
        id=str(row["id"]),
        question=str(row["question"]),
        answer=str(row.get("answer", "")),
        aliases=[str(a) for a in row.get("answer_aliases") or []],
        groups=[[str(pid) for pid in group] for group in groups],
        decomposition=[str(d) for d in row.get("decomposition") or []],
        decomposition_answers=[str(a) for a in row.get("decomposition_answers") or []],
        answer_parts=[[str(a) for a in part] for part in row.get("answer_parts") or []],
        type=str(row.get("type", "")),
        lang=str(row.get("lang", "en")),
    )


def load_dataset(prefix: str | Path, *, limit: int | None = None) -> Dataset:
    """Load a dataset; `limit` keeps the first N questions (the corpus stays whole)."""
    corpus_path, questions_path = resolve_prefix(prefix)
    passages = [
        Passage(id=str(r["id"]), title=str(r.get("title") or ""), text=str(r["text"]))
        for r in _read_jsonl(corpus_path)
    ]
    questions = [_question(r) for r in _read_jsonl(questions_path)]
    if limit is not None:
        questions = questions[:limit]
    name = corpus_path.name.removesuffix(".corpus.jsonl")
    lang = questions[0].lang if questions else "en"
    checksum = hashlib.sha256(corpus_path.read_bytes()).hexdigest()
    return Dataset(name, lang, passages, questions, checksum)
