"""Chinese decomposition: clauses (a statement among questions sets the scene and is not
asked; a clause that borrows its subject is asked whole; '该团队的…' stands for what the
clause before asked), 'A和B的X' coordination and 'X的Y的Z' chains (never in a count or sum).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.decompose_parts import Part, shift
from graph.offline.params import OfflineParams
from graph.offline.spans import MASK_RE
from graph.offline.totals import aggregates
from graph.offline.values import class_anchors
from ingest.phrases import cjk_tags

_ZH_CLAUSE_SPLIT_RE = re.compile(
    r"[，,；;？?。！!]\s*(?:以及|并且|而且|同时|另外|还有|并)?|(?:以及|并且)"
)
_ZH_QUESTION_RE = re.compile(
    r"什么|如何|哪些|哪|多少|多久|多长|多大|多高|多远|多重|几|何|吗|是否|怎样|怎么|谁|为什么|为何|呢"
)
_ZH_CONJ = ("和", "与", "及", "以及", "跟", "同", "还是", "或", "或者", "、")
# 'A 和 B 哪台更多？各多少次？': the second asks the first's items each, not a question of its own
_ZH_EACH_RE = re.compile(r"^(?:那|那么)?(?:各|分别|各自)")
# a leading clause that is one short possessive noun phrase ('⟨A⟩的 v1 版服务接口'): a topic
_ZH_TOPIC_RE = re.compile(rf"⟨\d+⟩\s*的\s*(?:[A-Za-z0-9.\-]+\s*)?[{tx.CJK}]{{1,8}}")
_ZH_LEAD_RE = re.compile(r"^(?:谁是|请问|问：)")
# a leading clause that points at one thing by what it did or has ('⟨A⟩负责的那张工单',
# '⟨A⟩用的那只球管'): that thing is the subject whole, whatever else the next clause names
_ZH_DESCRIBED_RE = re.compile(
    rf"的\s*[那这]\s*(?:一)?[个台张只份次笔位家项条批件套部辆][{tx.CJK}A-Za-z]"
)


# 'X 由哪个团队负责？该团队的负责人是谁？': 'that team' is what the question before asked for
_ZH_CLASSIFIER = "(?:一)?(?:个|家|位|台|项|条|张|份|只|名)?"
_ZH_THAT_RE = re.compile(rf"^(?:该|此|这|那){_ZH_CLASSIFIER}(?P<noun>[{tx.CJK}]{{1,4}})的")


def _zh_that(clause: str, earlier: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
    """A clause that opens with 'that N' (该团队的…) when an earlier clause asked which N
    (哪个团队): the clause with '#k' for it, k the earlier clause's last part; else None."""
    that = _ZH_THAT_RE.match(clause)
    if that is None:
        return None
    asked = re.compile(rf"哪{_ZH_CLASSIFIER}{re.escape(that.group('noun'))}")
    for text, last in reversed(earlier):
        if asked.search(text):
            return f"#{last}的{clause[that.end() :]}", last
    return None


# 'X 的审批人是谁？他分机多少？': the person the clause before asks for, by a pronoun
_ZH_HE_RE = re.compile(r"^(?:那|那么)?(?:他们|她们|他|她|其(?!他|中|余|实|次))(?:的)?")
_ZH_WHO_RE = re.compile(r"谁")


def _zh_who(clause: str, earlier: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
    """A clause about the person an earlier clause asked for (谁) by a pronoun: '他分机多少'
    after '审批人是谁' -> '#k的分机多少', k the earlier clause's last part; else None."""
    if not earlier or not _ZH_WHO_RE.search(earlier[-1][0]) or MASK_RE.search(clause):
        return None
    he = _ZH_HE_RE.match(clause)
    rest = clause[he.end() :] if he else ""
    return (f"#{earlier[-1][1]}的{rest}", earlier[-1][1]) if rest else None


def zh(q: str, params: OfflineParams) -> list[Part]:
    clauses = [c.strip() for c in _ZH_CLAUSE_SPLIT_RE.split(q) if c and c.strip()]
    clauses = [c for c in clauses if tx.tokenize(MASK_RE.sub(" ", c)) or MASK_RE.search(c)]
    clauses = _each_joined(clauses)
    if len(clauses) > 1:
        subject = _zh_subject(clauses[0]) if not _ZH_QUESTION_RE.search(clauses[0]) else ""
        described = bool(subject) and bool(_ZH_DESCRIBED_RE.search(clauses[0]))
        asking = [bool(_ZH_QUESTION_RE.search(c)) for c in clauses]
        parts: list[Part] = []
        asked: list[tuple[str, int]] = []  # each question clause and its last part's number
        for i, clause in enumerate(clauses):
            if subject and i == 0:
                continue
            if any(asking) and not asking[i]:
                continue  # a statement among questions sets the scene ('远程搞不定'), asks nothing
            pointed = _zh_that(clause, asked) or _zh_who(clause, asked)
            if pointed is not None:  # '该团队的负责人是谁': the team the clause before found
                parts.append(pointed)
                asked.append((clause, len(parts)))
                continue
            own = MASK_RE.search(clause) and not described  # it names its own subject
            borrowed = bool(subject) and not own and subject not in clause
            if borrowed:
                clause = f"{subject}{clause}"
            for piece in _zh_conjunction(clause):
                chain = _zh_chain(piece)
                if borrowed and chain and _ends_in_verb(chain[0][0]):
                    chain = None  # '…不同意推迟，给出的理由是什么': the reason given, one question
                parts += shift(chain or [(piece, None)], len(parts))
            asked.append((clause, len(parts)))
        if parts:
            return parts
    parts = []
    for piece in _zh_conjunction(q):
        parts += shift(_zh_chain(piece) or [(piece, None)], len(parts))
    return parts


def _each_joined(clauses: list[str]) -> list[str]:
    """A clause that asks 'each' of the items the question before it named ('各多少次',
    '分别是多少') stays with that question: read apart it has nothing to ask about."""
    out: list[str] = []
    for clause in clauses:
        leans = _ZH_EACH_RE.search(clause) and not MASK_RE.search(clause)
        if out and leans and _ZH_QUESTION_RE.search(out[-1]):
            out[-1] = f"{out[-1]}，{clause}"
        else:
            out.append(clause)
    return out


def _ends_in_verb(text: str) -> bool:
    """Whether a phrase ends in a verb ('⟨0⟩给出'): before 的 it makes a relative clause (the
    thing given), not a link of a chain ('⟨0⟩所在部门的经理')."""
    tags = cjk_tags(MASK_RE.sub(" ", text))
    return bool(tags) and tags[-1][1].startswith("v")


def _zh_subject(clause: str) -> str:
    """What a leading statement clause is about, for later clauses that name no subject."""
    spans = MASK_RE.findall(clause)
    if _ZH_DESCRIBED_RE.search(clause):  # '⟨A⟩负责的那张工单': the one work order, not A
        return "".join(clause.split())
    if spans and _ZH_TOPIC_RE.fullmatch(clause):  # '⟨A⟩的 v1 版接口，…': the thing, not A
        return "".join(clause.split())
    if spans:
        return "".join(f"⟨{k}⟩" for k in spans)
    return "".join(tx.cjk_terms(clause)[:3])


def _zh_chain(q: str) -> list[Part] | None:
    """'X的Y的Z' -> ['X的Y', '#1的Z']: the last 的 splits when what precedes it is a relation
    of something (a name plus a noun: '⟨A⟩导演') or names nothing (a role to resolve first:
    '供货方'); '⟨A⟩的Z' (an attribute of a named thing) is one question."""
    body = _ZH_LEAD_RE.sub("", q.strip())
    cut = body.rfind("的")
    if cut <= 0:
        return None
    inner, outer = body[:cut].strip(), body[cut + 1 :].strip()
    if _ZH_QUESTION_RE.search(inner) or aggregates(body):
        return None  # 'X有哪台设备受到了…的影响' asks in the inner part; a count filters by it
    inner_terms = tx.coverage_terms(MASK_RE.sub(" ", inner))
    if not outer or not tx.tokenize(MASK_RE.sub(" ", outer)):
        return None
    names = MASK_RE.findall(inner)
    if names and not inner_terms:
        return None  # an attribute of a named thing
    if not names and (len(inner_terms) != 1 or len(inner) > 6 or "的" in inner):
        return None  # a long description is searched whole
    if class_anchors(inner):
        return None  # '一类站点的时限': a numbered class is named, not a role to resolve
    return [(inner, None), (f"#1的{outer}", 1)]


def _zh_conjunction(text: str) -> list[str]:
    """'⟨A⟩和⟨B⟩的X' -> ['⟨A⟩的X', '⟨B⟩的X']; parallel words ('合同A和合同B') likewise."""
    tokens = [t for t in re.split(r"(⟨\d+⟩)", text) if t]
    flat: list[str] = []
    for tok in tokens:
        flat += [tok] if MASK_RE.fullmatch(tok) else tx.raw_tokens(tok)
    for i, tok in enumerate(flat):
        if tok not in _ZH_CONJ or not 0 < i < len(flat) - 1:
            continue
        left, right = flat[i - 1], flat[i + 1]
        if not (_zh_item(left) and _zh_item(right)):
            continue
        prefix, suffix = flat[: i - 1], flat[i + 2 :]
        suffix = [t for t in suffix if t not in {"哪个", "哪一个", "更", "还是", "分别", "各自"}]
        return ["".join(prefix + [side] + suffix).strip() for side in (left, right)]
    return [text]


def _zh_item(token: str) -> bool:
    return bool(MASK_RE.fullmatch(token)) or (
        bool(token.strip()) and not tx.is_stopword(token) and 2 <= len(token) <= 12
    )
