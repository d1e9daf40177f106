"""Routing without a model: greetings and general requests need no documents; everything else
might. And follow-ups: only a question that depends on the conversation is rewritten.

A question depends on the conversation when it refers back with a pronoun that stands alone
("its penalty", "when did he die") or is an ellipsis ("what about X?", "那X呢？"). A
demonstrative with its own noun ("that burn-in") names its referent, and a question naming
its own entity is self-contained: both pass through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.calc import compute
from graph.offline.spans import question_spans

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
    r"\b(?:it|its|they|them|their|he|him|his|she|her|hers)\b"
    r"|\b(?:this|that|these|those)\b(?=\s*(?:is|was|are|were|do|does|did|has|have|had|[?.!]|$))"
    rf"|它们|他们|她们|它|他|她|其(?=[{tx.CJK}])|(?:这|那|该|此)(?=[呢吗？?]|是|$)",
    re.IGNORECASE,
)
_ELLIPSIS_RE = re.compile(
    r"^\s*(?:and|what about|how about)\s+(?P<en>.+?)\s*\??\s*$"
    r"|^\s*(?:那么?|还有|那)?(?P<zh>[^，,？?]{1,30}?)(?:呢|怎么样|如何)[？?。]?\s*$",
    re.IGNORECASE,
)


MAX_ROUTED_CHARS = 500  # greetings and requests are short; the patterns only read this much


def _chitchat_table() -> dict[str, list[str]]:
    from ingest import lexicon

    return {kind: [p.lower() for p in phrases] for kind, phrases in lexicon.table("chitchat")}


_CHITCHAT = _chitchat_table()
_OPENINGS = sorted(
    (p for k in ("greeting", "thanks", "farewell", "assent") for p in _CHITCHAT[k]),
    key=len,
    reverse=True,
)
_SELF = frozenset(_CHITCHAT["self"])
_FILLER = frozenset(_CHITCHAT["filler"]) | _SELF
_CLAUSE_SPLIT_RE = re.compile(r"[!！。.,，?？~;；、…]+")


def _opens_with_formula(clause: str) -> bool:
    for phrase in _OPENINGS:
        if clause.startswith(phrase):
            rest = clause[len(phrase) :]
            if tx.has_cjk(phrase) or not rest or not rest[0].isalnum():
                return True
    return False


def _about_assistant(clause: str) -> bool:
    """'what can you do', '你会做什么': the assistant addressed, nothing else asked."""
    words = [w for w in tx.words(clause) if w.strip()]
    named = {w for w in words if w in _SELF} | {c for c in clause if c in _SELF}
    rest = [w for w in words if w not in _FILLER and not tx.is_stopword(w)]
    rest = [
        w for w in rest if not (tx.has_cjk(w) and all(c in _FILLER or c in "我的了" for c in w))
    ]
    return bool(named) and not rest


def chitchat(message: str) -> bool:
    """Every clause greets, thanks, says goodbye or asks what the assistant is or can do."""
    clauses = [c.strip().lower() for c in _CLAUSE_SPLIT_RE.split(message) if c.strip()]
    return bool(clauses) and all(_opens_with_formula(c) or _about_assistant(c) for c in clauses)


def is_simple(question: str) -> str | None:
    """The reason a message needs no documents, or None."""
    q = tx.normalize_space(question)[:MAX_ROUTED_CHARS]
    if not q:
        return "Empty message."
    if _GREETING_RE.match(q) or chitchat(q):
        return "Greeting or chit-chat; no documents needed."
    if compute(q) is not None:
        return "Arithmetic or a unit conversion; no documents needed."
    if _GENERAL_RE.match(q):
        return "General request that documents cannot answer."
    return None


def rewrite_followup(question: str, history: Sequence[dict[str, str]]) -> str:
    """The question made standalone when it depends on the conversation; else unchanged."""
    previous = [h.get("content", "") for h in history if h.get("role") == "user"]
    previous = [p for p in previous if p.strip() and p.strip() != question.strip()]
    if not previous:
        return question
    q = tx.normalize_space(question)
    replies = [h.get("content", "") for h in history if h.get("role") == "assistant"]
    said = f"{replies[-1] if replies else ''}\n{previous[-1]}"  # the last answer first
    for resolve in (_ordinal_reference, _demonstrative_reference):
        resolved = resolve(q, said)
        if resolved:
            return resolved
    ellipsis = _ELLIPSIS_RE.match(q[:MAX_ROUTED_CHARS])
    if ellipsis:
        other = (ellipsis.group("en") or ellipsis.group("zh") or "").strip()
        asks = other.split(" ", 1)[0].lower() in tx.EN_QUESTION_WORDS
        # 'and if we only hit 99%, what do they get?' asks its own question: only a thing
        # ('and Germany?', 'and the buyer?') takes the previous question's place
        clause = bool(ellipsis.group("en")) and ("," in other or len(other.split()) > 5)
        clause = clause or bool(
            _PRONOUN_RE.search(other)
        )  # '那他的助理呢': whose is resolved below
        swapped = _swap_subject(previous[-1], other) if other and not (asks or clause) else None
        if swapped:
            return swapped
    pronoun = _PRONOUN_RE.search(q)
    if not pronoun or _own_entity(q, pronoun.start()):
        return question
    entity = _previous_answer(history) if _PERSONAL_RE.fullmatch(pronoun.group(0)) else None
    entity = entity or next((e for p in reversed(previous) if (e := main_entity(p))), None)
    if not entity or entity.lower() in q.lower():
        return question
    word = pronoun.group(0)
    if tx.has_cjk(word):
        return q[: pronoun.start()] + entity + q[pronoun.end() :]
    possessive = word.lower() in {"its", "their", "his", "her", "hers"}
    return q[: pronoun.start()] + (f"{entity}'s" if possessive else entity) + q[pronoun.end() :]


_PERSONAL_RE = re.compile(r"he|him|his|she|her|hers|他|她", re.IGNORECASE)


def _previous_answer(history: Sequence[dict[str, str]]) -> str | None:
    """The person the last reply names ('Answer: Christopher Nolan [1]', '由工程师 E-1 章若
    处理。'): what 'he' or 'she' in the next question most likely means. Of several, the one
    the reply says someone is ('组长是洪柏'), else the first: a reply names its answer
    before what it adds ('…，持叉车证'; 'Ansel Brandt leads it for Q4 2031')."""
    from graph.result import short_answer_of
    from ingest.phrases import cjk_name_kinds

    replies = [h.get("content", "") for h in history if h.get("role") == "assistant"]
    reply = replies[-1] if replies else ""
    people = [n for n, kind in cjk_name_kinds(reply).items() if kind == "person"]
    if people:
        return _answered(people, reply)
    answer = short_answer_of(reply)
    short = len(answer) <= 20 if tx.has_cjk(answer) else len(answer.split()) <= 6
    if answer and short:
        return answer
    people = [
        n
        for line in reply.splitlines()
        for piece in _CJK_RUN_RE.split(line)  # 'Tier 2）由…组长是Mara Quill': two names
        for n in tx.capitalized_spans(piece)
        if " " in n and not any(c.isdigit() for c in n)  # 'Q4 2031' is no one
    ]
    return _answered(people, reply) if people else None


_CJK_RUN_RE = re.compile(rf"[{tx.CJK}（）【】，。；：！？、]+")
_SAYS_WHO_RE = r"(?:是|为|由|[:：])\s*"


def _answered(people: Sequence[str], reply: str) -> str:
    """Of the people a reply names, the one it says someone is ('组长是Mara Quill'; English
    'X is Y' names a role as often as a person, so only the Chinese copula counts), else the
    first it names."""
    said = [n for n in people if re.search(_SAYS_WHO_RE + re.escape(n), reply)]
    return (said or sorted(people, key=reply.find))[0]


_ORDINALS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "first": 1, "second": 2,
             "third": 3, "fourth": 4, "fifth": 5, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5}  # fmt: skip
_ORDINAL_RE = re.compile(
    r"第(?P<zh>[一二三四五1-5])(?:个|项|台|件|张|条|位|份)|"
    r"\bthe (?P<en>first|second|third|fourth|fifth)(?: one)?\b(?! of\b)",
    re.IGNORECASE,
)


def _listed(text: str) -> list[str]:
    """The things a reply lists, in order: codes ('KX-200') if it has two or more, else names."""
    from graph.offline.values import codes_in
    from ingest.phrases import text_phrases

    codes = list(dict.fromkeys(codes_in(text)))
    return codes if len(codes) >= 2 else text_phrases(text)


def _ordinal_reference(question: str, said: str) -> str | None:
    """'第二个…' / 'the second one …': the k-th thing the last answer listed."""
    m = _ORDINAL_RE.search(question)
    if not m:
        return None
    k = _ORDINALS[(m.group("zh") or m.group("en") or "").lower()]
    things = _listed(said.split("\n", 1)[0]) or _listed(said)
    if len(things) < k:
        return None
    return question[: m.start()] + things[k - 1] + question[m.end() :]


_DEMONSTRATIVE_RE = re.compile(
    rf"(?:(?:那|这)(?:家|个|台|位|份|张|项|条|所|种)|该)(?P<zh>[{tx.CJK}]{{1,6}})"
    r"|\b(?:that|this|the same)\s+(?P<en>[a-z][\w-]*)",
    re.IGNORECASE,
)


def _after_clause(name: str, noun: str) -> str:
    """'供货方是深圳星河电子有限公司' -> '深圳星河电子有限公司': the shortest tail after a function
    word that still names something more than the noun, where an extractor ran a name on from
    the clause before it."""
    tails = [name[i + 1 :] for i, c in enumerate(name) if c in tx.ZH_STOP_CHARS]
    return min((t for t in [*tails, name] if len(t) >= len(noun) + 2), key=len, default=name)


def _demonstrative_reference(question: str, said: str) -> str | None:
    """'那家医院…' / 'that hospital …': the named thing of that kind the conversation just
    mentioned ('河口市人民医院', 'Riverside Hospital'), the last answer first."""
    m = _DEMONSTRATIVE_RE.search(question)
    if not m:
        return None
    lines = said.splitlines()
    if m.group("en"):
        noun = m.group("en").lower()
        named = [n for ln in lines for n in tx.capitalized_spans(ln) if noun in n.lower().split()]
        return question[: m.start()] + named[0] + question[m.end() :] if named else None
    from ingest.phrases import text_phrases

    orgs = [n for ln in lines for n in tx.cjk_org_names(ln)]
    names = orgs + sorted((n for ln in lines for n in text_phrases(ln)), key=len)
    rest = m.group("zh")
    for size in range(min(4, len(rest)), 1, -1):  # the longest head noun that names a thing
        noun = rest[:size]
        found = next(
            (_after_clause(n, noun) for n in names if n.endswith(noun) and n != noun), None
        )
        if found and found != noun:
            return question[: m.start()] + found + question[m.start("zh") + size :]
    return None


def _own_entity(question: str, before: int) -> bool:
    """The question names its own entity before the pronoun ('Acme said it…')."""
    return any(s.start < before for s in question_spans(question))


def main_entity(question: str) -> str | None:
    """What a question is about: its first name or title, else its first 'the X' phrase."""
    spans = [s for s in question_spans(question) if not tx.years(s.text) or len(s.text) > 4]
    if spans:
        return spans[0].text
    m = re.search(r"\bthe\s+(?:[a-z][\w-]*\s+)?[a-z][\w-]*", question)
    if m and not tx.has_cjk(question):
        return m.group(0)
    terms = [t for t in tx.coverage_terms(question) if len(t) >= 2 and not t.isdigit()]
    if not terms or not tx.has_cjk(question):
        return None
    for size in range(len(terms[0]), 1, -1):  # '协议（一）': a numbered part stays numbered
        numbered = re.search(re.escape(terms[0][:size]) + r"[（(][^）)]{1,4}[）)]", question)
        if numbered:
            return numbered.group(0)
    return terms[0]


def _swap_subject(previous: str, other: str) -> str | None:
    """'what about X?' after a question about E: the same question about X. A common noun
    ('the buyer') takes the place of the previous question's first common noun phrase, a name
    the place of its first name."""
    if not tx.has_cjk(other) and not question_spans(other):
        bare = re.sub(r"^the\s+", "", other, flags=re.IGNORECASE)
        found = list(re.finditer(r"\bthe\s+([a-z][\w-]*)\b(?!\s+of\b)", previous))
        if found:  # 'the R of the X': another X, the same R ('what about Germany?')
            m = found[-1]
            return previous[: m.start(1)] + bare + previous[m.end(1) :]
    entity = main_entity(previous)
    if not entity or entity not in previous:
        return None
    return previous.replace(entity, other, 1)


ASSISTANT_NAME = "Hopwise"


def needs_no_source(question: str) -> str:
    """What a direct reply may state without a source: the question's own words, the
    assistant's name and what offline reasoning replies itself (a computed sum, say)."""
    return f"{question}\n{ASSISTANT_NAME}\n{direct_reply(question)}"


def direct_reply(question: str) -> str:
    zh = tx.language_of(question) == "zh"
    q = question.strip()
    computed = compute(q)
    if computed is not None:  # exact, with the rule used: no model and no documents needed
        return f"{'答案：' if zh else 'Answer: '}{computed.answer}\n\n{computed.working}"
    if re.search(r"thank|谢", q, re.IGNORECASE):
        return "不客气！还有什么想查的吗？" if zh else "You're welcome! Anything else to look up?"
    if re.search(r"bye|再见|拜拜", q, re.IGNORECASE):
        return "再见！" if zh else "Goodbye!"
    if _GREETING_RE.match(q) or chitchat(q):
        if zh:
            return f"你好！我是 {ASSISTANT_NAME}，可以根据知识库中的文档回答问题并给出引用。请问想了解什么？"
        return (
            f"Hello! I'm {ASSISTANT_NAME}. I answer questions from your team's documents, with "
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
