"""Decomposition by the question's structure, never by its vocabulary.

Names and the knowledge base's phrases are masked first (graph/offline/spans.py), so a rule
sees `⟨0⟩` where a title or a name stands. Then only clear signals split the question:

- two questions joined by "and" (or a Chinese clause break): each is decomposed alone;
- a comparison, "Which …, ⟨A⟩ or ⟨B⟩?" / "Are ⟨A⟩ and ⟨B⟩ both …?": one hop per item, and
  a lookup hop first when the compared thing is a role of the item ("the author who…");
- nested noun phrases and relative clauses ("the R of the N that V ⟨E⟩", "⟨E⟩'s R",
  "X的Y的Z"): a chain, innermost first, each later hop naming the earlier one as `#k`;
  which entity fills `#k` is decided by what retrieval finds (graph/offline/bridge.py).

Everything else is one sub-question: the whole question.

English comparisons and simple chains are read here; nested noun phrases in
decompose_nested.py, Chinese in decompose_zh.py, the pieces they share in decompose_parts.py.
"""

from __future__ import annotations

import re

from graph import text as tx
from graph.offline.decompose_nested import NP_LEAD_RE, chain_en
from graph.offline.decompose_parts import PARTICIPLE, PARTICIPLES, Part, is_noun, shift
from graph.offline.decompose_zh import zh
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import MASK_RE, mask, question_spans, unmask
from graph.protocols import PhraseLookup
from graph.schemas import SubQuestion
from ingest import lexicon

_AUX = r"(?:is|are|was|were|did|do|does|has|have|had|can|could|will|would|should)"
_WH = r"(?:what|which|who|whom|whose|when|where|why|how)"
_COMPARATIVE = frozenset(
    w for line in lexicon.words("comparatives") for w in [line] if w not in {"-", "+"}
)


def decompose_question(
    question: str, lookup: PhraseLookup | None = None, params: OfflineParams = PARAMS
) -> list[SubQuestion]:
    """Ordered sub-questions; `#k` in one stands for what sub-question k finds."""
    q = tx.normalize_space(question).replace("⟨", "〈").replace("⟩", "〉")  # ours mark spans
    if not q:
        return [SubQuestion(id=1, question=question)]
    spans = question_spans(q, lookup, params)
    masked = mask(q, spans)
    parts = zh(masked, params) if tx.language_of(q) == "zh" else _en(masked, params)
    subs: list[SubQuestion] = []
    for text, dep in _dedupe(parts)[: tx.MAX_SUB_QUESTIONS]:
        sub = tx.normalize_space(unmask(text, spans))
        subs.append(SubQuestion(id=len(subs) + 1, question=sub, depends_on=dep))
    return subs or [SubQuestion(id=1, question=q)]


def _dedupe(parts: list[Part]) -> list[Part]:
    """Repeated sub-questions dropped; every #k and dependency follows the one kept."""
    kept: dict[str, int] = {}
    new_id: dict[int, int] = {}
    out: list[Part] = []
    for k, (text, dep) in enumerate(parts, start=1):
        text = tx.PLACEHOLDER_RE.sub(lambda m: f"#{new_id.get(int(m.group(1)), 0)}", text)
        if not text.strip():
            continue
        if text in kept:
            new_id[k] = kept[text]
            continue
        out.append((text, new_id.get(dep) if dep is not None else None))
        kept[text] = new_id[k] = len(out)
    return out


# ---------------------------------------------------------------------------- English
_ASKED_NOUN_RE = re.compile(
    rf"\b(?:which|what)\s+(?!(?:{_AUX}|of|the|a|an)\b)([a-z][\w-]*)", re.IGNORECASE
)
# a second question after the first's '?', opening like one ('… ? Until when does …?'); a
# sentence that is no question ('Thanks!', 'I need it for the audit.') is not split off
_NEXT_QUESTION_RE = re.compile(
    rf"(?<=\?)\s+(?=(?:(?:until|since|from|by|in|for|at|and)\s+)?(?:{_WH}|{_AUX})\b)",
    re.IGNORECASE,
)
_AND_RE = re.compile(r"^and\s+", re.IGNORECASE)
_REQUEST_RE = re.compile(
    r"(?<=[?.])\s+(?:(?:please|also|and)\s+)*(?:"
    + "|".join(sorted(lexicon.words("en_request_verbs"), key=len, reverse=True))
    + r")\b[^?]*$",
    re.IGNORECASE,
)
_PRONOUN_RE = re.compile(r"\b(?:it|its|they|their|them|he|his|him|she|her)\b", re.IGNORECASE)
_PERSONAL_RE = re.compile(r"\b(?:they|their|them|he|his|him|she|her)\b", re.IGNORECASE)
# a question that asks who: 'Who is …', '⟨A⟩ is on leave - who signs off …', 'which engineer'
_WHO_RE = re.compile(r"(?:^|[-–—,:;]\s*)\s*(?:who|whom)\b|^\s*which\s+[a-z]+\b", re.IGNORECASE)


def _en(q: str, params: OfflineParams) -> list[Part]:
    """Two questions joined by 'and', or asked one after the other ('…? Until when …?'), are
    decomposed one by one; a pronoun in the second stands for the first one's entity ('What
    is ⟨0⟩ and when was it published?'), 'that engineer' for what the first one asks. A
    request after the question ('… ? Give the staff ID.') says what the answer should hold: it
    stays with the question's last step, never a step of its own."""
    request = _REQUEST_RE.search(q)
    if request and request.start() > 0:
        asked_parts = _en(q[: request.start()], params)
        text, dep = asked_parts[-1]
        return [*asked_parts[:-1], (f"{text} {request.group(0).strip()}", dep)]
    pieces = [
        piece
        for sentence in _NEXT_QUESTION_RE.split(q.strip())  # 'Who …? When …?': two
        for piece in re.split(
            rf",?\s+and\s+(?={_WH}\b|{_AUX}\b)", _AND_RE.sub("", sentence), flags=re.I
        )  # fmt: skip
    ]
    if len(pieces) > 1 and all(tx.tokenize(MASK_RE.sub(" x ", p)) for p in pieces):
        parts: list[Part] = []
        subject = ""
        asked = _ASKED_NOUN_RE.search(pieces[0])
        first = 0  # the first question's last step: what 'that engineer' stands for
        for i, piece in enumerate(pieces):
            if i == 1:
                first = len(parts)
            names = MASK_RE.findall(piece)
            that = re.search(rf"\b(?:that|this|the same)\s+{asked.group(1)}\b", piece, re.I) \
                if asked and i else None  # fmt: skip
            # 'Who is the backup …, and what is their number?': a pronoun after a question
            # that asks who (or which one) stands for whom it finds, not for what it names
            pronoun = _PERSONAL_RE.search(piece) if i and _WHO_RE.search(pieces[0]) else None
            if that:  # 'which engineer …, and what is that engineer's grade?': the answer's
                piece = f"{piece[: that.start()]}#0{piece[that.end() :]}"  # '#0': see below
            elif pronoun:
                that = pronoun
                possessive = pronoun.group(0).lower() in ("their", "his", "her")
                owner = "#0's" if possessive else "#0"
                piece = f"{piece[: pronoun.start()]}{owner}{piece[pronoun.end() :]}"
            elif names and not subject:
                subject = f"⟨{names[0]}⟩"
            elif not names and subject:
                piece = _PRONOUN_RE.sub(subject, piece, count=1)
            sub = shift(_en_one(piece.strip().rstrip("?") + "?", params), len(parts))
            if that:  # the shifted '#0' is the first question's answer
                own = re.compile(rf"#{len(parts)}(?!\d)")
                sub = [(own.sub(f"#{first}", t), first if d is None and own.search(t) else d)
                       for t, d in sub]  # fmt: skip
            parts += sub
        return parts
    return _en_one(q, params)


def _en_one(q: str, params: OfflineParams) -> list[Part]:
    return (
        _comparison_en(q)
        or _wrapped_clause_en(q)
        or _nested_chain_en(q, params)
        or _subject_chain_en(q)
        or _role_chain_en(q)
        or _fronted_chain_en(q)
        or [(q, None)]
    )


# 'In ⟨E⟩, who did the star play?': the fronted name says whose star; the question asks of him
_FRONTED_RE = re.compile(
    rf"^in\s+(?:the\s+)?(?P<e>⟨\d+⟩),\s+(?P<wh>{_WH})\s+(?P<aux>{_AUX})\s+the\s+(?P<n>[a-z][\w-]*)"
    rf"\s+(?P<rest>[a-z].*)$",
    re.IGNORECASE,
)


def _fronted_chain_en(q: str) -> list[Part] | None:
    """'In ⟨E⟩, WH AUX the N V …?' -> ['N of ⟨E⟩?', 'WH AUX #1 V … in ⟨E⟩?']: an unnamed N
    that the fronted name owns is looked up first."""
    m = _FRONTED_RE.match(q.strip().rstrip(" ?"))
    if m is None or not is_noun(m.group("n")):
        return None
    asked = f"{m.group('wh')} {m.group('aux')} #1 {m.group('rest')} in {m.group('e')}?"
    return [(f"{m.group('n')} of {m.group('e')}?", None), (asked[0].upper() + asked[1:], 1)]


def _nested_chain_en(q: str, params: OfflineParams) -> list[Part] | None:
    """The nested-phrase chain, unless read inside out; then (or without one) the chain of a
    modifier that holds the slot ('X cast the singer who voiced which role')."""
    chain = chain_en(q, params)
    if chain and not _asks_too_early(chain):
        return chain
    return _modifier_chain_en(q) or chain


# 'The clerk hired by ⟨E⟩ later married whom?': a described subject, then its verb and the slot
_SUBJECT_ASKS_RE = re.compile(
    rf"^(?:the|a|an)\s+(?P<np>(?:[a-z][\w-]*\s+){{0,2}}?[a-z][\w-]*\s+(?:who|that|which|"
    rf"[a-z]+ing|{PARTICIPLE})\s+.*?)\s+(?P<ask>(?:[a-z]+ly\s+)?(?:[a-z]+ed|{PARTICIPLES}|"
    rf"[a-z]+s)\s+(?:who|whom|what|which)\b.*)$",
    re.IGNORECASE,
)


def _subject_chain_en(q: str) -> list[Part] | None:
    """A statement whose subject is described, not named, and whose verb asks: 'The clerk
    hired by ⟨E⟩ later married whom?' -> ['clerk hired by ⟨E⟩?', '#1 later married whom?']."""
    m = _SUBJECT_ASKS_RE.match(q.strip().rstrip(" ?"))
    if m is None or not MASK_RE.search(m.group("np")):
        return None
    if _SLOT_RE.search(m.group("np")) and not re.search(
        r"\b(?:who|that|which)\b", m.group("np"), re.IGNORECASE
    ):
        return None
    return [(m.group("np") + "?", None), (f"#1 {m.group('ask')}?", 1)]


def _asks_too_early(chain: list[Part]) -> bool:
    """Whether a chain's last step asks nothing while an earlier one holds the question's
    slot: the nesting was read inside out ('singer who voiced which role in ⟨E⟩?', then
    '⟨F⟩ cast #1?')."""
    return not _SLOT_RE.search(chain[-1][0]) and any(_SLOT_RE.search(t) for t, _ in chain[:-1])


# 'When was [the clerk who stepped down as …] born?', 'What was [the stadium, at which ⟨E⟩
# took place,] renamed for …?': the whole relative clause names the one asked about, and
# the closing participle (with its phrase) is what is asked of it
_WRAPPED_RE = re.compile(
    rf"^(?P<head>(?:(?:in|on|at|from|since|for|by)\s+)?{_WH}(?:\s+[a-z][\w-]*)?\s+{_AUX})\s+"
    rf"(?P<np>the\s+(?:(?!(?:of|in|on|at|by|for|from|with|to)\s)[a-z][\w-]*\s+){{0,3}}?"
    rf"[a-z][\w-]*,?\s+(?:(?:in|on|at|from|for|with|by|of)"
    rf"\s+)?(?:that|who|whom|which|where)\s+(?:⟨\d+⟩\s+)*[a-z][\w-]*.*?),?\s+"
    rf"(?P<tail>(?:(?:[a-z]+ly|first|last)\s+)?{PARTICIPLE}"
    rf"(?:\s+(?:in|on|at|by|for|from|to|of|with|during|as|after|before)"
    rf"\b[^,]*)?)$",
    re.IGNORECASE,
)


def _wrapped_clause_en(q: str) -> list[Part] | None:
    """'WH was the N that …, PARTICIPLE …?' -> ['N that …?', 'WH was #1 PARTICIPLE …?']: the
    clause runs up to the question's own closing participle, not to the first name in it."""
    m = _WRAPPED_RE.match(q.strip().rstrip(" ?"))
    if not m:
        return None
    inner = NP_LEAD_RE.sub("", m.group("np")).replace(",", "").strip()
    if len(tx.tokenize(MASK_RE.sub(" x ", inner))) < 3:
        return None
    return [(inner + "?", None), (f"{m.group('head')} #1 {m.group('tail')}?", 1)]


# A modifier holding the question's slot, right after an unnamed noun phrase: 'in a
# Danish radio serial written by whom', 'beat the boxer who was the first to defeat which
# champion'. The noun phrase is what the rest of the sentence leads to.
_SLOT_RE = re.compile(
    r"\b(?:what|which|who|whom|when|where|how\s+(?:many|much|long|old))\b", re.IGNORECASE
)
_MODIFIER_RE = re.compile(
    rf"\s+(?P<mod>(?:who|that|which|whose)\s+|(?:[a-z]+ly\s+)?{PARTICIPLE}\s+(?=\S))"
)
_NP_BEFORE_RE = re.compile(
    r"(?P<det>a|an|the)\s+(?P<np>(?:(?:[a-z][\w-]*|⟨\d+⟩)\s+){0,4}?(?:[a-z][\w-]*|⟨\d+⟩))$",
    re.IGNORECASE,
)


def _noun_phrase_before(text: str) -> re.Match[str] | None:
    """The noun phrase that ends `text`, from its nearest article ('a ⟨E⟩' of 'as a ⟨F⟩ on a
    ⟨E⟩'), holding no preposition or conjunction; None when none ends it."""
    for det in reversed(list(re.finditer(r"\b(?:a|an|the)\s", text, re.IGNORECASE))):
        np = _NP_BEFORE_RE.match(text, det.start())
        if np is not None and not any(w.lower() in _NP_STOP for w in np.group("np").split()):
            return np
    return None


_NAME_AFTER_FIRST_RE = re.compile(r"^\S+\s+(?:.*\s)?[A-Z]")
_NP_STOP = frozenset({"of", "in", "on", "at", "by", "for", "from", "with", "to", "and", "or"})


def _modifier_chain_en(q: str) -> list[Part] | None:
    """A statement that asks in a modifier of an unnamed noun phrase: '⟨E⟩ is a minor figure
    in a Danish radio serial written by whom?' -> ['⟨E⟩ is a minor figure in which Danish
    radio serial?', '#1 written by whom?']. The first step finds the noun phrase's
    name from the named subject; the second asks the modifier of it."""
    body = q.strip().rstrip(" ?")
    if re.match(rf"^(?:{_WH}|{_AUX})\b", body, re.IGNORECASE):
        return None
    slots = list(_SLOT_RE.finditer(body))
    if not slots or slots[-1].start() == 0:
        return None
    slot = slots[-1].start()
    for mod in reversed([m for m in _MODIFIER_RE.finditer(body) if m.start() < slot]):
        np = _noun_phrase_before(body[: mod.start()])
        if np is None:
            continue
        head = np.group("np").split()[-1]
        named = MASK_RE.fullmatch(head) is not None  # 'a ⟨E⟩' is one of a kind; 'the ⟨E⟩' named
        if (not is_noun(head) and not named) or (named and np.group("det").lower() == "the"):
            continue
        prefix = body[: np.start()].strip()
        if np.start() == 0 or not (MASK_RE.search(prefix) or _NAME_AFTER_FIRST_RE.search(prefix)):
            return None  # the noun phrase is reached from nothing the question names
        rest = body[mod.start() :].strip()
        rest = re.sub(r"^(?:who|that|which)\s+", "", rest, flags=re.IGNORECASE)
        rest = re.sub(r"^whose\s+", "'s ", rest, flags=re.IGNORECASE)
        first = f"{prefix} which {np.group('np')}?"
        return [(first, None), (tx.normalize_space(f"#1 {rest}").replace(" 's", "'s") + "?", 1)]
    return None


_ROLE_CHAIN_RE = re.compile(
    rf"^(?P<head>{_WH}\s+{_AUX}\s+)the\s+(?P<rel>(?:[a-z][\w-]*\s+){{0,3}}?[a-z][\w-]*)\s+of\s+"
    rf"the\s+(?P<role>(?:[a-z][\w-]*\s+){{0,2}}?[a-z][\w-]*)\s*\??$",
    re.IGNORECASE,
)


def _role_chain_en(q: str) -> list[Part] | None:
    """'Who is the R of the X?' naming nothing: X is a role or thing the documents name
    ('the supplier'), so first find who or what it is, then its R."""
    m = _ROLE_CHAIN_RE.match(q.strip())
    if not m:
        return None
    return [(f"{m.group('head')}the {m.group('role')}?", None), (f"{m.group('rel')} of #1?", 1)]


_CHOICE_RE = re.compile(
    rf"^(?P<head>(?:{_WH}|{_AUX})\b[^,]*?),\s*(?P<items>[^,]+(?:,[^,]+)*?,?\s+or\s+.+?)\s*\??$",
    re.IGNORECASE,
)
_BOTH_RE = re.compile(rf"^(?P<aux>{_AUX})\s+(?:both\s+)?(?P<body>.+?)\s*\??$", re.IGNORECASE)
# 'the author who was born first', 'the author born first', 'whose author is younger'
_ROLE_RE = re.compile(
    rf"^(?:(?:{_WH})\s+(?:[a-z]+\s+)?)?(?:(?:has|had|have|with)\s+)?(?:"
    rf"whose\s+(?P<whose>[a-z][\w-]*?)s?\s+(?P<whose_rest>.+)"
    rf"|the\s+(?P<role>[a-z][\w-]*?)s?\s+(?P<rest>(?:who|that|which)\b.*|"
    rf"(?:(?:was|were|is)\s+)?{PARTICIPLE}\b.*))$",
    re.IGNORECASE,
)
# 'director of film ⟨A⟩': the compared thing is a role of the item, looked up first
_OF_ITEM_RE = re.compile(r"^(?:the\s+)?(?P<rel>[a-z][a-z ]{1,30}?)\s+of\s+(?P<item>.+)$")


def _comparison_en(q: str) -> list[Part] | None:
    """One hop per compared item ('…, A or B?', 'Are A and B both …?'), lookup hops first
    when the compared thing is a role of each item."""
    m = _CHOICE_RE.match(q.strip())
    if m:
        head = m.group("head")
        items = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", m.group("items"))
    else:
        both = _BOTH_RE.match(q.strip())
        split = _split_pair(both.group("body")) if both else None
        if not split:
            return None
        items, head = split
    items = [i.strip(" ?,") for i in items if i.strip(" ?,")]
    if len(items) < 2 or any(len(i.split()) > PARAMS.coordinated_item_words for i in items):
        return None
    items, shared_role = _shared_role(items)
    role = _ROLE_RE.match(head.strip())
    rel = _relation_words(_role_rest(role) if role else head)
    if role or shared_role:
        name = (role.group("role") or role.group("whose")) if role else shared_role
        firsts = [(f"{name} of {item}?", None) for item in items]
        return firsts + [(f"#{k} {rel}".strip() + "?", k) for k in range(1, len(items) + 1)]
    return [(f"{item} {rel}".strip() + "?", None) for item in items]


def _role_rest(role: re.Match[str]) -> str:
    return role.group("rest") or role.group("whose_rest") or ""


_LEAD_ROLE_RE = re.compile(
    r"^(?:the\s+)?(?P<role>[a-z][\w-]*?)s?\s+of\s+(?:the\s+)?(?:[a-z]+\s+)?$"
)


def _split_pair(body: str) -> tuple[list[str], str] | None:
    """'⟨A⟩ and ⟨B⟩ share …' -> ([⟨A⟩, ⟨B⟩], 'share …'); 'A longer than B' -> ([A, B],
    'longer'). The second item repeats the first one's leading words ('director of film ⟨A⟩
    and director of film ⟨B⟩') and then runs while its words are names or masked spans."""
    than = re.match(
        r"^(?:the\s+)?(?P<a>.+?)\s+(?P<cmp>(?:more|less)\s+\w+|\w+er)\s+than\s+(?:the\s+)?(?P<b>.+)$",
        body,
    )
    if than and _named(than.group("a")) and _named(than.group("b")):
        return [than.group("a"), than.group("b")], than.group("cmp")
    m = re.match(r"^(?P<first>.+?)\s+(?:and|or)\s+(?P<tail>.+)$", body)
    if not m or not _named(m.group("first")):
        return None
    first_words = m.group("first").split()
    lead = [
        w for w in first_words[: next((i for i, w in enumerate(first_words) if _name_word(w)), 0)]
    ]
    words = m.group("tail").split()
    start = len(lead) if [w.lower() for w in words[: len(lead)]] == [w.lower() for w in lead] else 0
    taken = start
    for i in range(start, len(words)):
        if not _name_word(words[i]):
            break
        taken = i + 1
    if taken == start or taken >= len(words):
        return None
    first = m.group("first")
    items = [first, " ".join(words[:taken])]
    if lead and not start:  # 'films ⟨A⟩ and ⟨B⟩': the shared words belong to both
        items[0] = " ".join(first_words[len(lead) :])
        role = _LEAD_ROLE_RE.match(" ".join(lead) + " ")
        if role:  # 'the directors of films ⟨A⟩ and ⟨B⟩'
            items = [f"{role.group('role')} of {item}" for item in items]
    return items, " ".join(words[taken:])


def _name_word(word: str) -> bool:
    bare = word.strip("¿¡?\"“”'’(),:")
    return bool(MASK_RE.search(word)) or bare[:1].isupper() or bare.isdigit() or not bare


def _named(text: str) -> bool:
    return bool(MASK_RE.search(text) or re.search(r"\b[A-Z]", text))


def _shared_role(items: list[str]) -> tuple[list[str], str]:
    """'director of film ⟨A⟩', 'director of film ⟨B⟩' -> ([film ⟨A⟩, film ⟨B⟩], 'director')."""
    found = [_OF_ITEM_RE.match(i) for i in items]
    if all(found):
        rels = {f.group("rel") for f in found if f}
        if len(rels) == 1:
            return [f.group("item") for f in found if f], rels.pop()
    return items, ""


def _relation_words(text: str) -> str:
    """The content words of a comparison head: no question, function or comparison words."""
    words = [
        w
        for w in re.findall(r"[A-Za-z][\w'-]*", MASK_RE.sub(" ", text))
        if w.lower() not in tx.EN_STOPWORDS
        and w.lower() not in tx.EN_QUESTION_WORDS
        and w.lower() not in _COMPARATIVE
        and w.lower() not in {"both", "same", "either"}
    ]
    return " ".join(words)
