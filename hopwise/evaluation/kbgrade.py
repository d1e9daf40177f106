"""Grading rules of a company knowledge-base eval set (the kb-dev format; its README states them).

An answer is right when every `must_contain` string occurs in it and no `must_not_contain`
string does, after one normalisation (NFKC, lower case, dates as YYYY-MM-DD, no thousands
separators, no whitespace). Unanswerable questions are right when the answer abstains; a
question whose groups the asker lacks is a leak probe, right when nothing restricted appears.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1,
    "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))


def _iso(year: str, month: str | int, day: str, original: str) -> str:
    y, m, d = int(year), int(month), int(day)
    return f"{y:04d}-{m:02d}-{d:02d}" if 1 <= m <= 12 and 1 <= d <= 31 else original


_DATES: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
     lambda m: _iso(m[1], m[2], m[3], m[0])),
    (re.compile(r"(?<!\d)(\d{4})[/.\-](\d{1,2})[/.\-](\d{1,2})(?!\d)"),
     lambda m: _iso(m[1], m[2], m[3], m[0])),
    (re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"),
     lambda m: _iso(m[3], _MONTHS[m[1]], m[2], m[0])),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})\.?,?\s+(\d{{4}})\b"),
     lambda m: _iso(m[3], _MONTHS[m[2]], m[1], m[0])),
]  # fmt: skip
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    s = unicodedata.normalize("NFKC", text or "").lower()
    for pattern, replace in _DATES:
        s = pattern.sub(replace, s)
    return _WS.sub("", _THOUSANDS.sub("", s))


_APOS = "['’]"
ABSTAIN_RE = re.compile(
    "|".join(
        [
            r"(没有|未|并未|并没有)(找到|查到|提到|提及|包含|涉及|记载|记录|说明|给出|列出|明确|披露|相关|这方面|关于|具体)",
            r"(无法|不能|难以|没法)(回答|确定|找到|查到|得知|获知|提供|判断|确认|从)",
            r"(文档|文件|资料|材料|知识库|上下文|现有信息)(中|里|内)?(并)?(没有|未|无|不包含|不涉及)",
            r"找不到|查不到|无相关(信息|内容|记录|资料|数据)|暂无(相关)?(信息|资料|记录)|不清楚",
            rf"\b(do|does|did)(n{_APOS}t| not) (contain|mention|include|say|specify|state|provide|cover|list|have|give|show)",
            rf"\b(is|are|was|were)(n{_APOS}t| not) (mentioned|specified|stated|included|provided|available|found|covered|listed|given|documented)",
            rf"\b(cannot|can ?not|can{_APOS}t|couldn{_APOS}t|could not|unable to|not able to) (find|determine|locate|answer|confirm|tell|identify)",
            r"\bno (relevant |such |specific |further )?(information|mention|record|records|data|details?|documentation)\b",
            r"\bnot (found|covered|available|mentioned|specified|stated) in\b",
            rf"\bi (don{_APOS}t|do not) know\b",
            r"\bnone of the (provided |uploaded |available )?(documents|sources|files)\b",
        ]
    )
)


def abstains(text: str) -> bool:
    return (
        ABSTAIN_RE.search(_WS.sub(" ", unicodedata.normalize("NFKC", text or "").lower()))
        is not None
    )


def grade(
    question: Mapping[str, Any], answer: str | None, groups: Sequence[str]
) -> tuple[bool, str]:
    """(right, why not) for one answer given by a reader in `groups`."""
    if answer is None:
        return False, "no answer"
    norm = normalise(answer)
    must = list(question.get("must_contain") or [])
    if not set(question.get("needs_groups") or []) <= set(groups):
        leaked = [s for s in must if normalise(s) in norm]
        return (False, f"leaked {leaked}") if leaked else (True, "")
    bad = [s for s in question.get("must_not_contain") or [] if normalise(s) in norm]
    if question.get("type") == "unanswerable":
        return (True, "") if abstains(answer) else (False, "did not abstain")
    if not must:
        if not answer.strip():
            return False, "empty answer"
        if abstains(answer):
            return False, "abstained on an answerable question"
        return (False, f"contains forbidden {bad}") if bad else (True, "")
    missing = [s for s in must if normalise(s) not in norm]
    why = "; ".join(
        part for part in (missing and f"missing {missing}", bad and f"contains forbidden {bad}")
        if part
    )  # fmt: skip
    return not why, why
