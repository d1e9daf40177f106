"""English nested noun phrases and relative clauses decomposed into a chain, innermost first:
'the capital of the state that won ⟨E⟩' -> ['state that won ⟨E⟩?', 'capital of #1?', …];
"⟨E⟩'s R" takes its whole noun phrase; with no named anchor, the relative clause is found
first ('the brother of the player who has won the cup').
"""

from __future__ import annotations

import re

from graph import text as tx
from graph.offline.decompose_parts import PARTICIPLE, Part, is_noun
from graph.offline.params import OfflineParams
from graph.offline.spans import MASK_RE

_ENT = r"⟨\d+⟩"


# 'the capital of', 'the state that', 'the award ⟨E⟩ received': where a nested phrase starts
_NP_START_RE = re.compile(
    rf"(?:\b(?:the)|^The)\s+(?:[a-z][\w-]*\s+){{0,3}}?[a-z][\w-]*\s+(?=(?:of|that|which|who|"
    rf"whom|whose|where|when|with|in|at|by|for|from|on)\b|the\s+{_ENT}|{_ENT}|{PARTICIPLE}\b)"
)
NP_LEAD_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# one verb group closing a relative clause: 'is', 'died', 'can be found', 'was born in'
_VERB_GROUP_RE = re.compile(
    rf"(?:(?:\s+(?:can|could|may|might|will|would|be|been|being|has|have|had|is|are|was|"
    rf"were))*\s+{PARTICIPLE}(?:\s+(?:in|for|on|at|with|by|from|to|of))?"
    rf"|\s+(?:is|are|was|were)(?:\s+(?:from|in|at|on|based|located)(?=\s*$))?)(?=\s|$)"
)
# 'the party in which ⟨E⟩ held a seat?': an indefinite object that closes the question is
# the clause's own (a definite one may name the next thing to find)
_PRESENT_VERB_RE = re.compile(r"\s+[a-z]+s(?=\s+(?:a|an)\s)")
_CLOSING_OBJECT_RE = re.compile(r"\s+(?:a|an)\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*$")
# 'the company that makes ⟨E⟩': the clause has its verb, so a verb after ⟨E⟩ is the outer one's
_CLAUSE_VERB_RE = re.compile(r"\b(?:that|which|who)\s+(?!the\b|a\b|an\b|⟨)[a-z]+")
_OPEN_CLAUSE_RE = re.compile(r"\b(?:that|which|who|whom|whose|where)$")
_REL_NP_RE = re.compile(
    r"\bthe\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*\s+(?:who|that|which|whose|where)\b"
)


def chain_en(q: str, params: OfflineParams) -> list[Part] | None:
    """Nested relations, innermost first: 'the capital of the state that won ⟨E⟩' ->
    ['state that won ⟨E⟩?', 'capital of #1?', ...the question with #k]."""
    body = q.strip().rstrip(" ?")
    anchor = _anchor(body)
    if anchor is None:
        return _relative_chain(body)
    pos, end = anchor
    noun = re.match(r"\s+([a-z][\w-]*)(?=\s|$)", body[end:])
    starts = [m.start() for m in _NP_START_RE.finditer(body) if m.end() <= pos]
    the = re.search(r"\bthe\s+$", body[:pos], re.I)
    if noun and is_noun(noun.group(1)) and the and _LOCATIVE_RE.search(body[: the.start()]):
        return None  # 'an engineer from the ⟨E⟩ office': a place the question names, no step
    if noun and is_noun(noun.group(1)) and the and _inside_phrase(body[: the.start()]):
        end += noun.end()  # 'of the ⟨E⟩ performer': the performer of ⟨E⟩, the innermost phrase
        starts.append(the.start())
    possessive = _possessed(body[end:])
    hops: list[str] = []
    if possessive:
        hops.append(f"{possessive[0]} of {body[pos:end]}?")
        inner_start, inner_end = pos, end + possessive[1]
    elif starts:
        inner_start = starts.pop()
        named = re.match(
            rf"\s+(?:in|on|at|of|from)\s+(?:the\s+)?(?:{_ENT}|\d{{3,4}}\b)", body[end:]
        )
        end += named.end() if named else 0
        phrase = body[inner_start:pos]
        closing = _CLOSING_NOUNS_RE.match(body[end:])  # 'that owns the ⟨E⟩ billing system'
        if (
            closing
            and re.search(r"\b(?:that|which|who)\b", phrase)
            and re.search(r"\bthe\s+$", phrase)
            and all(is_noun(w) or w.endswith("ing") for w in closing.group(0).split())
        ):
            end += closing.end()  # the name's own nouns end the question: the inner hop's
        open_clause = _relative(phrase) and not _CLAUSE_VERB_RE.search(phrase)
        tail = _VERB_GROUP_RE.match(body[end:]) if open_clause else None
        inner_end = end + (tail.end() if tail else 0)
        if open_clause and (tail or _PRESENT_VERB_RE.match(body[inner_end:])):
            verb = tail or _PRESENT_VERB_RE.match(body[inner_end:])
            obj = _CLOSING_OBJECT_RE.match(body[end + verb.end() :])  # type: ignore[union-attr]
            if obj:  # 'in which ⟨E⟩ held a seat', '… owns a share': the clause's own object
                inner_end = end + verb.end() + obj.end()  # type: ignore[union-attr]
        hops.append(NP_LEAD_RE.sub("", body[inner_start:inner_end]).strip() + "?")
    else:
        return None
    room = params.max_chain_hops - 2  # the innermost hop and the outer question
    starts = starts[-room:] if len(starts) > room else starts
    boundary = inner_start
    for start in reversed(starts):
        segment = NP_LEAD_RE.sub("", body[start:boundary].strip())
        clause_tail = _clause_tail(segment, body[inner_end:])
        hops.append(tx.normalize_space(f"{segment} #{len(hops)} {clause_tail}") + "?")
        inner_end += len(clause_tail)
        boundary = start
    outer = tx.normalize_space(f"{body[:boundary]} #{len(hops)} {body[inner_end:]}") + "?"
    if tx.tokenize(MASK_RE.sub(" ", tx.PLACEHOLDER_RE.sub(" ", outer))):
        hops.append(outer)
    if len(hops) < 2:
        return None
    return [(h, i if i else None) for i, h in enumerate(hops)]


def _inside_phrase(before: str) -> bool:
    """Whether 'the ⟨E⟩ N' sits inside a phrase that asks about it ('the birthplace of the
    ⟨E⟩ performer'): the performer is found first. Right after 'What is', 'the ⟨E⟩ unit
    price' is what is asked, an attribute of ⟨E⟩."""
    return bool(
        re.search(r"\b(?:of|for|by|with|from|to|in|at|on|that|which|who)\s+$", before, re.I)
    )


_LOCATIVE_RE = re.compile(r"\b(?:from|in|at|on)\s+$", re.IGNORECASE)
_NEXT_WORD_RE = re.compile(r"\s+([a-z][\w-]*)")
_CLOSING_NOUNS_RE = re.compile(r"(?:\s+[a-z][\w-]*){1,3}$")
_OF_WORD_RE = re.compile(r"\s+of\s+[a-z][\w-]*")


_ING_NOUN_RE = re.compile(r"[a-z][\w-]*ing")


def _possessed(rest: str) -> tuple[str, int] | None:
    """After '⟨E⟩': "'s R" where R is the whole noun phrase ('rate limit', 'home town') with
    an 'of N' that follows it; (R, where it ends), or None when no noun follows."""
    lead = re.match(r"['’]s?", rest)
    if not lead:
        return None
    end, words = lead.end(), list[str]()
    while (word := _NEXT_WORD_RE.match(rest, end)) and (
        is_noun(word.group(1)) or (not words and _ING_NOUN_RE.fullmatch(word.group(1)))
    ):  # right after "'s" a word in -ing is a noun ('sibling', 'building', 'painting')
        words.append(word.group(1))
        end = word.end()
    if not words:
        return None
    of = _OF_WORD_RE.match(rest, end)
    if of:
        words.append(of.group(0).strip())
        end = of.end()
    return " ".join(words), end


def _anchor(body: str) -> tuple[int, int] | None:
    """(start, end) of the entity the innermost phrase is about: the first masked span after
    the last nested-phrase start that precedes one, else a possessive one, else the first."""
    located = [(m.start(), m.end()) for m in MASK_RE.finditer(body)]
    if not located:
        return None
    starts = [m.start() for m in _NP_START_RE.finditer(body)]
    for start in reversed(starts):
        after = [p for p in located if p[0] > start]
        later = [p for p in starts if p > start]
        if after and (not later or after[0][0] < min(later) or start == starts[-1]):
            return after[0]
    for p in located:
        if re.match(r"['’]s?\s+[a-z]", body[p[1] :]):
            return p
    return located[0]


def _relative(phrase: str) -> bool:
    """A relative clause ('the state that', 'the award ⟨E⟩ received'), not 'the X of'."""
    if re.search(r"\b(?:that|which|who|whom|whose|where|when)\b", phrase):
        return True
    return not re.search(r"\b(?:of|in|at|by|for|from|with|on)\s+(?:the\s+)?(?:\w+\s+)?$", phrase)


def _clause_tail(segment: str, rest: str) -> str:
    """The verb closing a relative clause around the inner hop: in 'the city where the
    author of ⟨E⟩ died', 'died' belongs to 'city where #1 died'."""
    if not _OPEN_CLAUSE_RE.search(segment.strip()):
        return ""
    tail = _VERB_GROUP_RE.match(rest)
    return tail.group(0) if tail else ""


def _relative_chain(body: str) -> list[Part] | None:
    """No named anchor: 'the brother of the player who has won the cup' -> ['player who has
    won the cup?', 'the brother of #1?']."""
    m = _REL_NP_RE.search(body)
    if not m or m.start() == 0:
        return None
    inner = NP_LEAD_RE.sub("", body[m.start() :]).strip()
    tail = ""
    closing = re.search(rf"\s+{PARTICIPLE}(?:\s+(?:in|on|at|by|for|from|to|of|with))?$", inner)
    if closing and _CLAUSE_VERB_RE.search(inner[: closing.start()]):
        inner, tail = inner[: closing.start()], closing.group(0)  # 'Where is #1 based?'
    outer = tx.normalize_space(f"{body[: m.start()]} #1{tail}") + "?"
    if not tx.tokenize(tx.PLACEHOLDER_RE.sub(" ", outer)) or len(tx.tokenize(inner)) < 2:
        return None
    return [(inner + "?", None), (outer, 1)]
