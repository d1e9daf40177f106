"""A decomposition never garbles a name: every name in a sub-question is a whole name of the
question (or `#k`, what an earlier step finds). A code, a capitalised name or a Chinese name
that the question does not give whole ('海川' of '陆海川', 'Compare X' of 'compare X's v2', a
code the question never names) means the split went wrong: the question is asked whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.schemas import SubQuestion
from ingest.lang import CODE_RE, has_cjk
from ingest.phrases import cjk_tags

_WORD = r"[A-Z][A-Za-z0-9\u00C0-\u024F'’&.-]*"
_CAPITALISED_RE = re.compile(rf"{_WORD}(?:\s+(?:(?:of|and|the|de|van|von|du|la|le)\s+)?{_WORD})*")
_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
_OPENING_RE = re.compile(r"^\W*$")
_ASKING = tx.EN_QUESTION_WORDS | {"what", "which", "who", "whom", "whose", "where", "when", "why",
                                  "how"}  # fmt: skip


def _latin_names(text: str) -> list[str]:
    """Capitalised runs, a sentence's opening word alone aside (any sentence opens so)."""
    out = []
    for m in _CAPITALISED_RE.finditer(tx.PLACEHOLDER_RE.sub(" ", text)):
        name = m.group(0).strip(" .'’")
        if m.start() and text[m.start() - 1].isalnum() and text[m.start() - 1].isascii():
            continue  # the inside of a word or code ('64DD')
        words = name.split()
        while words and (words[0].lower() in tx.EN_STOPWORDS or words[0].lower() in _ASKING):
            words.pop(0)  # 'Which Acme' is 'Acme'
        name = " ".join(words)
        opening = _OPENING_RE.match(text[: m.start()]) or text[: m.start()].rstrip().endswith(
            ("?", ".", "!", ":", "—", "-")
        )
        if opening and " " not in name:
            continue
        if len(name) >= 2 and name.lower() not in tx.EN_STOPWORDS:
            out.append(name)
    return out


def _cjk_names(text: str) -> list[str]:
    if not has_cjk(text):
        return []
    return [w for w, tag in cjk_tags(text) if tag in _NAME_TAGS and len(w) >= 2 and has_cjk(w)]


def _whole_in(name: str, sub_question: str, question: str) -> bool:
    """Whether the question gives the name whole: a Latin name or code as written, bounded
    by non-letters; a Chinese name as written and not the inside of a longer name the
    question gives that the sub-question lost ('海川' of '陆海川')."""
    if not has_cjk(name):
        pattern = rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
        return re.search(pattern, question) is not None
    if name not in question:
        return False
    bounds = _boundaries(question)
    aligned = any(m.start() in bounds and m.end() in bounds
                  for m in re.finditer(re.escape(name), question))  # fmt: skip
    if not aligned:  # it starts or ends inside a word of the question ('海川' of '陆海|川')
        return False
    longer = [n for n in _cjk_names(question) if name in n and n != name]
    return not longer or any(n in sub_question for n in longer)


def _boundaries(text: str) -> set[int]:
    """Where the question's words start and end, cut by the tagger that finds its names."""
    out, at = {0, len(text)}, 0
    for word, _ in cjk_tags(text):
        found = text.find(word, at)
        if found < 0:
            continue
        out |= {found, found + len(word)}
        at = found + len(word)
    return out


def garbled_names(sub_question: str, question: str, found: Sequence[str] = ()) -> list[str]:
    """The names of a sub-question that are not whole names of the question (nor entities an
    earlier step found)."""
    given = f"{question} {' '.join(found)}"
    sub = tx.PLACEHOLDER_RE.sub(" ", sub_question)
    names = [m.group(0) for m in CODE_RE.finditer(sub)]
    rest = CODE_RE.sub(" ", sub)
    names += _latin_names(rest) + _cjk_names(rest)
    return [n for n in dict.fromkeys(names) if not _whole_in(n, sub, given)]


def keep_names(subs: Sequence[SubQuestion], question: str) -> tuple[list[SubQuestion], list[str]]:
    """The sub-questions, or the question asked whole when one garbles a name; and the
    garbled names (for the trace)."""
    bad = [n for s in subs for n in garbled_names(s.question, question)]
    if not bad:
        return list(subs), []
    return [SubQuestion(id=1, question=question)], bad
