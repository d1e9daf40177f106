"""Who plays whom: the two questions a cast list answers, read the way cast lists are written.

- 'Who played ROLE (in W)?', 'the actress who voiced ROLE': the name that plays it, from
  'NAME as ROLE', 'ROLE (NAME)', 'ROLE (voiced by NAME)' or 'ROLE, played by NAME';
- 'Who did NAME play (in W)?', 'What character does NAME voice?', 'NAME played who?': the
  role, from the same patterns read the other way.

A role is matched on its words with the spaces squeezed out ('the fairy god mother' is
'Fairy Godmother'), a player by their full name or their surname ('Wayne'). English only: a
closed set of verbs and prepositions, no word list of roles or people.
"""

from __future__ import annotations

import re
from functools import lru_cache

from graph import text as tx

_PLAY = r"(?:play|plays|played|playing|portray|portrays|portrayed|portraying|voice|voices|voiced|voicing)"
# 'who played ROLE in W', 'the actor playing ROLE on W'
_ACTOR_ASKED_RE = re.compile(
    rf"\b(?:who|that|whom)?\s*{_PLAY}\s+(?!(?:who|whom|what|which|in|on|for|at|with|from|"
    rf"against|by|to)\b)(?P<role>.+?)"
    r"(?:\s+(?:in|on|for|from)\s+.*)?\s*\??$",
    re.IGNORECASE,
)
# 'who did NAME play', 'what character does NAME voice'
_ROLE_ASKED_RE = re.compile(
    rf"\b(?:did|does|do|will|would)\s+(?P<actor>.+?)\s+{_PLAY}\b", re.IGNORECASE
)
# 'NAME played who in W'
_ROLE_ASKED_AFTER_RE = re.compile(
    rf"^(?:the\s+)?(?P<actor>.+?)\s+{_PLAY}\s+(?:who|whom|what|which)\b", re.IGNORECASE
)
_NAME = r"[A-Z][\w'’.-]*(?:\s+(?:de|van|von|da|del|la|le|of|the|[A-Z][\w'’.-]*))*"
_AS_RE = re.compile(rf"({_NAME})\s+(?:as|playing|portraying|voicing)\s+(?:the\s+)?")
_BY_RE = re.compile(
    rf"\s*(?:\(\s*(?:(?:voiced|played|portrayed)\s+by\s+)?|,?\s+(?:who\s+is\s+|is\s+|was\s+)?"
    rf"(?:voiced|played|portrayed)\s+by\s+)({_NAME})"
)
_ROLE_RUN_RE = re.compile(rf"(?:(?:the|a|an)\s+)?({_NAME})")


def _squeeze(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@lru_cache(maxsize=2048)
def asked_actor_of(part: str) -> str:
    """The role a part asks the player of ('Eliza Doolittle' of 'person who played Eliza
    Doolittle in W?'), or ''."""
    if tx.has_cjk(part) or _role_asked(part):
        return ""
    m = _ACTOR_ASKED_RE.search(part)
    if m is None:
        return ""
    role = re.sub(r"^(?:the|a|an)\s+", "", m.group("role").strip(), flags=re.IGNORECASE)
    return role if tx.content_words(role) and len(role.split()) <= 5 else ""


def _role_asked(part: str) -> str:
    m = _ROLE_ASKED_RE.search(part) or _ROLE_ASKED_AFTER_RE.search(part.strip())
    if m is None:
        return ""
    actor = re.sub(r"^(?:the|a|an)\s+", "", m.group("actor").strip(), flags=re.IGNORECASE)
    return actor if re.search(r"[A-Z⟨#]", actor) else ""


@lru_cache(maxsize=2048)
def asked_role_of(part: str) -> str:
    """The player a part asks the role of ('John Wayne' of 'Who did John Wayne play in W?'),
    or ''."""
    return "" if tx.has_cjk(part) else _role_asked(part)


def _is_player(found: str, player: str) -> bool:
    """Whether a name in a sentence is the player asked about: the full name, or its surname
    standing alone ('Saunders' for 'Jennifer Saunders')."""
    a, b = found.strip().lower(), player.strip().lower()
    return (
        a == b or (a in b.split() and a == b.split()[-1]) or (b in a.split() and b == a.split()[-1])
    )


def _role_at(sentence: str, start: int, role: str) -> bool:
    """Whether the sentence, from `start`, says the role (its words, spaces squeezed out)."""
    want = _squeeze(role)
    m = _ROLE_RUN_RE.match(sentence, start)
    if m is None or not want:
        return False
    return _squeeze(m.group(1)).startswith(want) or want in _squeeze(m.group(1))


def _clean(name: str) -> str:
    """A name without the sentence's full stop ('Cogburn.'; 'U.S.' keeps its own)."""
    name = name.strip()
    return name[:-1] if name.endswith(".") and len(name.split()[-1]) > 3 else name


def players(sentence: str, role: str) -> list[str]:
    """The names the sentence says play `role`."""
    found: list[str] = []
    for m in _AS_RE.finditer(sentence):
        if _role_at(sentence, m.end(), role):
            found.append(_clean(m.group(1)))
    for run in _ROLE_RUN_RE.finditer(sentence):
        if _role_at(sentence, run.start(1), role) and (by := _BY_RE.match(sentence, run.end())):
            found.append(_clean(by.group(1)))
    return list(dict.fromkeys(found))


def roles(sentence: str, player: str) -> list[str]:
    """The roles the sentence says `player` plays."""
    found: list[str] = []
    for m in _AS_RE.finditer(sentence):
        if _is_player(m.group(1), player) or m.group(1).strip().endswith(f" {player}"):
            run = _ROLE_RUN_RE.match(sentence, m.end())
            if run:
                found.append(_clean(run.group(1)))
    for run in _ROLE_RUN_RE.finditer(sentence):
        by = _BY_RE.match(sentence, run.end())
        if by and _is_player(by.group(1), player):
            found.append(_clean(run.group(1)))
    return list(dict.fromkeys(found))


def role_spans(part: str, sentence: str) -> list[str]:
    """The spans of the sentence that answer the part's cast question: the player of the
    role it names, or the role of the player it names."""
    role = asked_actor_of(part)
    if role:
        return players(sentence, role)
    player = asked_role_of(part)
    return roles(sentence, player) if player else []


def fills_role(part: str, sentence: str, span: str) -> bool:
    """Whether `span` is, in `sentence`, what the part asks of a cast (`role_spans`)."""
    return any(_overlaps(span, s) for s in role_spans(part, sentence))


def asks_cast(part: str) -> bool:
    """Whether the part asks who plays a role or whom a player plays."""
    return bool(asked_actor_of(part) or asked_role_of(part))


def _overlaps(span: str, name: str) -> bool:
    a, b = span.lower(), name.lower()
    return a == b or a in b or b in a
