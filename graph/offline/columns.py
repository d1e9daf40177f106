"""Which column or field a question asks for: how much a header is what the question asks
about (header_match), the clause that holds the question word (asked_clause), and of a
table's headers or a record's labels the one asked for (asked_head). The reader reads the
cell under it; records follow a link to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.kinds import answer_type
from graph.offline.values import class_anchors
from ingest import lexicon


def header_match(question: str, header: str) -> float:
    """How much a column header is what the question asks about."""
    if not header:
        return 0.0
    terms = tx.term_set(header)
    q = tx.term_set(question)
    if not terms:
        return 0.0
    by_terms = len(terms & q) / len(terms)
    classes, asked = set(class_anchors(header)), set(class_anchors(question))
    if classes and asked and not classes & asked:  # the column of another class than the asked
        return 0.0
    if tx.has_cjk(header):
        core = re.sub(r"[（(].*?[）)]", "", header).strip()
        if core and core in question:
            return 1.0
    return by_terms


_CLAUSE_RE = re.compile(r"[，,；;。？?!！]")
_ASKING_RE = re.compile(
    r"谁|哪|什么|多少|几|何|\b(?:what|who|whom|whose|when|where|which|how)\b", re.IGNORECASE
)


def asked_clause(question: str) -> str:
    """The clause that holds the question word: what is asked, not what names the subject
    ('X 那次修复超时，我们是哪天递交申请的' asks about the filing, not the repair)."""
    clauses = [c for c in _CLAUSE_RE.split(question) if c.strip()]
    asking = [c for c in clauses if _ASKING_RE.search(c)]
    return " ".join(asking) if asking else question


def _where(asked: str, label: str, match: float = 0.99) -> int:
    """Where the asked clause names a label (-1 when it does not): the label itself, or
    `match` of its words."""
    core = re.sub(r"[（(].*?[）)]", "", label).strip()
    if not core:
        return -1
    at = asked.casefold().find(core.casefold())
    if at < 0 and header_match(asked, label) >= match:
        words = tx.term_set(label)
        at = min((asked.casefold().find(w) for w in words if w in asked.casefold()), default=-1)
    return at


def asked_head(question: str, labels: Sequence[str], match: float = 0.99) -> str:
    """Of the labels the asked clause names, the one asked for: the head of the phrase, the
    last named in Chinese ('所在医院的设备科联系人'), the first in English ('the contact for
    the site of X'). Failing that, the one label that is a named word plus a noun of the
    asked kind ('按计划哪天做' asks '计划日期'). '' when it names none."""
    asked = asked_clause(question)
    named = sorted(
        (at, label) for label in set(labels) if label and (at := _where(asked, label, match)) >= 0
    )
    if named:
        return named[-1][1] if tx.has_cjk(asked) else named[0][1]
    nouns = _KIND_NOUNS.get(answer_type(question), ())
    kinded = {label for label in set(labels) for noun in nouns if _kind_word(label, noun, asked)}
    return kinded.pop() if len(kinded) == 1 else ""


_KIND_NOUNS = {kind: tuple(nouns) for kind, nouns in lexicon.table("answer_nouns")}


def _kind_word(label: str, noun: str, asked: str) -> bool:
    """Whether a label is a word the asked clause names plus the kind's noun ('计划日期' for
    '按计划哪天'; 'Ship date' for 'when does it ship', words whole in English)."""
    if not label.casefold().endswith(noun.casefold()):
        return False
    word = label[: -len(noun)]
    if noun.isascii():
        if not word.endswith(" ") or len(word.strip()) < 3:
            return False
        return re.search(rf"\b{re.escape(word.strip())}\b", asked, re.IGNORECASE) is not None
    return len(word.strip()) >= 2 and _where(asked, word.strip()) >= 0
