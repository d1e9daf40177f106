"""Scoring functions of the evaluation: evidence recall by hop groups, EM/F1, abstention.

Pure functions over plain lists and strings, so they are unit-tested on hand-made cases.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

from ingest.lang import has_cjk

RECALL_BUDGETS = (5, 10, 20)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_ZH_PUNCT = "，。！？；：、“”‘’（）《》【】—…·「」『』〈〉"
_ABSTAIN_RE = re.compile(
    r"not enough|insufficient|cannot (?:be )?(?:answer|determine|find)|could not find|"
    r"no relevant|still missing|does not (?:say|state|mention)|don't know|do not know|"
    r"证据不足|无法回答|无法确定|没有找到|未找到|缺少|不知道|无法从",
    re.IGNORECASE,
)


def groups_covered(groups: Sequence[Sequence[str]], retrieved: Sequence[str]) -> list[bool]:
    """Per gold group (hop or answer part): is any of its acceptable ids retrieved?"""
    got = set(retrieved)
    return [any(g in got for g in group) for group in groups]


def recall_at(groups: Sequence[Sequence[str]], ranked_ids: Sequence[str], budget: int) -> float:
    """Share of gold groups covered by the first `budget` evidence chunks (1.0 if no groups)."""
    if not groups:
        return 1.0
    covered = groups_covered(groups, list(ranked_ids)[:budget])
    return sum(covered) / len(covered)


def all_covered(groups: Sequence[Sequence[str]], ranked_ids: Sequence[str], budget: int) -> bool:
    return all(groups_covered(groups, list(ranked_ids)[:budget]))


def hop_recall(
    groups: Sequence[Sequence[str]], ranked_ids: Sequence[str], budget: int, which: int
) -> float | None:
    """Recall of one hop (0 = first, -1 = last); None when the question has no groups."""
    if not groups:
        return None
    return 1.0 if groups_covered([groups[which]], list(ranked_ids)[:budget])[0] else 0.0


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation or articles, single spaces.

    Chinese keeps its characters and drops full-width punctuation and all whitespace.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if ch not in string.punctuation and ch not in _ZH_PUNCT)
    if has_cjk(text):
        return re.sub(r"\s+", "", text)
    text = _ARTICLES_RE.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    """Words for English; characters for Chinese (Latin words inside Chinese stay whole)."""
    if not has_cjk(text):
        return normalize_answer(text).split()
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if ch in string.punctuation or ch in _ZH_PUNCT else ch for ch in text)
    return re.findall(r"[a-z0-9]+|\S", text)


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return 1.0 if any(pred == normalize_answer(g) for g in golds if g) else 0.0


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """Best token F1 against any gold answer (character-level for Chinese)."""
    best = 0.0
    pred = answer_tokens(prediction)
    for gold in golds:
        ref = answer_tokens(gold)
        if not pred or not ref:
            continue
        common = sum((Counter(pred) & Counter(ref)).values())
        if common == 0:
            continue
        precision, recall = common / len(pred), common / len(ref)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains_answer(
    prediction: str, golds: Sequence[str], parts: Sequence[Sequence[str]] | None = None
) -> float:
    """1.0 if the answer text contains a gold answer; with `parts`, every part must appear."""
    pred = normalize_answer(prediction)
    if parts:
        return (
            1.0
            if all(any(normalize_answer(alt) in pred for alt in part if alt) for part in parts)
            else 0.0
        )
    return 1.0 if any(normalize_answer(g) and normalize_answer(g) in pred for g in golds) else 0.0


def abstained(answer: str, enough: bool | None = None) -> bool:
    """The system declined or said the evidence is short (its verdict, else the wording)."""
    if enough is False:
        return True
    return bool(_ABSTAIN_RE.search(answer or ""))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return float(ordered[index])
