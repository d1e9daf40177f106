"""The spans of a question that must stay whole: quoted titles, names, and the knowledge
base's own phrases (its titles, headings, table headers, names; ingest/phrases.py).

A span is masked as one token (`⟨k⟩`) while the question's structure is read, so no split
can cut a title ("Al gran sole carico d'amore") or a name with "and" in it ("Levy and
Company") apart, and every rule works the same whatever the entity is called.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from graph import text as tx
from graph.offline.params import PARAMS, OfflineParams
from graph.protocols import PhraseLookup

MASK_RE = re.compile(r"⟨(\d+)⟩")
_WORD_RE = re.compile(r"[\w'’.\-&]+")
_EDGE_STOP = tx.EN_STOPWORDS | tx.EN_QUESTION_WORDS


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str
    source: str  # quoted | name | corpus


def no_phrases(keys: Sequence[str]) -> Mapping[str, int]:
    """The lookup of a knowledge base without a phrase table."""
    return {}


def question_spans(
    question: str, lookup: PhraseLookup | None = None, params: OfflineParams = PARAMS
) -> list[Span]:
    """Non-overlapping spans, in order: the knowledge base's phrases first (longest), then
    quoted titles and capitalised or tagged names that no corpus phrase covers."""
    corpus = _corpus_spans(question, lookup or no_phrases, params)
    found = corpus + _quoted(question) + _names(question)
    chosen: list[Span] = []
    for span in sorted(found, key=lambda s: (-(s.source == "quoted"), -(s.end - s.start))):
        if not any(span.start < c.end and c.start < span.end for c in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def mask(question: str, spans: Sequence[Span]) -> str:
    """The question with span k written as `⟨k⟩`."""
    out, pos = [], 0
    for k, span in enumerate(spans):
        out += [question[pos : span.start], f"⟨{k}⟩"]
        pos = span.end
    out.append(question[pos:])
    return "".join(out)


def unmask(text: str, spans: Sequence[Span]) -> str:
    return MASK_RE.sub(lambda m: spans[int(m.group(1))].text, text)


def _quoted(question: str) -> list[Span]:
    out = []
    for m in re.finditer(r"[\"“《「『]([^\"”》」』]{2,80})[\"”》」』]", question):
        out.append(Span(m.start(), m.end(), m.group(0), "quoted"))
    return out


def _names(question: str) -> list[Span]:
    """Capitalised spans (with a short parenthetical) and Chinese names and organisations."""
    out: list[Span] = []
    names = [tx.with_parenthetical(s, question) for s in tx.capitalized_spans(question)]
    if tx.has_cjk(question):
        names += tx.cjk_org_names(question) + tx.cjk_names(question)
    for name in names:
        if name.split()[0].lower() in _EDGE_STOP and question.startswith(name):
            continue  # 'Who' opening the question
        if all(w.lower().rstrip(".,") in tx.MONTHS or w.isdigit() for w in name.split()):
            continue  # 'September 2025' is a date: no name to chain on or keep whole
        for m in re.finditer(re.escape(name), question):
            out.append(Span(m.start(), m.end(), name, "name"))
    return out


def _corpus_spans(question: str, lookup: PhraseLookup, params: OfflineParams) -> list[Span]:
    """Word n-grams of the question that the knowledge base names as a phrase (two words or
    more, or one Chinese word of two characters or more)."""
    grams: dict[str, list[tuple[int, int]]] = {}
    for start, end in _ngrams(question, params.max_span_words)[: params.max_phrase_keys]:
        key = tx.phrase_key(question[start:end])
        if key:
            grams.setdefault(key, []).append((start, end))
    if not grams:
        return []
    known = lookup(list(grams))
    return [
        Span(s, e, question[s:e], "corpus")
        for key, places in grams.items()
        if known.get(key, 0) > 0
        for s, e in places
    ]


def _ngrams(question: str, longest: int) -> list[tuple[int, int]]:
    """(start, end) of candidate phrases: English runs of 2+ words not starting or ending with
    a function word; Chinese runs of jieba words of two characters or more."""
    out: list[tuple[int, int]] = []
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(question)]
    latin = [w for w in words if not tx.has_cjk(w[2])]
    for i in range(len(latin)):
        if latin[i][2].lower() in _EDGE_STOP:
            continue
        for j in range(i + 1, min(len(latin), i + longest)):
            if latin[j][2].lower() in _EDGE_STOP or latin[j][0] - latin[j - 1][1] > 1:
                if latin[j][0] - latin[j - 1][1] > 1:
                    break
                continue
            out.append((latin[i][0], latin[j][1]))
    if tx.has_cjk(question):
        pos, tokens = 0, []
        for tok in tx.raw_tokens(question):
            tokens.append((pos, pos + len(tok), tok))
            pos += len(tok)
        for i in range(len(tokens)):
            if not tx.has_cjk(tokens[i][2]) or tx.is_stopword(tokens[i][2]):
                continue
            for j in range(i, min(len(tokens), i + 6)):
                if not tx.has_cjk(tokens[j][2]):
                    break
                if tokens[j][1] - tokens[i][0] >= 2 and not tx.is_stopword(tokens[j][2]):
                    out.append((tokens[i][0], tokens[j][1]))
    return out
