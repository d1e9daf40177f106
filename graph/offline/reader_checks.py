"""What the hand reader checks a unit against: the relation a part asks about (relation_of,
holds_relation), the codes and numbered parts and classes that name one thing among its like
(anchors_of, holds_anchors), a unit that only echoes the question, and the value a change
phrase sets ('amended to 7 hours', '修改为6小时') or only asks for ('申请…延长至').
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.evidence import relevance
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.reader_units import Unit
from graph.offline.units import FIELD_RE
from graph.offline.values import class_anchors, codes_in, spans_of
from ingest import lexicon
from ingest.lang import CODE_RE
from ingest.phrases import text_phrases


def relation_of(part: str, names: Sequence[str] = ()) -> str:
    """The part without the names it gives: what is asked about them ('legal representative'
    of 'Who is the legal representative of Acme Ltd.?'). Names are the phrases the text itself
    marks (capitalised, tagged, quoted, codes) and `names`: the values the evidence uses as
    names (its table cells and field values) that the part repeats."""
    from graph.offline.spans import question_spans

    rest = tx.PLACEHOLDER_RE.sub(" ", part)
    found = {*text_phrases(rest), *(s.text for s in question_spans(rest)), *codes_in(rest)}
    found |= {n for n in names if n in rest}
    for name in sorted(found, key=len, reverse=True):
        rest = rest.replace(name, " ")
    return rest if tx.term_set(rest) else part


_ORDINAL_RE = re.compile(r"[（(][一二三四五六七八九十\d]{1,3}[）)]")
_CHANGE_WORDS = {key: [w for k, ws in lexicon.table("changes") if k == key for w in ws]
                 for key in ("change", "proposal")}  # fmt: skip
_CHANGES = sorted(_CHANGE_WORDS["change"], key=len, reverse=True)
PROPOSAL_RE = re.compile(
    "|".join(
        rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in _CHANGE_WORDS["proposal"]
    ),  # fmt: skip
    re.IGNORECASE,
)


def states_change(text: str, kind: str, params: OfflineParams = PARAMS, about: str = "") -> bool:
    """Whether the text changes a value of the asked kind ('… was amended to 6 hours',
    '…修改为6小时'): what holds now, over an earlier statement of that value. A change only
    asked for in its clause ('we request an extension to …', '申请…延长至') holds nothing yet."""
    return bool(changed_value(text, kind, params, about=about))


def requests_change(text: str, kind: str, params: OfflineParams = PARAMS, about: str = "") -> bool:
    """Whether the text only asks for a change of a value ('requests that the time be
    extended to 36 hours'): the value it names does not hold."""
    return bool(changed_value(text, kind, params, requested=True, about=about))


_CLAUSE_END_RE = re.compile(r"[，,。；;!?！？]|\.\s")


def changed_value(
    text: str, kind: str, params: OfflineParams = PARAMS, requested: bool = False,
    about: str = "",
) -> str:  # fmt: skip
    """The value a change phrase sets ('7 hours' of '… is amended to 7 hours'), of a change
    that holds, or with `requested`, of one its clause only asks for ('申请…延长至'); with
    `about` (what is asked), only a change of it: its clause names a word of it ('the visit
    time … is amended to', not '截止日期调整为' for when an extension was agreed); ''."""
    folded = text.casefold()
    kinds = [kind] if kind in ("number", "date") else ["number", "date"]
    for phrase in _CHANGES:
        for m in re.finditer(re.escape(phrase), folded):
            clause = _CLAUSE_END_RE.split(text[: m.start()])[-1]
            if bool(PROPOSAL_RE.search(clause)) != requested:
                continue
            if about and not holds_relation(about, "", clause):
                continue
            after = text[m.end() : m.end() + params.reader_change_reach]
            found = next((spans_of(k, after)[0] for k in kinds if spans_of(k, after)), "")
            if found:
                return found
    return ""


def anchors_of(question: str) -> list[str]:
    """What names one thing among its like: codes ('KX-200'), numbered parts ('（二）') and
    numbered classes ('一类站点', 'Tier 2'). A unit that answers the question holds each of them,
    itself or in its context."""
    found = (*CODE_RE.finditer(question), *_ORDINAL_RE.finditer(question))
    return [m.group(0) for m in found] + class_anchors(question)


def holds_anchors(unit: Unit, anchors: Sequence[str]) -> bool:
    place = tx.fold(f"{unit.context} {unit.shown()}").casefold()
    return all(tx.fold(a).casefold() in place for a in anchors)


def echoes(unit: Unit, question: str) -> bool:
    """A unit that tells nothing the question does not: a field whose value the question
    gives ('Order: PO-7' for a question about PO-7), a sentence of only the question's words."""
    shown = unit.shown()
    field = FIELD_RE.match(shown)
    said = tx.term_set(field.group("value") if field else shown)
    return bool(said) and said <= tx.term_set(question)


def holds_relation(relation: str, context: str, text: str) -> bool:
    """Whether the text (or its context) holds a word of what is asked, or of the same relation
    ('employs' for 'work'): a content word, not a number or a lone Chinese character ('年' of
    '2023 年的营业收入' is no sign of revenue)."""
    words = {t for t in tx.term_set(relation) | set(tx.coverage_terms(relation))
             if not t.isdigit() and not (tx.has_cjk(t) and len(t) == 1)}  # fmt: skip
    words |= tx.cue_terms(relation)  # 'What city is X from?': where X was born
    if not words:
        return relevance(relation, context, text) > 0
    passage = f"{context} {text}"
    terms = tx.term_set(passage)
    return any(tx.holds_kin(w, passage, terms) for w in words)
