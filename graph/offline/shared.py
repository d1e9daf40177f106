"""What two named things have in common: 'What trade do A and B share?', 'A and B are both
which kind of artist?'.

Each one's own sentence says what it is ('A (born 1961) is a Velmarian stage actor and glass
sculptor'; 'B is a retired Ostrelian glass sculptor and painter'). The answer is the longest
run of the same lower-case words both of them say of their subject ('glass sculptor'), stated
with both sentences cited. Nothing is stated when either has no passage of its own or they
share no such words. English only: a Chinese sentence has no spaces to take runs of words by.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.protocols import EvidenceItem

_ASKS_RE = re.compile(r"\b(?:in\s+common|both|share)\b", re.IGNORECASE)
_WH_RE = re.compile(r"\b(?:what|which)\b", re.IGNORECASE)
_YES_NO_RE = re.compile(r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can)\b", re.IGNORECASE)
_LONGEST = 4  # words in the longest shared run looked for


@dataclass(frozen=True)
class Shared:
    text: str  # the words both say ('glass sculptor')
    cited: tuple[tuple[int, str], ...]  # (citation, the sentence) of each item


def asks_shared(question: str) -> bool:
    """'What … do A and B have in common?', 'A and B are both which …?' (no yes/no question)."""
    return bool(
        not tx.has_cjk(question)
        and _ASKS_RE.search(question)
        and _WH_RE.search(question)
        and not _YES_NO_RE.match(question)
    )


_PAIR_RE = re.compile(
    r"(?:\b(?i:the)\s+)?(?P<a>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)\s*,?\s+(?:and|&)\s+(?:(?i:the)\s+)?"
    r"(?P<b>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)"
)


def named_pair(question: str) -> list[str]:
    """The two names the question joins by 'and' ('A and the B'), its spans' when it has
    them; [] when it joins no two names."""
    from graph.offline.spans import question_spans

    spans = question_spans(question)
    for one, other in zip(spans, spans[1:], strict=False):
        if re.fullmatch(r"\s*,?\s*(?:and|&)\s+(?:the\s+)?", question[one.end : other.start]):
            return [one.text, other.text]
    m = _PAIR_RE.search(question)
    if m is None or tx.is_stopword(m.group("a").lower()):
        return []
    return [m.group("a"), m.group("b")]


def shared_trait(question: str, evidence: Sequence[EvidenceItem]) -> Shared | None:
    """The words the two named things' own sentences both say of them, or None."""
    from graph.offline.answer_compare import passage_about, sentence_about

    names = named_pair(question) if asks_shared(question) else []
    if len(names) != 2:
        return None
    said: list[tuple[int, str, list[str]]] = []
    for name in names:
        passage = passage_about(name, evidence)
        sentence = sentence_about(name, passage) if passage is not None else ""
        if not sentence:
            return None
        said.append((passage.n, sentence, _described(sentence, name)))  # type: ignore[union-attr]
    asked = {w.lower() for w in re.findall(r"[A-Za-z]+", question)}
    best = _longest_shared(said[0][2], said[1][2], asked)
    if not best:
        return None
    return Shared(best, tuple((n, sentence) for n, sentence, _ in said))


def _described(sentence: str, name: str) -> list[str]:
    """The words a sentence says of its subject, lower-cased, with '|' where a run breaks:
    the name, a parenthesis, capitalised words, numbers, punctuation and function words."""
    text = re.sub(r"\([^()]*\)", " | ", sentence.replace(name, " | "))  # '(born 1961)' aside
    out: list[str] = []
    for token in re.findall(r"[A-Za-z][\w'’-]*|[^\sA-Za-z]", text):
        plain = token.lower()
        if not token[0].isalpha() or token[0].isupper() or tx.is_stopword(plain):
            out.append("|")
        else:
            out.append(plain)
    return out


def _runs(words: list[str]) -> list[tuple[int, tuple[str, ...]]]:
    """Every run of up to `_LONGEST` words no break splits, with where it starts."""
    return [
        (i, run)
        for i in range(len(words))
        for k in range(1, _LONGEST + 1)
        if len(run := tuple(words[i : i + k])) == k and "|" not in run
    ]


def _longest_shared(one: list[str], other: list[str], asked: set[str]) -> str:
    """The longest run of words both lists hold (a plural matching its singular), not made
    only of the question's own words; of equal runs, the one the first sentence says last
    (its head noun comes last: 'a breed of … dog')."""
    theirs = {tuple(tx.singular(w) for w in run) for _, run in _runs(other)}
    best: tuple[int, int, str] = (0, -1, "")
    for i, run in _runs(one):
        if tuple(tx.singular(w) for w in run) in theirs and not set(run) <= asked:
            best = max(best, (len(run), i, " ".join(run)))
    return best[2]
