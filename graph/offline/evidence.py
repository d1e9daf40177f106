"""Evidence without a model: which sentences bear on a sub-question, and whether a passage
answers it.

A passage is relevant to a sub-question when it holds at least `relevant_coverage` of the
sub-question's content terms (Chinese by whole phrases, since jieba may cut the question and
the passage differently). Only then are its best sentences kept as evidence, verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.params import PARAMS, OfflineParams
from graph.schemas import EvidenceSentence
from ingest.models import Hit


def relevance(question: str, title: str, text: str) -> float:
    """Share of the question's terms the passage holds, by words or (Chinese) by phrases:
    either way of cutting the words may be the one the passage shares. A word of the same
    relation holds a term ('employs' for 'work', lexicon relation_words.txt)."""
    question = tx.PLACEHOLDER_RE.sub(" ", question)
    passage = f"{title} {text}"
    passage_terms = tx.term_set(passage)
    terms = tx.term_set(question)
    held = sum(1 for t in terms if t in passage_terms or tx.holds_kin(t, passage, passage_terms))
    by_words = held / len(terms) if terms else 1.0
    if not tx.has_cjk(question):
        return by_words
    phrases = tx.coverage_terms(question)
    if not phrases:
        return by_words
    hit = sum(1 for t in phrases if tx.holds_kin(t, passage, passage_terms))
    return max(by_words, hit / len(phrases))


_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def answers(question: str, title: str, text: str, params: OfflineParams = PARAMS) -> bool:
    """Whether one passage can answer the question: it holds enough of its terms, every
    number it names (a year, an amount: 2021 is not 2022) and the name it is about."""
    if relevance(question, title, text) < params.relevant_coverage:
        return False
    passage = tx.fold(f"{title} {text}").casefold()
    asked = tx.PLACEHOLDER_RE.sub(" ", question)
    if any(n not in passage for n in _NUMBER_RE.findall(asked)):
        return False
    from graph.offline.spans import question_spans

    names = [tx.fold(s.text).casefold().strip('"“”《》「」『』') for s in question_spans(asked)]
    names = [n for n in names if n and not n.isdigit()]
    return not names or any(n in passage for n in names)


def heading_like(line: str) -> bool:
    """A short line without closing punctuation: a heading or title, not a statement."""
    line = line.strip()
    open_end = not re.search(r"[.!?。！？；;:：)）\]]$", line) or tx.ends_with_abbreviation(line)
    return open_end and (len(line.split()) <= 8 if not tx.has_cjk(line) else len(line) <= 20)


def best_sentences(question: str, text: str, limit: int = 2) -> list[str]:
    """The sentences sharing the most terms with the question, in text order (the first
    statement if none does)."""
    terms = tx.term_set(tx.PLACEHOLDER_RE.sub(" ", question))
    sentences = [s for s in tx.split_sentences(text) if not heading_like(s)]
    sentences = sentences or tx.split_sentences(text)
    if not sentences:
        return []
    scored = [(len(terms & tx.term_set(s)), i, s) for i, s in enumerate(sentences)]
    top = [x for x in sorted(scored, key=lambda x: (-x[0], x[1]))[:limit] if x[0] > 0]
    return [s for _, _, s in sorted(top, key=lambda x: x[1])] or sentences[:1]


def extract(
    sub_question: str, hits: Sequence[Hit], params: OfflineParams = PARAMS
) -> list[EvidenceSentence]:
    """The best sentences of each hit relevant to the sub-question, verbatim."""
    out: list[EvidenceSentence] = []
    for hit in hits:
        if relevance(sub_question, hit.title, hit.text) < params.relevant_coverage:
            continue
        for sentence in best_sentences(sub_question, hit.text, params.sentences_per_hit):
            out.append(EvidenceSentence(chunk_id=hit.chunk_id, text=sentence))
    return out


def missing_line(sub_question: str, zh: bool) -> str:
    """'Not found: when was the second extension approved' — the sub-question in words."""
    body = tx.PLACEHOLDER_RE.sub(
        lambda m: "(the earlier answer)" if not zh else "（上一步的答案）", sub_question
    )
    body = body.strip().rstrip("?？。.")
    first = body.split()[0] if body.split() else ""
    if not zh and first.lower() in tx.EN_QUESTION_WORDS | tx.EN_STOPWORDS:
        body = first.lower() + body[len(first) :]  # 'When was …' -> 'when was …'; names stay
    return body


def nearness(sentence: str, span: str, terms: set[str], *, after_bonus: float = 1.0) -> float:
    """1 when the span is next to one of the terms, falling with distance: words apart in
    English, characters in Chinese (no spaces). `after_bonus` favours a span right after a
    term ('directed by X', '采购方为X')."""
    start = sentence.find(span)
    if start < 0 or not terms:
        return 0.0
    if tx.has_cjk(span) or (tx.has_cjk(sentence) and " " not in sentence.strip()):
        places = [
            (m.start(), m.end())
            for t in terms
            if tx.has_cjk(t) and len(t) >= 2  # one character matches everywhere
            for m in re.finditer(re.escape(t), sentence)
        ]
        if not places:
            return 0.0
        end = start + len(span)
        gap = min(min(abs(start - b), abs(end - a)) for a, b in places)
        after = any(0 <= start - b <= 2 for _, b in places)
        return (after_bonus if after else 1.0) / max(1, gap / 2)
    words = re.findall(r"\S+", sentence)
    positions = [i for i, w in enumerate(words) if set(tx.tokenize(w)) & terms]
    if not positions:
        return 0.0
    first = len(re.findall(r"\S+", sentence[:start]))
    last = first + max(0, len(span.split()) - 1)
    gap = min(min(abs(first - p), abs(last - p)) for p in positions)
    after = any(0 < first - p <= 2 for p in positions)
    return (after_bonus if after else 1.0) / max(1, gap)
