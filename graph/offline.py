"""Reasoning without a language model: the zero-configuration mode and the LLM's fallback.

Every step of graph.protocols.Reasoner done with patterns, term overlap and extraction:
keyword routing, clause/entity decomposition, bridging by the entity the previous hop's best
evidence names, term-coverage sufficiency, and an extractive answer with [n] citations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from graph import text as tx
from graph.protocols import EvidenceItem, HopView, Usage
from graph.schemas import (
    Decomposition,
    EvidenceSentence,
    EvidenceVerdict,
    PlanDecision,
    RouteDecision,
    SubQuestion,
)
from ingest.models import Hit

_GREETING_RE = re.compile(
    r"^\s*(hi|hello|hey|howdy|good (morning|afternoon|evening)|thanks|thank you|thx|bye|goodbye|"
    r"see you|ok(ay)?|cool|great|nice|who are you|what can you do|how are you|"
    r"你好|您好|嗨|哈喽|早上好|晚上好|下午好|谢谢|多谢|感谢|再见|拜拜|好的|你是谁|你能做什么|你会什么)"
    r"[\s!！。.,，?？~]*(there|hopwise|you|a lot|so much|呀|啊|哦)?[\s!！。.,，?？~]*$",
    re.IGNORECASE,
)
_GENERAL_RE = re.compile(
    r"^\s*(what is|what's|calculate|compute)?\s*[\d\s+\-*/().^%=]+\??\s*$"
    r"|^\s*(translate|翻译)\b"
    r"|^\s*(tell me a joke|讲个笑话|write a poem|写一首诗)",
    re.IGNORECASE,
)
_PRONOUN_RE = re.compile(
    r"\b(it|its|it's|they|them|their|this|that|these|those|he|him|his|she|her|hers)\b"
    r"|它|他|她|其|该|这个|那个|这些|那些|上述|此",
    re.IGNORECASE,
)
_FOLLOWUP_START_RE = re.compile(
    r"^\s*(and|what about|how about|also|then|so)\b|^\s*(那|那么|还有|另外|以及|然后|而)",
    re.IGNORECASE,
)

# Relation words that mean the same thing in questions and in passages.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "husband": ("married", "wife", "spouse", "marri"),
    "wife": ("married", "husband", "spouse", "marri"),
    "spouse": ("married", "wife", "husband", "marri"),
    "father": ("son", "daughter", "child", "born"),
    "mother": ("son", "daughter", "child", "born"),
    "born": ("birth", "native"),
    "birth": ("born",),
    "die": ("death", "died"),
    "death": ("died", "die"),
    "director": ("direct", "film"),
    "direct": ("director",),
    "founder": ("found", "establish", "creat"),
    "found": ("founder", "establish"),
    "author": ("written", "writer", "wrote", "novel", "book"),
    "wrote": ("author", "writer", "written"),
    "nationality": ("american", "british", "citizen", "country"),
    "country": ("nation", "located"),
    "capital": ("seat", "city"),
    "performer": ("sung", "singer", "recorded", "band", "artist"),
    "composer": ("composed", "music"),
    "produc": ("producer", "produced"),
    "locat": ("located", "situated", "based"),
    "educat": ("studied", "graduated", "university", "school", "college"),
    "study": ("studied", "graduated", "university", "educated"),
    "play": ("played", "starred", "role", "cast"),
    "member": ("played", "member", "team"),
    "导演": ("执导", "导演"),
    "丈夫": ("结婚", "配偶", "妻子", "嫁给"),
    "妻子": ("结婚", "配偶", "丈夫", "娶"),
    "父亲": ("儿子", "女儿", "之子", "之女"),
    "母亲": ("儿子", "女儿", "之子", "之女"),
    "出生地": ("出生", "生于", "出生于"),
    "创始人": ("创办", "创立", "创建", "成立"),
    "作者": ("著", "撰写", "创作"),
}

_EN_COMPARATIVE_RE = re.compile(
    r"\b(first|earlier|earliest|later|latest|last|older|oldest|younger|youngest|more|most|less|"
    r"fewer|longer|shorter|larger|largest|bigger|smaller|higher|highest|taller|tallest|lower|"
    r"closer|farther|further|better|same|both|different|either|sooner|recent|newer|newest)\b",
    re.IGNORECASE,
)
_ZH_CONJ = ("和", "与", "及", "以及", "跟", "同", "还是", "或", "或者", "、")
_ZH_CLAUSE_SPLIT_RE = re.compile(
    r"[，,；;？?]\s*(?:以及|并且|而且|同时|另外|还有|并)?|(?:以及|并且)"
)
_ZH_QUESTION_MARK_RE = re.compile(
    r"什么|如何|哪些|哪|多少|几|何|吗|是否|怎样|怎么|谁|为什么|为何|呢"
)


def _usage() -> Usage:
    return Usage(mode="offline")


class OfflineReasoner:
    """Reasoner with no model: patterns, term overlap and verbatim extraction."""

    name = "offline"

    # ------------------------------------------------------------------ route
    def route(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> tuple[RouteDecision, Usage]:
        """Greetings and pure chit-chat are simple; anything that could be in the KB is complex."""
        standalone = rewrite_followup(question, history)
        stripped = question.strip()
        if not stripped:
            return RouteDecision(
                standalone_question=standalone, route="simple", reason="Empty message."
            ), _usage()
        if _GREETING_RE.match(stripped):
            return RouteDecision(
                standalone_question=standalone,
                route="simple",
                reason="Greeting or chit-chat; no documents needed.",
            ), _usage()
        if _GENERAL_RE.match(stripped):
            return RouteDecision(
                standalone_question=standalone,
                route="simple",
                reason="General request that documents cannot answer.",
            ), _usage()
        return RouteDecision(
            standalone_question=standalone,
            route="complex",
            reason="May need facts from the knowledge base.",
        ), _usage()

    # -------------------------------------------------------------- decompose
    def decompose(self, question: str) -> tuple[Decomposition, Usage]:
        """Comparisons split per entity, conjunctions per part, relation chains into #k hops."""
        subs = decompose_question(question)
        return Decomposition(sub_questions=subs), _usage()

    # ----------------------------------------------------------------- bridge
    def bridge(
        self, sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> tuple[str, Usage]:
        """Fill each #k with the entity the best evidence of hop k names."""
        return fill_placeholders(sub_question, earlier, evidence), _usage()

    # ---------------------------------------------------------------- extract
    def extract(
        self, sub_question: str, hits: Sequence[Hit]
    ) -> tuple[list[EvidenceSentence], Usage]:
        """The sentences of each relevant hit that best match the sub-question, verbatim.

        A hit covering under 2/3 of the sub-question's terms yields nothing: it stays in the
        pool, but no sentence of it is presented as evidence for this sub-question.
        """
        question = tx.PLACEHOLDER_RE.sub(" ", sub_question)
        q_terms = tx.term_set(question)
        expanded = expand_terms(q_terms)
        out: list[EvidenceSentence] = []
        for hit in hits:
            if _part_relevance(question, hit.title, hit.text) < RELEVANT_COVERAGE:
                continue
            for sentence in best_sentences(expanded, hit.text, limit=2, title=hit.title):
                out.append(EvidenceSentence(chunk_id=hit.chunk_id, text=sentence))
        return out, _usage()

    # ------------------------------------------------------------------- plan
    def plan(
        self,
        question: str,
        remaining: Sequence[str],
        hops: Sequence[HopView],
        evidence: Sequence[EvidenceItem],
    ) -> tuple[PlanDecision, Usage]:
        """Keep retrieving while sub-questions remain; otherwise chase one new strong entity."""
        if remaining:
            return PlanDecision(action="retrieve", reason="Sub-questions remain."), _usage()
        follow_up = _follow_up(question, hops)
        if follow_up:
            return PlanDecision(
                action="retrieve", reason="The last hop named a new entity.", follow_up=follow_up
            ), _usage()
        return PlanDecision(action="evaluate", reason="Every sub-question was searched."), _usage()

    # --------------------------------------------------------------- evaluate
    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem]
    ) -> tuple[EvidenceVerdict, Usage]:
        """Enough when the evidence covers the question's content terms and every part of it."""
        return judge_coverage(question, evidence), _usage()

    # ----------------------------------------------------------------- answer
    def answer(
        self, question: str, evidence: Sequence[EvidenceItem], missing: Sequence[str]
    ) -> Iterator[str | Usage]:
        """An extractive answer: the best evidence sentences, each with its [n] citation."""
        yield from compose_answer(question, evidence, missing)
        yield _usage()

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]:
        """A short reply to greetings; an honest note for general questions."""
        yield direct_reply(question)
        yield _usage()


# ====================================================================== routing helpers
def _main_entity(text: str) -> str | None:
    """What a question is about: a title or name, else a contract party ('供货方', 'the
    supplier'), else its first content word."""
    zh = tx.language_of(text) == "zh"
    if zh:
        phrases = [t for t in tx.coverage_terms(text) if len(t) >= 2 and not t.isdigit()]
        ents = tx.quoted_titles(text) + tx.cjk_org_names(text) + tx.cjk_names(text) + phrases
        return ents[0] if ents else None
    ents = [e for e in tx.extract_entities(text) if not tx.years(e) or len(e) > 4]
    if ents:
        return max(ents[:3], key=len)
    role = re.search(rf"\bthe\s+(?:{EN_ROLES})\b", text, re.IGNORECASE)
    if role:
        return role.group(0)
    terms = tx.tokenize(text)
    return terms[0] if terms else None


def rewrite_followup(question: str, history: Sequence[dict[str, str]]) -> str:
    """Attach the previous question's main entity to a follow-up with a pronoun or ellipsis."""
    previous = [h.get("content", "") for h in history if h.get("role") == "user"]
    previous = [p for p in previous if p.strip() and p.strip() != question.strip()]
    if not previous:
        return question
    q = question.strip()
    own_entities = tx.extract_entities(q)
    short = len(tx.tokenize(q)) <= 3
    has_pronoun = bool(_PRONOUN_RE.search(q))
    elliptic = bool(_FOLLOWUP_START_RE.match(q))
    if not (has_pronoun or elliptic or (short and not own_entities)):
        return question
    swapped = _swap_role(q, previous[-1])
    if swapped:
        return swapped
    entity = None
    for prev in reversed(previous):
        entity = _main_entity(prev)
        if entity:
            break
    if not entity or entity.lower() in q.lower():
        return question
    zh = tx.language_of(q) == "zh"
    body = _FOLLOWUP_START_RE.sub("", q).strip() or q
    if has_pronoun:
        replaced = _replace_first_pronoun(body, entity, zh)
        if replaced != body:
            return replaced
    if zh:
        return f"{entity}的{body.lstrip('的')}"
    body = body[0].lower() + body[1:] if body else body
    return f"{body.rstrip('?？ ')} of {entity}?"


_FOLLOWUP_TAIL_RE = re.compile(r"(?:呢|吗|怎么样|如何)?[\s?？。!！]*$")


def _swap_role(q: str, previous: str) -> str | None:
    """'那采购方呢？' after '供货方的法定代表人是谁？' -> '采购方的法定代表人是谁？': the same
    question about another party of the contract."""
    body = _FOLLOWUP_TAIL_RE.sub("", _FOLLOWUP_START_RE.sub("", q).strip()).strip()
    if tx.language_of(body) == "en":
        body = re.sub(r"^(?:the\s+)", "", body.rstrip(" ?"), flags=re.IGNORECASE)
        m = re.search(rf"\bthe\s+({EN_ROLES})\b", previous, re.IGNORECASE)
        if m and re.fullmatch(EN_ROLES, body, re.IGNORECASE) and body.lower() != m.group(1).lower():
            return previous[: m.start(1)] + body.lower() + previous[m.end(1) :]
        return None
    named, bare = _zh_names(body), body.strip('《》"“”「」『』')
    if named and named[0] == bare:  # '那比亚迪呢？' after '特斯拉的交付量是多少？'
        before = [n for n in _zh_names(previous) if n != bare]
        return previous.replace(before[0], bare, 1) if before else None
    terms = tx.coverage_terms(body)
    if len(terms) != 1 or zh_role(body) != terms[0]:
        return None
    for term in tx.coverage_terms(previous):
        if zh_role(term) == term and term != body and term in previous:
            return previous.replace(term, body, 1)
    return None


def _zh_names(text: str) -> list[str]:
    """Titles, organisations and names in a Chinese text, whole names before their parts."""
    found = tx.quoted_titles(text) + tx.cjk_org_names(text)
    return found + [n for n in tx.cjk_names(text) if not any(n in f for f in found)]


def _replace_first_pronoun(body: str, entity: str, zh: bool) -> str:
    match = _PRONOUN_RE.search(body)
    if not match:
        return body
    word = match.group(0)
    if zh:
        return body[: match.start()] + entity + body[match.end() :]
    possessive = word.lower() in {"its", "their", "his", "her", "hers"}
    repl = f"{entity}'s" if possessive else entity
    return body[: match.start()] + repl + body[match.end() :]


def direct_reply(question: str) -> str:
    zh = tx.language_of(question) == "zh"
    q = question.strip()
    if re.search(r"thank|谢", q, re.IGNORECASE):
        return "不客气！还有什么想查的吗？" if zh else "You're welcome! Anything else to look up?"
    if re.search(r"bye|再见|拜拜", q, re.IGNORECASE):
        return "再见！" if zh else "Goodbye!"
    if _GREETING_RE.match(q):
        if zh:
            return "你好！我是 Hopwise，可以根据知识库中的文档回答问题并给出引用。请问想了解什么？"
        return (
            "Hello! I'm Hopwise. I answer questions from your team's documents, with "
            "citations. What would you like to know?"
        )
    if zh:
        return (
            "离线模式（未配置语言模型）无法在没有文档的情况下回答常识性问题；"
            "请配置 LLM（HOPWISE_LLM_BASE_URL、HOPWISE_LLM_MODEL），或就知识库中的内容提问。"
        )
    return (
        "Offline mode cannot answer general knowledge questions without documents; configure "
        "an LLM (HOPWISE_LLM_BASE_URL, HOPWISE_LLM_MODEL) or ask about your documents."
    )


# ================================================================== decomposition
def decompose_question(question: str) -> list[SubQuestion]:
    q = tx.normalize_space(question)
    if not q:
        return [SubQuestion(id=1, question=question)]
    zh = tx.language_of(q) == "zh"
    parts = _decompose_zh(q) if zh else _decompose_en(q)
    subs: list[SubQuestion] = []
    for text, dep in parts[: tx.MAX_SUB_QUESTIONS]:
        subs.append(SubQuestion(id=len(subs) + 1, question=text, depends_on=dep))
    return subs or [SubQuestion(id=1, question=q)]


Part = tuple[str, int | None]


EN_ROLES = (
    "supplier|purchaser|buyer|seller|vendor|contractor|subcontractor|lessor|lessee|landlord|"
    "tenant|borrower|lender|licensor|licensee|guarantor|consignor|consignee|party a|party b"
)
_EN_ROLE_CHAIN_RE = re.compile(
    rf"^(?:who|what|which)\s+(?:is|are|was|were)\s+the\s+(?P<rel>[a-z][a-z ]{{1,40}}?)\s+of\s+"
    rf"the\s+(?P<role>{EN_ROLES})\s*\??$",
    re.IGNORECASE,
)


_EN_ROLE_POSSESSIVE_RE = re.compile(
    rf"^(?:who|what|which)\s+(?:is|are|was|were)\s+the\s+(?P<role>{EN_ROLES})['’]s?\s+"
    rf"(?P<rel>[a-z][a-z ]{{1,40}}?)\s*\??$",
    re.IGNORECASE,
)


def _role_chain_en(q: str) -> list[Part] | None:
    """'Who is the legal representative of the supplier?' -> ['Who is the supplier?',
    'legal representative of #1?']: a contract names the party, another record its details."""
    m = _EN_ROLE_CHAIN_RE.match(q.strip()) or _EN_ROLE_POSSESSIVE_RE.match(q.strip())
    if not m:
        return None
    return [(f"Who is the {m.group('role').lower()}?", None), (f"{m.group('rel')} of #1?", 1)]


def _decompose_en(q: str) -> list[Part]:
    role_chain = _role_chain_en(q)
    if role_chain:
        return role_chain
    comparison = _split_comparison_en(q)
    if comparison:
        relation, items = comparison
        return _per_item_parts(relation, items)
    return _chain_en(q)


def _per_item_parts(relation: str, items: list[str]) -> list[Part]:
    """One hop per compared item; nested items ('director of film X') get a lookup hop first.

    Lookup hops come first so the graph can retrieve them together.
    """
    nested = re.match(r"^the\s+([a-z][\w ]{1,30}?)\s+(?:who|that|which|whose)\b(.*)$", relation)
    firsts: list[str] = []
    seconds: list[str | None] = []
    for item in items:
        inner = re.match(r"^(?:the\s+)?([a-z][a-z ]{1,30}?)\s+of\s+(.+)$", item)
        if nested:
            firsts.append(f"{nested.group(1)} of {item}?")
            seconds.append(_relation_of(nested.group(2)))
        elif inner:
            firsts.append(f"{item}?")
            seconds.append(_relation_of(relation))
        else:
            firsts.append(f"{item} {_relation_of(relation)}".strip())
            seconds.append(None)
    parts: list[Part] = [(f, None) for f in firsts]
    for i, rel in enumerate(seconds, start=1):
        if rel is not None:
            parts.append((f"#{i} {rel}".strip(), i))
    return parts


def _split_comparison_en(q: str) -> tuple[str, list[str]] | None:
    """(relation, [entity A, entity B, ...]) for 'Which ..., A or B?' style questions."""
    body = q.rstrip(" ?.")
    m = re.match(
        r"^(?P<head>(?:which|who|what|whose|where|when)\b.*?),\s*(?P<items>.+\bor\b.+)$",
        body,
        re.IGNORECASE,
    )
    if m:
        items = _split_items(m.group("items"))
        if len(items) >= 2:
            return _role_relation(m.group("head")), items
    m = re.match(
        r"^(?i:is|are|was|were|did|do|does|has|have|had)\s+(?:both\s+)?(?P<items>.+?),?\s+"
        r"(?P<rest>(?:both\b|the\s+same\b|share|have|has|had|born|died|located|released|"
        r"originate|come|came|hail|belong|from|older|younger|[a-z]+ed\b|[a-z]+er\b|"
        r"of the same|in the same).*)$",
        body,
    )
    if (
        m
        and re.search(r"\b(?:and|or)\b", m.group("items"))
        and (_EN_COMPARATIVE_RE.search(m.group("rest")) or re.search(r"\bboth\b", body, re.I))
    ):
        items = _split_items(m.group("items"))
        if len(items) >= 2:
            rest = re.sub(r"^(?:have|has|had)\s+", "", m.group("rest"))
            return _role_relation(rest), items
    return None


_ROLE_HEAD_RE = re.compile(
    r"^(?:(?:which|what)\s+\w+\s+)?(?:(?:has|had|have|with)\s+)?(?:the|whose)\s+"
    r"(?P<role>[a-z]+?)s?\s+(?:who\s+|that\s+|which\s+)?(?P<rest>.*)$",
    re.IGNORECASE,
)
_ROLE_VERB_RE = re.compile(
    r"\b(?:born|died|die|was|is|were|are|older|younger|lived|live|share|from|nationality|"
    r"country|citizen)\b",
    re.IGNORECASE,
)


def _role_relation(head: str) -> str:
    """Normalise 'Which film whose director was born first' to 'the director who was born
    first' (a nested role), or strip the question word from a plain comparison head."""
    m = _ROLE_HEAD_RE.match(head.strip())
    if (
        m
        and _ROLE_VERB_RE.search(m.group("rest"))
        and m.group("role").lower() not in {"same", "most", "more", "least", "first", "last"}
    ):
        return f"the {m.group('role').lower()} who {m.group('rest')}"
    return _strip_wh(head)


def _strip_wh(text: str) -> str:
    """'Which film came out first' -> 'film came out first' (relation words only matter)."""
    return re.sub(
        r"^(?:which|who|what|whose|where|when)\s+(?:[a-z]+\s+)?(?:is|was|are|were|"
        r"has|had|have|did|does|do)\s+",
        "",
        text.strip(),
        flags=re.IGNORECASE,
    )


def _split_items(text: str) -> list[str]:
    """'A, B or C' -> [A, B, C]; 'the directors of films A and B' -> [director of film A, ...]."""
    text = text.strip()
    prefix = ""
    shared = re.match(
        r"^(?:both\s+)?(?:the\s+)?([a-z]+?)s\s+of\s+(?:the\s+)?(?:([a-z]+?)s?\s+)?"
        r"(?=[A-Z\"“¿¡])",
        text,
    )
    if shared:
        prefix = f"{shared.group(1)} of {shared.group(2) or ''}".strip() + " "
        text = text[shared.end() :]
    else:
        text = re.sub(r"^(?:both\s+)?(?:the\s+)?(?:[a-z]+,?\s+)?(?=[A-Z\"“¿¡])", "", text)
    items = re.split(r",?\s+(?:or|and)\s+", text)
    items = [prefix + i.strip(' ,"“”') for i in items if i.strip(' ,"“”')]
    return items if all(len(i) <= 120 for i in items) else []


_AGE_RE = re.compile(r"\b(?:older|oldest|younger|youngest)\b", re.IGNORECASE)


def _relation_of(text: str) -> str:
    """The relation words of a comparison head ('who was born earlier' -> 'born')."""
    if _AGE_RE.search(text) and not re.search(r"\bborn\b", text):
        text = f"{text} born"
    words = [
        w
        for w in re.findall(r"[A-Za-z']+", text)
        if w.lower() not in tx.EN_STOPWORDS
        and w.lower() not in tx.EN_QUESTION_WORDS
        and not _EN_COMPARATIVE_RE.fullmatch(w)
    ]
    return " ".join(words)


# A nested noun phrase: 'the capitol of', 'the state that', 'the award X received'.
_NP_START_RE = re.compile(
    r"(?:\b(?:the)|^The)\s+(?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*\s+(?=(?:of|that|which|who|whom|"
    r"whose|where|when|with|in|at|by|for|from|sharing|named|called|born|founded|located|"
    r"played|produced|directed|written|known)\b|the\s+[A-Z]|[A-Z])"
)
_NP_LEAD_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# One verb group closing a relative clause: 'is', 'died', 'can be found', 'was born in'.
_VERB_GROUP_RE = re.compile(
    r"(?:(?:\s+(?:can|could|may|might|will|would|be|been|being|has|have|had|is|are|was|were))*"
    r"\s+(?:[a-z]+ed|born|found|located|fought|made|wrote|won|built|held|sung|known|set|lived)"
    r"(?:\s+(?:in|for|on|at|with|by|from))?"
    r"|\s+(?:is|are|was|were))(?=\s|$)"
)
MAX_CHAIN_HOPS = 4


def _chain_en(q: str) -> list[Part]:
    """Nested relations, innermost first: 'the capitol of the state that won X' ->
    ['state that won X', 'capitol of #1', ... the question with #k].
    """
    body = q.strip().rstrip(" ?")
    anchor = _anchor_entity(body)
    if not anchor:
        return _relative_chain(q, body)
    pos = body.find(anchor[0], anchor[1])
    end = pos + len(anchor[0])
    starts = [m.start() for m in _NP_START_RE.finditer(body) if m.end() <= pos]
    possessive = re.match(r"['’]s?\s+((?:[a-z][\w-]*)(?:\s+of\s+[a-z][\w-]*)?)", body[end:])
    hops: list[str] = []
    if possessive:
        hops.append(f"{possessive.group(1)} of {anchor[0]}?")
        inner_start, inner_end = pos, end + possessive.end()
    elif starts:
        inner_start = starts.pop()
        # 'played X in My Fair Lady': a named place or work right after the anchor belongs to it
        named = re.match(r"\s+(?:in|on|at|of|from)\s+(?:the\s+)?[A-Z][^,;?]*?(?=\s+[a-z]|$)",
                         body[end:])  # fmt: skip
        end += named.end() if named else 0
        tail = _VERB_GROUP_RE.match(body[end:]) if _relative(body[inner_start:pos]) else None
        inner_end = end + (tail.end() if tail else 0)
        hops.append(_NP_LEAD_RE.sub("", body[inner_start:inner_end]).strip() + "?")
    else:
        return [(q, None)]
    room = MAX_CHAIN_HOPS - 2  # the innermost hop and the outer question
    starts = starts[-room:] if len(starts) > room else starts
    boundary = inner_start
    for start in reversed(starts):
        segment = _NP_LEAD_RE.sub("", body[start:boundary].strip())
        clause_tail = _clause_tail(segment, body[inner_end:])
        hops.append(tx.normalize_space(f"{segment} #{len(hops)} {clause_tail}") + "?")
        inner_end += len(clause_tail)
        boundary = start
    outer = tx.normalize_space(f"{body[:boundary]} #{len(hops)} {body[inner_end:]}") + "?"
    if not _is_trivial(outer):
        hops.append(outer)
    if len(hops) < 2:
        return [(q, None)]
    return [(h, i if i else None) for i, h in enumerate(hops)]


_OPEN_CLAUSE_RE = re.compile(r"\b(?:that|which|who|whom|whose|where)$")


def _clause_tail(segment: str, rest: str) -> str:
    """The verb that closes a relative clause around the inner hop: in 'the city where the
    author of X died', 'died' belongs to 'city where #1 died', not to the outer question."""
    if not _OPEN_CLAUSE_RE.search(segment.strip()):
        return ""
    tail = _VERB_GROUP_RE.match(rest)
    return tail.group(0) if tail else ""


_REL_NP_RE = re.compile(
    r"\bthe\s+(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*\s+(?:who|that|which|whose|where)\b"
)


def _relative_chain(q: str, body: str) -> list[Part]:
    """No named anchor: 'the brother of the player who has won X' -> ['player who has won X',
    'the brother of #1']."""
    m = _REL_NP_RE.search(body)
    if not m or m.start() == 0:
        return [(q, None)]
    inner = _NP_LEAD_RE.sub("", body[m.start() :]).strip()
    outer = tx.normalize_space(f"{body[: m.start()]} #1") + "?"
    if _is_trivial(outer) or len(tx.tokenize(inner)) < 2:
        return [(q, None)]
    return [(inner + "?", None), (outer, 1)]


def _relative(phrase: str) -> bool:
    """A relative clause ('the state that', 'the award X received') rather than 'the X of'."""
    if re.search(r"\b(?:that|which|who|whom|whose|where|when)\b", phrase):
        return True
    return not re.search(r"\b(?:of|in|at|by|for|from|with|on)\s+(?:the\s+)?(?:\w+\s+)?$", phrase)


def _anchor_entity(body: str) -> tuple[str, int] | None:
    """(entity, search offset): the first named thing after the last nested-phrase start."""
    ents = [e for e in tx.quoted_titles(body) + tx.capitalized_spans(body) if len(e) > 1]
    ents = [
        tx.with_parenthetical(e, body)
        for e in ents
        if not (body.startswith(e) and e.split()[0].lower() in tx.EN_QUESTION_WORDS)
    ]
    if not ents:
        return None
    starts = [m.start() for m in _NP_START_RE.finditer(body)]
    located = sorted((body.find(e), e) for e in ents if body.find(e) >= 0)
    if not located:
        return None
    for start in reversed(starts):
        after = [(p, e) for p, e in located if p > start]
        before_any = [p for p in starts if p > start]
        if after and (not before_any or after[0][0] < min(before_any) or start == starts[-1]):
            return after[0][1], after[0][0]
    for p, e in located:
        if re.match(r"['’]s?\s+[a-z]", body[p + len(e) :]):
            return e, p
    return located[0][1], located[0][0]


def _is_trivial(outer: str) -> bool:
    """An outer hop with no content words besides the placeholder adds nothing."""
    return not tx.tokenize(tx.PLACEHOLDER_RE.sub(" ", outer))


_ZH_RELATIONS = (
    "父亲|母亲|妻子|丈夫|配偶|儿子|女儿|兄弟|姐妹|导演|作者|创始人|创办人|董事长|总裁|首席执行官|CEO|"
    "主演|出生地|国籍|首都|总部|所在地|负责人|上级|母公司|子公司|前任|继任者"
)
_ZH_RELATION_RE = re.compile(
    rf"^(?P<lead>谁是|请问|问：)?(?P<inner>.+?(?:{_ZH_RELATIONS}))的(?P<rel>{_ZH_RELATIONS})(?P<rest>.*)$"
)


def _chain_zh(q: str) -> list[Part] | None:
    """'谁是《银港》导演的父亲？' -> ['《银港》导演', '#1的父亲？']: a relation of a relation.

    The inner part must itself end in a relation ('导演', '创始人'), so '漫长的季节的主演' stays one
    question.
    """
    m = _ZH_RELATION_RE.match(q.strip())
    if not m or len(tx.tokenize(m.group("inner"))) < 2:
        return None
    inner = m.group("inner").strip()
    return [(inner, None), (f"#1的{m.group('rel')}{m.group('rest')}", 1)]


# Parties of a contract or case ('供货方', '甲方', '负责人'): a role a document fills with a
# name, so '供货方的法定代表人' first needs who the 供货方 is.
_ZH_ROLE_PERSON_RE = re.compile(
    r"(?:负责人|联系人|经办人|担保人|保证人|代理人|委托人|受托人|承租人|出租人|借款人|贷款人|"
    r"出借人|投保人|被保险人|受益人|申请人|被申请人|原告|被告|中标人|招标人|投标人|供应商|承包商|"
    r"买受人|出卖人|发包人|承包人|债权人|债务人|当事人)$"
)
_ZH_NOT_ROLES = tx.word_set(
    "地方 官方 东方 西方 南方 北方 对方 双方 各方 多方 一方 配方 处方 药方 比方 平方 立方 远方 "
    "前方 后方 上方 下方 四方 八方 大方 警方 军方 方方 有方 想方"
)
_ZH_ATTRS = (
    "法定代表人|法人代表|法人|负责人|联系人|董事长|总经理|经理|总裁|首席执行官|CEO|创始人|股东|"
    "控股股东|实际控制人|注册地址|地址|住所|总部|所在地|注册地|注册资本|成立时间|成立日期|"
    "联系电话|电话|联系方式|邮箱|开户行|开户银行|银行账号|账号|统一社会信用代码|全称|名称|简称|"
    f"{_ZH_RELATIONS}"
)
_ZH_ROLE_CHAIN_RE = re.compile(
    rf"^(?P<lead>谁是|请问|问：)?(?P<inner>.+?)的(?P<rel>(?:{_ZH_ATTRS}))(?P<rest>.*)$"
)
_ZH_ROLE_HOP_SUFFIX = "是谁？"


def zh_role(phrase: str) -> str | None:
    """The role noun a phrase ends with ('本合同的供货方' -> '供货方'), or None."""
    terms = tx.coverage_terms(phrase)
    if not terms:
        return None
    last = terms[-1]
    if tx.language_of(last) != "zh":
        return None
    if last.endswith("方") and 2 <= len(last) <= 4 and last[-2:] not in _ZH_NOT_ROLES:
        return last
    if _ZH_ROLE_PERSON_RE.search(last) and len(last) <= 6:
        return last
    return None


def _role_chain_zh(q: str) -> list[Part] | None:
    """'供货方的法定代表人是谁？' -> ['供货方是谁？', '#1的法定代表人是谁？']: the role's holder
    is named in one document (the contract), its attribute in another (the company record)."""
    m = _ZH_ROLE_CHAIN_RE.match(q.strip())
    if not m:
        return None
    inner = m.group("inner").strip()
    if not zh_role(inner) or tx.cjk_org_names(inner) or tx.cjk_names(inner):
        return None
    return [
        (f"{inner}{_ZH_ROLE_HOP_SUFFIX}", None),
        (f"#1的{m.group('rel')}{m.group('rest')}", 1),
    ]


def _decompose_zh(q: str) -> list[Part]:
    chain = _chain_zh(q) or _role_chain_zh(q)
    if chain:
        return chain
    clauses = [c.strip() for c in _ZH_CLAUSE_SPLIT_RE.split(q) if c and c.strip()]
    clauses = [c for c in clauses if tx.tokenize(c)]
    if len(clauses) > 1:
        context = _zh_context(clauses[0]) if not _ZH_QUESTION_MARK_RE.search(clauses[0]) else ""
        parts: list[Part] = []
        for clause in clauses:
            if context and clause == clauses[0]:
                continue
            text = clause
            if context and not set(tx.cjk_terms(context)) & set(tx.cjk_terms(clause)):
                text = f"{context} {clause}"
            elif not context and parts and not tx.extract_entities(clause):
                text = f"{_zh_context(clauses[0])} {clause}"
            parts.extend((p, None) for p in _split_conjunction_zh(text))
        if parts:
            return _dedupe(parts)
    return _dedupe([(p, None) for p in _split_conjunction_zh(q)])


def _zh_context(clause: str) -> str:
    """The subject terms of a leading clause, attached to later clauses that lack a subject."""
    terms = tx.cjk_terms(clause)
    ents = tx.quoted_titles(clause) + tx.capitalized_spans(clause)
    return " ".join(ents + terms[:4])


_ZH_COMPARE_TOKENS = frozenset({"哪个", "哪一个", "更", "还是", "分别", "各自"})


def _split_conjunction_zh(text: str) -> list[str]:
    """'A和B的X' -> ['A的X', 'B的X']; '合同A和合同B' keeps each whole phrase."""
    tokens = tx.raw_tokens(text)
    for i, tok in enumerate(tokens):
        if tok not in _ZH_CONJ or not 0 < i < len(tokens) - 1:
            continue
        width = _parallel_width(tokens, i)
        left, right = tokens[i - width : i], tokens[i + 1 : i + 1 + width]
        if not (_is_term("".join(left)) and _is_term("".join(right))):
            continue
        prefix, suffix = tokens[: i - width], tokens[i + 1 + width :]
        compare = any(t in _ZH_COMPARE_TOKENS for t in suffix)
        if compare:
            suffix = [t for t in suffix if t not in _ZH_COMPARE_TOKENS]
        return ["".join(prefix + side + suffix).strip() for side in (left, right)]
    return [text]


def _parallel_width(tokens: list[str], i: int) -> int:
    """How many tokens each side of the conjunction spans: 2 for '合同A和合同B', else 1."""
    for width in (3, 2):
        if i - width >= 0 and i + width < len(tokens) and tokens[i - width] == tokens[i + 1]:
            return width
    return 1


def _is_term(token: str) -> bool:
    return bool(token.strip()) and not tx.is_stopword(token) and len(token) <= 12


def _dedupe(parts: list[Part]) -> list[Part]:
    seen: set[str] = set()
    out: list[Part] = []
    for text, dep in parts:
        if text not in seen:
            seen.add(text)
            out.append((text, dep))
    return out


# ======================================================================== bridging
def expand_terms(terms: set[str]) -> set[str]:
    """Add the synonyms of relation words so 'husband' also matches 'married'."""
    out = set(terms)
    for term in terms:
        for key, syns in SYNONYMS.items():
            if term.startswith(key):
                out.update(tx.stem(s) for s in syns)
    return out


BRIDGE_CANDIDATES = 5
NEAR_WEIGHT = 2.0


def fill_placeholders(
    sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
) -> str:
    """Replace each #k with the entities hop k's best evidence names (a few when unsure).

    Several candidates in one keyword query let the search itself pick the one that also
    matches the sub-question's relation words.
    """
    if not earlier:
        return tx.normalize_space(tx.PLACEHOLDER_RE.sub(" ", sub_question))

    def repl(match: re.Match[str]) -> str:
        k = int(match.group(1))
        hop = earlier[k - 1] if 0 < k <= len(earlier) else earlier[-1]
        candidates = bridge_candidates(hop, evidence, sub_question)
        return " ".join(candidates[:BRIDGE_CANDIDATES])

    return tx.normalize_space(tx.PLACEHOLDER_RE.sub(repl, sub_question))


_DATE_LIKE_RE = re.compile(
    r"^(?:(?:\d{1,4}|January|February|March|April|May|June|July|August|September|October|"
    r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[\s,.]*)+$"
)


def bridge_candidates(
    hop: HopView, evidence: Sequence[EvidenceItem] = (), next_question: str = ""
) -> list[str]:
    """Entities the hop's evidence names for its sub-question, best first.

    A candidate scores when it sits in a sentence sharing the hop's relation words, in a
    passage about the hop's anchor entity (its title names the anchor); it scores more if a
    retrieved passage is titled with it (the entity has its own page).
    """
    role = _role_of_hop(hop.sub_question)
    if role:
        texts = [e.text for e in evidence if e.chunk_id] + [h.text for h in hop.top_hits]
        holders = role_holders(role, texts)
        if holders:
            return holders
    asked = tx.PLACEHOLDER_RE.sub(" ", f"{hop.sub_question} {hop.query} {next_question}")
    asked_terms = tx.term_set(asked)
    anchors = [e for e in tx.extract_entities(tx.PLACEHOLDER_RE.sub(" ", hop.query)) if e]
    if not anchors:
        anchors = _titled_anchor(hop)
    anchor_terms = tx.term_set(" ".join(anchors))
    rel_terms = expand_terms(
        tx.term_set(tx.PLACEHOLDER_RE.sub(" ", hop.sub_question)) - anchor_terms
    )
    docs = [(f"{e.title} {e.section}".strip(), e.text) for e in evidence if e.chunk_id] or [
        (f"{h.title} {h.section}".strip(), h.text) for h in hop.top_hits
    ]
    titles = {t.strip().lower() for t, _ in docs if t.strip()}
    scores: dict[str, float] = {}
    for rank, (title, text) in enumerate(docs[:8]):
        about = _aboutness(anchor_terms, title, text) / (1 + rank) ** 0.5
        if about <= 0:
            continue
        for i, sentence in enumerate(tx.split_sentences(text)):
            sentence_terms = tx.term_set(sentence)
            for ent in _sentence_entities(sentence):
                ent_terms = tx.term_set(ent)
                if not ent_terms or ent_terms <= asked_terms:
                    continue
                if anchor_terms and len(ent_terms & anchor_terms) * 2 >= len(ent_terms):
                    continue
                # the entity's own name ('... State University') is no sign of the relation
                rel_words = rel_terms - ent_terms
                rel = len(rel_words & sentence_terms)
                near = _nearness(sentence, ent, _term_positions(sentence, rel_words))
                score = about * (0.5 + rel) * (1 + NEAR_WEIGHT * near) * (1.2 if i == 0 else 1.0)
                if ent.lower() in titles:
                    score *= 2.0
                scores[ent] = scores.get(ent, 0.0) + score
    _boost_linked_titles(scores, docs, anchor_terms, asked_terms)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    return _distinct([e for e, _ in ranked])


def _titled_anchor(hop: HopView) -> list[str]:
    """A lowercase question names no entity ('who plays vision in avengers age of ultron'):
    the retrieved page whose title the query spells out is the hop's anchor."""
    query_terms = tx.term_set(tx.PLACEHOLDER_RE.sub(" ", hop.query))
    for hit in hop.top_hits[:3]:
        title = re.sub(r"\s*\(.*?\)\s*$", "", hit.title).strip()
        terms = tx.term_set(title)
        if terms and terms <= query_terms:
            return [title]
    return []


_EN_ROLE_HOP_RE = re.compile(rf"^Who is the (?P<role>{EN_ROLES})\?$")


def _role_of_hop(sub_question: str) -> str | None:
    """The role a lookup hop asks about ('供货方是谁？' -> '供货方'), else None."""
    m = _EN_ROLE_HOP_RE.match(sub_question)
    if m:
        return m.group("role")
    if not sub_question.endswith(_ZH_ROLE_HOP_SUFFIX):
        return None
    return zh_role(sub_question.removesuffix(_ZH_ROLE_HOP_SUFFIX))


_ROLE_LINK = r"(?:[（(][^）)]{0,20}[）)])?\s*(?:为|是|系|即|：|:)\s*"
_CLAUSE_END_RE = re.compile(r"[，。；,;（(\n]|(?:成立|位于|负责|担任|签订|承担)")


def _filler(names: dict[int, str]) -> Callable[[re.Match[str]], str]:
    """A PLACEHOLDER_RE replacement that writes in the name found for each `#k`."""
    return lambda m: names.get(int(m.group(1)), " ")


def role_holders(role: str, texts: Sequence[str]) -> list[str]:
    """Who fills a role, from sentences like '供货方为X' or '甲方：X', best (earliest) first.

    The name is the organisation (or person) that opens the clause after the link word, so
    '采购方为北京云帆科技有限公司' in the same sentence does not count for '供货方'.
    """
    if tx.language_of(role) == "en":
        return _role_holders_en(role, texts)
    link = re.compile(re.escape(role) + _ROLE_LINK)
    found: dict[str, None] = {}
    for text in texts:
        for m in link.finditer(text):
            clause = _CLAUSE_END_RE.split(text[m.end() : m.end() + 60], maxsplit=1)[0].strip()
            if not clause:
                continue
            names = [n for n in tx.cjk_org_names(clause) if clause.startswith(n)]
            names += [n for n in tx.cjk_names(clause) if clause.startswith(n)]
            if names:
                found.setdefault(max(names, key=len), None)
            elif len(clause) <= 12 and not tx.is_stopword(clause):
                found.setdefault(clause, None)
    return list(found)


_EN_ROLE_LINK = (
    r"(?:\s+(?:under|of|to|in)\s+(?:this|the)\s+(?:contract|agreement))?\s*(?:is|shall be|:)\s+"
)


def _role_holders_en(role: str, texts: Sequence[str]) -> list[str]:
    """'The supplier under this contract is X' / 'Supplier: X' -> X (a capitalised name)."""
    link = re.compile(r"\b" + re.escape(role) + _EN_ROLE_LINK, re.IGNORECASE)
    found: dict[str, None] = {}
    for text in texts:
        for m in link.finditer(text):
            rest = text[m.end() : m.end() + 80]
            spans = tx.capitalized_spans(rest)
            if spans and rest.startswith(spans[0].split()[0]):
                found.setdefault(spans[0], None)
    return list(found)


def _boost_linked_titles(
    scores: dict[str, float],
    docs: list[tuple[str, str]],
    anchor_terms: set[str],
    asked_terms: set[str],
) -> None:
    """A retrieved page whose title the anchor's page mentions is a likely bridge entity."""
    anchor_texts = [
        text.lower() for title, text in docs if _aboutness(anchor_terms, title, "") >= 1
    ]
    if not anchor_texts:
        return
    best = max(scores.values(), default=1.0)
    for title, _ in docs:
        clean = re.sub(r"\s*\(.*?\)\s*$", "", title).strip()
        terms = tx.term_set(clean)
        if (
            not clean
            or not terms
            or terms <= asked_terms
            or _aboutness(anchor_terms, title, "") >= 1
        ):
            continue
        if any(clean.lower() in text for text in anchor_texts):
            scores[clean] = scores.get(clean, 0.0) + best


def _term_positions(sentence: str, terms: set[str]) -> list[int]:
    """Word positions in the sentence whose (stemmed) word is one of the terms."""
    words = re.findall(r"\S+", sentence)
    return [i for i, w in enumerate(words) if set(tx.tokenize(w)) & terms]


def _nearness(sentence: str, entity: str, positions: list[int]) -> float:
    """1 when the entity is next to a relation word ('directed by X'), falling with distance."""
    if not positions:
        return 0.0
    start = sentence.find(entity)
    if start < 0:
        return 0.0
    first = len(re.findall(r"\S+", sentence[:start]))
    last = first + len(entity.split()) - 1
    gap = min(min(abs(first - p), abs(last - p)) for p in positions)
    return 1.0 / max(1, gap)


def _aboutness(anchor_terms: set[str], title: str, text: str) -> float:
    """How much a passage is about the anchor: 1 when its title names it, less otherwise."""
    if not anchor_terms:
        return 1.0
    title_terms = tx.term_set(re.sub(r"\(.*?\)", " ", title))
    if title_terms and (title_terms <= anchor_terms or anchor_terms <= title_terms):
        return 1.0
    if title_terms and tx.overlap(anchor_terms, title_terms) >= 0.6:
        return 0.3
    body = tx.overlap(anchor_terms, tx.term_set(text[:600]))
    return 0.2 * body if body >= 0.6 else 0.05 * body  # file names rarely name the anchor


def _sentence_entities(sentence: str) -> list[str]:
    """Named things in a sentence, minus dates and a lone capitalised first word."""
    out = []
    first = sentence.split(None, 1)[0].strip("\"'“(") if sentence.split() else ""
    if tx.language_of(sentence) == "zh":  # names only: plain words are not bridges
        found = tx.quoted_titles(sentence) + tx.capitalized_spans(sentence) + tx.cjk_names(sentence)
        return [e for e in dict.fromkeys(found) if not _DATE_LIKE_RE.match(e)]
    for ent in tx.extract_entities(sentence):
        if _DATE_LIKE_RE.match(ent) or ent.isdigit():
            continue
        if " " not in ent and (ent == first or _attributive(sentence, ent)):
            continue
        out.append(ent)
    return out


_FUNCTION_WORDS = tx.word_set(
    "is was were are has had have and or in on at of to for by from with as who which that "
    "the a an s became becomes died"
)


def _attributive(sentence: str, word: str) -> bool:
    """A lone capitalised word used as an adjective ('an American singer', 'a French film')."""
    m = re.search(re.escape(word) + r"\s+([a-z][\w-]*)", sentence)
    return m is not None and m.group(1) not in _FUNCTION_WORDS


def _distinct(entities: list[str]) -> list[str]:
    """Drop a candidate contained in a better one ('Forest' after 'Nottingham Forest')."""
    out: list[str] = []
    for ent in entities:
        low = ent.lower()
        if any(low in o.lower() or o.lower() in low for o in out):
            continue
        out.append(ent)
    return out


# ======================================================================= extraction
RELEVANT_COVERAGE = 2 / 3


def relevance(q_terms: set[str], title: str, text: str) -> float:
    """Share of the question's terms the passage contains (a synonym counts for its term)."""
    if not q_terms:
        return 1.0
    passage = tx.term_set(f"{title} {text}")
    hit = sum(1 for t in q_terms if t in passage or expand_terms({t}) & passage - {t} & passage)
    return hit / len(q_terms)


def question_relevance(question: str, title: str, text: str) -> float:
    """relevance() for a question: Chinese by whole phrases found in the text, since jieba may
    cut the question and the passage differently ('法定代表/人' vs '法定代表/人为')."""
    if tx.language_of(question) != "zh":
        return relevance(tx.term_set(question), title, text)
    terms = tx.coverage_terms(question)
    if not terms:
        return 1.0
    passage = f"{title} {text}"
    passage_terms = tx.term_set(passage)
    hit = sum(
        1
        for t in terms
        if tx.term_in(t, passage, passage_terms) or expand_terms({t}) & passage_terms - {t}
    )
    return hit / len(terms)


def _part_relevance(part: str, title: str, text: str) -> float:
    """How well one passage covers a part of the question, by words or (Chinese) by phrases:
    either way of cutting the words may be the one the passage shares."""
    by_words = relevance(tx.term_set(part), title, text)
    return max(by_words, question_relevance(part, title, text))


def _heading_like(line: str) -> bool:
    """A short line without closing punctuation (or ending in an abbreviation, 'Acme Co.'):
    a heading or title, not a statement."""
    line = line.strip()
    open_end = not re.search(r"[.!?。！？；;:：)）\]]$", line) or tx.ends_with_abbreviation(line)
    return open_end and (
        len(line.split()) <= 8 if tx.language_of(line) == "en" else len(line) <= 20
    )


def best_sentences(q_terms: set[str], text: str, *, limit: int = 2, title: str = "") -> list[str]:
    """The sentences sharing the most query terms, in text order (the first if none match)."""
    sentences = [s for s in tx.split_sentences(text) if not _heading_like(s)] or tx.split_sentences(
        text
    )
    if not sentences:
        return []
    scored = [(len(q_terms & tx.term_set(s)), i, s) for i, s in enumerate(sentences)]
    top = [s for s in sorted(scored, key=lambda s: (-s[0], s[1]))[:limit] if s[0] > 0]
    return [s for _, _, s in sorted(top, key=lambda s: s[1])] or sentences[:1]


# ===================================================================== plan helpers
def _follow_up(question: str, hops: Sequence[HopView]) -> str | None:
    """One focused search the plan missed: the best bridge entity on its own, else a strong
    new entity (a top hit's title) the last hop found that no hop has searched yet."""
    if not hops or len(hops) >= 3:
        return None
    last = hops[-1]
    if not last.new_chunk_ids:
        return None
    searched = " ".join(h.query for h in hops).lower()
    relation = " ".join(tx.content_words(tx.PLACEHOLDER_RE.sub(" ", last.sub_question))[:6])
    if tx.PLACEHOLDER_RE.search(last.sub_question) and len(hops) >= 2:
        candidates = bridge_candidates(hops[-2], (), last.sub_question)
        top = last.top_hits[0] if last.top_hits else None
        top_title = f"{top.title} {top.section}".lower() if top else ""
        if candidates and candidates[0].lower() not in top_title:
            return f"{candidates[0]} {relation}".strip()
        if candidates and _role_of_hop(hops[-2].sub_question):
            return None  # the party's own record came first: the chain is resolved
    q_terms = tx.term_set(question)
    for hit in last.top_hits[:2]:
        title = hit.title.strip()
        if title and title.lower() not in searched and not tx.term_set(title) <= q_terms:
            return f"{title} {' '.join(tx.content_words(question)[:6])}".strip()
    parallel = not any(tx.PLACEHOLDER_RE.search(h.sub_question) for h in hops)
    if len(hops) > 1 and parallel and tx.normalize_space(question).lower() not in searched:
        return question  # the parts were searched apart; the whole question joins them again
    return None


# ====================================================================== evaluation
def judge_coverage(question: str, evidence: Sequence[EvidenceItem]) -> EvidenceVerdict:
    """Enough when the evidence as a whole covers the question's terms and every part of the
    question that names its own terms is covered by one passage (facts, not scattered words)."""
    zh = tx.language_of(question) == "zh"
    q_terms = tx.coverage_terms(question) if zh else list(dict.fromkeys(tx.tokenize(question)))
    passages = [(item.title, item.text) for item in evidence]
    union: set[str] = set()
    for title, text in passages:
        union |= tx.term_set(f"{title} {text}")
    joined = " ".join(f"{title} {text}" for title, text in passages)
    missing_terms = [
        t
        for t in q_terms
        if not (tx.term_in(t, joined, union) if zh else t in union)
        and not expand_terms({t}) & union
    ]
    coverage = 1 - len(missing_terms) / len(q_terms) if q_terms else float(bool(evidence))
    subs = decompose_question(question)
    missing_parts = [
        s.question
        for s in subs
        if not tx.PLACEHOLDER_RE.search(s.question)
        and max((_part_relevance(s.question, t, x) for t, x in passages), default=0.0)
        < RELEVANT_COVERAGE
    ]
    missing_parts += _missing_role_details(subs, passages)
    if evidence and coverage >= 0.75 and not missing_parts:
        return EvidenceVerdict(enough=True)
    missing = missing_parts + [f"'{t}'" for t in missing_terms[:6]]
    web_query = tx.normalize_space(f"{question} {' '.join(missing_terms[:4])}")
    return EvidenceVerdict(enough=False, missing=missing or [question], web_query=web_query)


def _missing_role_details(
    subs: Sequence[SubQuestion], passages: Sequence[tuple[str, str]]
) -> list[str]:
    """'#1的法定代表人' once the evidence says who #1 is: one passage must give that party's
    detail ('深圳星河电子有限公司…法定代表人为…'); the other party's record does not count."""
    roles = {s.id: _role_of_hop(s.question) for s in subs}
    texts = [text for _, text in passages]
    out: list[str] = []
    for sub in subs:
        refs = tx.placeholder_ids(sub.question)
        holders = {k: role_holders(role, texts) for k in refs if (role := roles.get(k))}
        if not holders or not all(holders.values()):
            continue
        first = {k: names[0] for k, names in holders.items()}
        filled = tx.PLACEHOLDER_RE.sub(_filler(first), sub.question)
        detail = tx.PLACEHOLDER_RE.sub(" ", sub.question)
        if not any(
            all(h in f"{t} {x}" for h in first.values())
            and question_relevance(detail, t, x) >= RELEVANT_COVERAGE
            for t, x in passages
        ):
            out.append(filled)
    return out


# ========================================================================= answers
def compose_answer(
    question: str, evidence: Sequence[EvidenceItem], missing: Sequence[str]
) -> Iterator[str]:
    zh = tx.language_of(question) == "zh"
    if not evidence:
        yield (
            "离线模式：知识库中没有找到与问题相关的内容。"
            if zh
            else "Offline mode: no relevant passages were found in the knowledge base."
        )
        if missing:
            yield ("\n\n缺少：" if zh else "\n\nMissing: ") + "; ".join(missing)
        return
    chosen = _answer_sentences(question, evidence)
    yield (
        "离线模式（抽取式回答，基于检索到的原文）：\n"
        if zh
        else "Offline mode (extractive answer from the retrieved passages):\n"
    )
    for n, sentence in chosen:
        yield f"- {sentence.strip()} [{n}]\n"
    if missing:
        yield (
            ("\n证据不足，仍缺少：" if zh else "\nThe evidence is not enough; still missing: ")
            + "; ".join(missing)
            + "\n"
        )


ANSWER_SENTENCES = 4


def _answer_sentences(question: str, evidence: Sequence[EvidenceItem]) -> list[tuple[int, str]]:
    """One best sentence per part of the question, in reasoning order, then the best overall."""
    q_terms = expand_terms(tx.term_set(question))
    pool: list[tuple[int, str]] = []
    context: dict[int, str] = {}  # what each item is about: section heading and text
    for item in evidence:
        sentences = item.sentences or best_sentences(q_terms, item.text, limit=2, title=item.title)
        pool.extend((item.n, s.strip()) for s in sentences if s.strip())
        context[item.n] = f"{item.title} {item.section} {item.text}".lower()
    chosen: list[tuple[int, str]] = []
    holders: dict[int, str] = {}  # sub-question id -> who fills its role
    rivals: set[str] = set()  # other names in a role sentence ('采购方为Y' beside '供货方为X')
    for sub in decompose_question(question):
        text = tx.PLACEHOLDER_RE.sub(lambda m: holders.get(int(m.group(1)), " "), sub.question)
        terms = expand_terms(tx.term_set(text))
        role = _role_of_hop(sub.question)
        best = _role_sentence(pool, role, chosen) if role else None
        named = [h.lower() for k, h in holders.items() if f"#{k}" in sub.question]
        about = [(n, s) for n, s in pool if named and all(h in context[n] for h in named)]
        best = best or _best_of(about, terms, chosen) or _best_of(pool, terms, chosen)
        if not best:
            continue
        chosen.append(best)
        if role and role_holders(role, [best[1]]):
            holders[sub.id] = role_holders(role, [best[1]])[0]
            rivals |= set(_names(best[1]))
    rivals = {r.lower() for r in rivals if not any(r in h or h in r for h in holders.values())}
    others = [(n, s) for n, s in pool if not any(r in context[n] for r in rivals)]
    while len(chosen) < ANSWER_SENTENCES:
        best = _best_of(others, q_terms, chosen)
        if not best:
            break
        chosen.append(best)
    return chosen


def _names(sentence: str) -> list[str]:
    """Organisations and people a sentence names (multi-word capitalised spans in English)."""
    if tx.language_of(sentence) == "zh":
        return tx.cjk_org_names(sentence) + tx.cjk_names(sentence)
    return [s for s in tx.capitalized_spans(sentence) if " " in s]


def _role_sentence(
    pool: list[tuple[int, str]], role: str, taken: list[tuple[int, str]]
) -> tuple[int, str] | None:
    """The first pooled sentence that says who fills the role ('供货方为X')."""
    used = {s for _, s in taken}
    for n, sentence in sorted(pool, key=lambda p: p[0]):
        if sentence not in used and role_holders(role, [sentence]):
            return n, sentence
    return None


def _best_of(
    pool: list[tuple[int, str]], terms: set[str], taken: list[tuple[int, str]]
) -> tuple[int, str] | None:
    """The pooled sentence sharing most terms (earliest evidence first on ties), not yet taken."""
    used = {s for _, s in taken}
    scored = [(len(terms & tx.term_set(s)), -n, n, s) for n, s in pool if s not in used]
    if not scored:
        return None
    score, _, n, sentence = max(scored)
    return (n, sentence) if score > 0 or not taken else None
