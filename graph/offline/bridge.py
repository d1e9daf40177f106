"""Bridging by evidence: which entity the previous hop found, and the next hop's query.

Candidates are the phrases of the previous hop's top hits (their titles and the names in
their text, ingest/phrases.py). Each is scored by general signals only: the rank of the hits
naming it, whether it is a hit's title (the entity has its own passage), how close it sits to
the sub-question's relation words, how many hits agree on it, and whether the whole question
names it. The anchor the hop searched for is never its own bridge. The next query is the
winner plus the next sub-question's own content words, nothing else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from graph import text as tx
from graph.offline.addresses import LEVELS
from graph.offline.decompose_parts import is_noun
from graph.offline.evidence import nearness
from graph.offline.namelists import ORG_WORDS
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.roles import asked_actor_of, players
from graph.protocols import HopView
from ingest.lang import FIELD_LABEL
from ingest.models import Hit
from ingest.phrases import text_phrases

_PAREN_RE = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass
class Candidate:
    text: str
    score: float = 0.0
    hits: set[int] = field(default_factory=set)  # ranks of the hits naming it
    title: bool = False
    near: float = 0.0
    relation: int = 0
    in_question: bool = False
    anchored: bool = False  # named beside the anchor: its sentence, record or own passage

    def why(self) -> dict[str, object]:
        """What the trace shows for it."""
        return {
            "entity": self.text, "score": round(self.score, 3), "hit_ranks": sorted(self.hits),
            "title": self.title, "relation_words": self.relation, "near": round(self.near, 2),
            "named_in_question": self.in_question,
        }  # fmt: skip


def candidates(
    hop: HopView, hits: Sequence[Hit], question: str = "", params: OfflineParams = PARAMS
) -> list[Candidate]:
    """The entities hop `hop` found, best first."""
    asked = tx.PLACEHOLDER_RE.sub(" ", f"{hop.sub_question} {hop.query}")
    asked_terms = tx.term_set(asked)
    relation = tx.term_set(_relation_text(hop.sub_question, hop.query)) - _anchor_terms(hop, hits)
    relation |= tx.cue_terms(hop.sub_question)  # 'the country that #1 is from': born
    related = {t: tx.kin(t) for t in relation}  # 'purchaser': 'acquired', 'bought'
    relation_kin = tx.kin_of(relation)
    question_terms = tx.term_set(question) - asked_terms
    cue = _cue_words(hop.sub_question)
    found: dict[str, Candidate] = {}
    titles = {_PAREN_RE.sub("", h.title).strip().lower() for h in hits[: params.bridge_hits]}
    anchor = _anchor_terms(hop, hits)
    anchor_names = tx.capitalized_spans(tx.PLACEHOLDER_RE.sub(" ", hop.query))
    told = _anchored_telling(anchor, relation_kin, hits[: params.bridge_hits], asked_terms)
    # the anchor has a passage of its own among the hits: a passage about something else says
    # the relation of that something else unless it names the anchor itself
    abouts = [_aboutness(anchor, h, params) for h in hits[: params.bridge_hits]]
    own_passage = any(a >= 1.0 for a in abouts)
    asks_wide = any(_base(w) in _WIDE_KINDS for w in re.findall(r"\b[a-z]+\b", hop.sub_question))
    wide = 1 / params.bridge_container_weight if asks_wide else params.bridge_container_weight
    for rank, (hit, about) in enumerate(zip(hits, abouts, strict=False), start=1):
        weight = about / math.sqrt(rank)
        sentences = _sentences(hit)
        for i, sentence in enumerate(sentences):
            sentence_terms = tx.term_set(sentence) | sentences.record.get(i, frozenset())
            rel_here = sum(1 for words in related.values() if words & sentence_terms)
            elsewhere = about < 1.0 or i in sentences.record  # a record is about its own key
            if (told or own_passage) and elsewhere and not anchor <= _about_terms(sentences, i):
                rel_here = 0  # a sentence beside the one that says it, about something else
            names = _names(sentence, hit, i)
            if (
                about < 1.0
                and i not in sentences.record  # a record's line is about the record's key
                and rel_here
                and anchor
                and anchor <= _about_terms(sentences, i)
                and all(tx.term_set(n) <= anchor for n in names)
            ):  # 'X was awarded on his 100th birthday', naming nothing else, on the award's
                names.append(_PAREN_RE.sub("", hit.title).strip())  # page: what X received
            for name in names:
                terms = tx.term_set(name)
                if not terms or terms <= asked_terms or len(terms & asked_terms) * 2 > len(terms):
                    continue
                if _fuller_writing(name, anchor_names):  # 'Ivo Anna Lund' is Ivo Lund himself
                    continue
                cand = found.setdefault(name.lower(), Candidate(text=name))
                near = nearness(  # the name's own words ('United States' for 'state') are
                    sentence, name, relation_kin - terms, after_bonus=params.bridge_after_bonus
                )  # not next to it
                cand.hits.add(rank)
                cand.title = cand.title or name.lower() in titles
                cand.near = max(cand.near, near)
                cand.relation = max(cand.relation, rel_here)
                cand.in_question = cand.in_question or bool(terms & question_terms)
                cand.anchored = (
                    cand.anchored or about >= 1.0 or anchor <= _about_terms(sentences, i)
                )
                score = (
                    weight
                    * (params.bridge_relation_base + rel_here)
                    * (1 + params.bridge_near_weight * near)
                )
                if i == 0:
                    score *= params.bridge_first_sentence_weight
                if _cued(sentence, name, cue):
                    score *= params.bridge_cue_weight
                if _contains(sentence, name):  # 'in Thessaloniki, Greece': Greece holds the
                    score *= wide  # place, the answer to 'which country', not to 'where'
                cand.score += score
    kind = asked_kind(hop.sub_question)
    cast = _cast(hop.sub_question, hits[: params.bridge_hits])
    for cand in found.values():
        if cand.text.lower() in cast:  # 'who played R': the hits say 'X as R', 'R (X)'
            cand.score *= params.bridge_role_weight
        elif cast:  # ... and so whoever they do not say it of played something else
            cand.score *= params.bridge_role_other
        cand.score *= 1 + params.bridge_agreement_weight * (len(cand.hits) - 1)
        if kind and _base(last := cand.text.split()[-1]) == kind:  # 'meeting where …': the
            if _plural_of(last, asked):  # 'Harbour Meetings'; 'state where …': 'United States'
                cand.score /= params.bridge_kind_weight  # names many, its kind word no sign
            else:
                cand.score *= params.bridge_kind_weight
        if cand.title:
            cand.score *= params.bridge_title_weight
        if cand.in_question:
            cand.score *= params.bridge_question_weight
        if told and not (cand.relation or cand.anchored):  # a sentence says the anchor's
            cand.score *= params.bridge_untold_weight  # relation: a name never beside either
    ranked = sorted(found.values(), key=lambda c: -c.score)
    return _distinct(ranked)


def linked(found: Sequence[Candidate]) -> bool:
    """Whether a step's candidates hold one said beside what the step asked about: the best
    one is, or one is with the relation's words. Else the hits only name other things (an
    outage log naming other services than the one asked about) and the chain stops here."""
    return not found or found[0].anchored or any(c.anchored and c.relation for c in found)


def _cast(sub_question: str, hits: Sequence[Hit]) -> set[str]:
    """The players the hits say play the role a step asks about ('person who played R'),
    lower-cased; empty for any other step."""
    role = asked_actor_of(sub_question)
    if not role:
        return set()
    return {p.lower() for h in hits for s in _sentences(h) for p in players(s, role)}


def named_by_hop(hop: HopView, hits: Sequence[Hit]) -> Candidate | None:
    """A hop that asked for a bare name and a noun ('Logistics Apps team?', from 'Who leads
    the Logistics Apps team?') found its entity when a passage says those very words: the
    noun is part of the name, not another thing to find ('the Orlen performer' is a person
    no passage calls that). None for a hop that asks anything more (a question word, 'of',
    'that', a placeholder)."""
    phrase = hop.sub_question.strip().rstrip("?？").strip()
    phrase = re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.IGNORECASE)
    words = tx.words(phrase)
    if (
        len(words) < 2
        or tx.has_cjk(phrase)
        or tx.PLACEHOLDER_RE.search(phrase)
        or not all(is_noun(w) for w in words)  # 'Ari Vatanen born' asks for a date
    ):
        return None
    pattern = re.compile(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", re.IGNORECASE)
    for rank, hit in enumerate(hits, start=1):
        found = pattern.search(f"{hit.title}\n{hit.text}")
        if found:
            return Candidate(found.group(0), 1.0, {rank}, in_question=True, anchored=True)
    return None


def next_query(sub_question: str, entity: str, params: OfflineParams = PARAMS) -> str:
    """The entity and the sub-question's own content words ('#1 born?' + X -> 'X born')."""
    rest = tx.PLACEHOLDER_RE.sub(" ", sub_question)
    words = tx.coverage_terms(rest) if tx.has_cjk(rest) else tx.content_words(rest)
    entity_words = set(tx.words(entity))
    words = [w for w in dict.fromkeys(words) if w not in entity_words]
    joiner = "" if tx.has_cjk(entity) and words and tx.has_cjk(words[0]) else " "
    return tx.normalize_space(entity + joiner + " ".join(words[: params.bridge_relation_words]))


_CUES = {  # prepositions that introduce a filler, by the kind of answer asked for
    "person": {"by", "to", "with"},
    "place": {"in", "at", "from", "near", "of"},
    "date": {"in", "on", "since"},
}


_KIND_FIRST_RE = re.compile(
    r"^(?:the\s+|a\s+|an\s+)?(?:[a-z][\w-]*\s+){0,2}?(?P<noun>[a-z][\w-]*)\s+(?:(?:in|at|on|of|"
    r"for|from|by|with)\s+)?(?:that|which|who|whom|whose|where|when)\b"
)
_KIND_LAST_RE = re.compile(r"\b(?:which|what)\s+(?:[\w'’-]+\s+){0,3}?(?P<noun>[a-z][\w-]*)\s*\??$")


def asked_kind(sub_question: str) -> str:
    """The kind of thing a step asks for, stemmed: the head noun of 'meeting where …' or of
    '… which Danish radio serial?'; '' when it names none."""
    text = sub_question.strip()
    m = _KIND_FIRST_RE.match(text) or _KIND_LAST_RE.search(text)
    noun = m.group("noun").lower() if m else ""
    return "" if not noun or tx.is_stopword(noun) else _base(noun)


def _base(word: str) -> str:
    """A noun's stem, a plural's as its singular's ('meetings', 'meeting' -> 'meet')."""
    return tx.stem(tx.singular(word))


# the kinds an address's later places answer ('Greenfield, Indiana' for 'which state')
_WIDE_KINDS = frozenset({_base(w) for w in (*LEVELS, "country", "nation")})
_PLACE = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*"


def _contains(sentence: str, name: str) -> bool:
    """Whether the sentence names `name` as the wider place of an address ('in Thessaloniki,
    Greece'), not as one item of a list ('with A, B and C')."""
    return bool(
        re.search(
            rf"\b(?:in|at|near|from|outside)\s+(?:the\s+)?(?:[a-z]+\s+of\s+)?{_PLACE},\s+"
            rf"{re.escape(name)}"
            r"(?!\s*,\s*[A-Z]|\s+and\s|[\w'’-])",
            sentence,
        )
    )


def _plural_of(word: str, asked: str) -> bool:
    """A division named in the plural where the step asks for one ('United States' for 'the
    state where …'): a union of them, not one. (An event named in the plural is one event:
    'Harbour Meetings' for 'the meeting where …'.)"""
    low = word.lower()
    return (
        tx.singular(low) != low
        and _base(low) in _WIDE_KINDS
        and not re.search(rf"\b{re.escape(low)}\b", asked.lower())
    )


def _says_kind(text: str, kind: str) -> bool:
    """Whether a passage's opening sentence calls its subject a `kind` (stemmed: 'a U.S.
    state', 'an independent city-state', 'the aerospace company')."""
    opening = tx.split_sentences(text)[:1]
    return bool(opening) and any(_base(w) == kind for w in re.findall(r"[a-z]+", opening[0]))


def _cue_words(sub_question: str) -> set[str]:
    """The prepositions that introduce the kind of entity the sub-question asks for; all of
    them when it names no kind (a bare 'author of ⟨E⟩')."""
    from graph.offline.kinds import answer_type

    kind = answer_type(sub_question)
    return _CUES.get(kind, set().union(*_CUES.values()))


def _cued(sentence: str, name: str, cue: set[str]) -> bool:
    m = re.search(r"(\w+)\s+(?:the\s+)?" + re.escape(name), sentence)
    return m is not None and m.group(1).lower() in cue


def _anchored_telling(
    anchor: set[str], relation: set[str], hits: Sequence[Hit], asked_terms: set[str]
) -> bool:
    """Some sentence names the hop's anchor, a word of what is asked and another name: that
    sentence says it ('The Dill Gateway API is owned by the Edge Services team'), and a
    neighbour that only shares the relation ('The Brine Ledger … is owned by …') does not."""
    if not anchor or not relation:
        return False
    for hit in hits:
        sentences = _sentences(hit)
        for i, sentence in enumerate(sentences):
            terms = tx.term_set(sentence)
            if anchor <= _about_terms(sentences, i) and relation & terms:
                others = [n for n in _names(sentence, hit, i) if not tx.term_set(n) <= asked_terms]
                if others:
                    return True
    return False


def _relation_text(sub_question: str, query: str) -> str:
    return tx.PLACEHOLDER_RE.sub(" ", f"{sub_question} {query}")


def _anchor_terms(hop: HopView, hits: Sequence[Hit]) -> set[str]:
    """What the hop searched about: the names in its query, else a top hit's title that the
    query spells out (a lower-case question names no entity)."""
    query = tx.PLACEHOLDER_RE.sub(" ", hop.query)
    names = tx.capitalized_spans(query) + tx.quoted_titles(query)
    if tx.has_cjk(query):
        names += tx.cjk_org_names(query) + tx.cjk_names(query)
    terms = tx.term_set(" ".join(names))
    if terms:
        return terms
    query_terms = tx.term_set(query)
    for hit in hits[:3]:
        title_terms = tx.term_set(_PAREN_RE.sub("", hit.title))
        if title_terms and title_terms <= query_terms:
            return title_terms
    return set()


def _aboutness(anchor: set[str], hit: Hit, params: OfflineParams = PARAMS) -> float:
    """1 when the hit's title names the anchor, less when only its text does, little else:
    the entity a hop found sits in a passage about what the hop asked about."""
    if not anchor:
        return 1.0
    title = tx.term_set(_PAREN_RE.sub("", hit.title))
    if title and (title <= anchor or anchor <= title):
        return 1.0
    shared = tx.overlap(anchor, tx.term_set(f"{hit.title} {hit.text[:600]}"))
    if shared >= params.bridge_about_shared:
        return params.bridge_about_weight * shared
    return params.bridge_about_floor + params.bridge_about_slope * shared


class _Sentences(list[str]):
    """A passage's sentences; the lines of a record (a block of mostly 'Label: value' lines)
    are sentences of their own, and `record` holds the words of the record each belongs to."""

    record: dict[int, frozenset[str]]


def _sentences(hit: Hit) -> _Sentences:
    return _read(hit.text)


@lru_cache(maxsize=1024)
def _read(text: str) -> _Sentences:
    """A passage read once, whoever asks (the candidates, the telling check, the cast): its
    sentences, a record's lines each one, and the words of the record each line belongs to.
    Shared between callers, so never changed by them."""
    out = _Sentences()
    out.record = {}
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.splitlines() if ln.strip()]
        fields = sum(1 for ln in lines if _FIELD_LABEL_RE.match(ln))
        if len(lines) >= 2 and fields * 2 >= len(lines):  # a record: each field is a line
            words = frozenset(tx.term_set(" ".join(lines)))
            out.record.update({len(out) + k: words for k in range(len(lines))})
            out += lines
        else:
            out += tx.split_sentences(block)
    return out


def _about_terms(sentences: Sequence[str], i: int) -> set[str]:
    """The words of what sentence i is about: its own, the sentence before it when it opens
    by referring back to it ('The project was led by X' after 'The Harbour Survey is a mapping
    project …'), and a record line's whole record ('Lead: X' is the lead of the record's
    'Team: Y')."""
    terms = tx.term_set(sentences[i])
    if isinstance(sentences, _Sentences) and i in sentences.record:
        return terms | sentences.record[i]
    if i > 0 and tx.refers_back(sentences[i]):
        terms |= tx.term_set(sentences[i - 1])
    return terms


def _names(sentence: str, hit: Hit, index: int) -> list[str]:
    """The phrases of a sentence, minus dates, adjectives, a field line's label ('Lead' of
    'Lead: X' names a field, not an entity) and the passage's own subject (a page naming
    itself is no evidence; another passage naming it is)."""
    own = _PAREN_RE.sub("", hit.title).strip().lower()
    field = _FIELD_LABEL_RE.match(sentence)
    label = field.group("label").strip().lower() if field else ""
    alias = _OPENING_PAREN_RE.match(sentence) if index == 0 else None
    aliases = (
        alias.group("inside")
        if alias and alias.group("subject").lower() == own and _ALIAS_RE.match(alias["inside"])
        else ""
    )  # not '(born 1938 in Tunis)': a place it names is another entity
    return [
        n
        for n in dict.fromkeys(text_phrases(sentence))
        if not _date_like(n)
        and not _attributive(sentence, n)
        and n.lower() not in (own, label)
        and n not in aliases  # 'X (also known as "Y") is …': Y is X itself
    ]


_FIELD_LABEL_RE = re.compile(rf"^(?P<label>{FIELD_LABEL})[:：]\s*\S")
# a passage opening with its subject and a parenthesis: 'X (also known as "Y"; 1997) is …'
_ALIAS_RE = re.compile(
    r"\s*(?:[\"“‘']|also\s+known\s+as\b|known\s+as\b|a\.?k\.?a\.?\s|formerly\b|English:|or\s)",
    re.IGNORECASE,
)
_OPENING_PAREN_RE = re.compile(
    r"^(?:[Tt]he\s+)?(?P<subject>[^()]{1,120}?)\s*\((?P<inside>[^()]*)\)"
)


def _fuller_writing(name: str, anchors: Sequence[str]) -> bool:
    """The anchor's own name written out ('Vela Anna Maria Pruss' for 'Vela Pruss', 'Gisvi
    Andrade' for 'Gisvi'): it opens with the anchor's first word, holds its last, and adds
    only capitalised words that make no organisation ('Vela Holdings' is another entity)."""
    words = name.split()
    for anchor in anchors:
        own = anchor.split()
        extra = [w for w in words if w not in own]
        if (
            len(words) > len(own)
            and words[0] == own[0]
            and own[-1] in words
            and all(w[:1].isupper() and w.lower().strip(".") not in ORG_WORDS for w in extra)
        ):
            return True
    return False


def _attributive(sentence: str, name: str) -> bool:
    """A capitalised word or run used as an adjective ('an Indian film', 'a 1998 Indian
    Bollywood film'): followed by a lower-case content word, and not a name of its own there."""
    if tx.has_cjk(name):
        return False
    m = re.search(r"(\S*)\s+" + re.escape(name) + r"\s+([a-z][\w-]*)", " " + sentence)
    if m is None or m.group(2) in tx.EN_STOPWORDS:
        return False
    return " " not in name or m.group(1).lower() in {"a", "an"} or m.group(1).isdigit()


_DATE_RE = re.compile(r"^[\d\s,./-]+$")


def _date_like(name: str) -> bool:
    return bool(_DATE_RE.match(name)) or name.split()[0].lower() in tx.MONTHS


def _distinct(ranked: list[Candidate]) -> list[Candidate]:
    """Drop a candidate inside a better one ('Forest' after 'Nottingham Forest')."""
    out: list[Candidate] = []
    for cand in ranked:
        low = cand.text.lower()
        if any(low in o.text.lower() or o.text.lower() in low for o in out):
            continue
        out.append(cand)
    return out


def confirm(
    entity: str,
    query: str,
    hits: Sequence[Hit],
    previous: str = "",
    params: OfflineParams = PARAMS,
    kind: str = "",
) -> float:
    """How well a candidate's search confirms it: a top hit about the entity (its title names
    it, or its opening does) that holds the relation's words and links back to what the
    previous hop asked about (the entity's own passage names the anchor it was found from)."""
    relation = tx.term_set(query) - tx.term_set(entity)
    back = tx.term_set(tx.PLACEHOLDER_RE.sub(" ", previous)) - tx.term_set(entity)
    name = entity.lower()
    best = 0.0
    for rank, hit in enumerate(hits[:3], start=1):
        title = _PAREN_RE.sub("", hit.title).strip().lower()
        text = hit.text.lower()
        about = (
            1.0
            if title and (title == name or name in title)
            else (
                params.bridge_confirm_lead
                if name in text[: params.bridge_lead_chars]
                else params.bridge_confirm_text
                if name in text
                else 0.0
            )
        )
        terms = tx.term_set(f"{hit.title} {hit.text}")
        held = tx.overlap(relation, terms) if relation else 1.0
        if kind and about == 1.0 and _says_kind(hit.text, kind):
            about *= params.bridge_kind_weight  # its own page calls it what was asked for
        linked = tx.overlap(back, terms) if back else 0.0
        best = max(
            best, about * (params.bridge_relation_base + held) * (1 + linked) / math.sqrt(rank)
        )
    return best
