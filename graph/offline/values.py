"""What a value looks like in text: dates (three formats, one key), numbers with their units,
codes and clause numbers; the spans of one kind a passage holds, and the unit a question asks
in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from graph import text as tx
from graph.offline.answer_spans import NUMBER_WORD_RE, name_spans
from ingest import lexicon
from ingest.lang import CODE_RE

_ISO_DATE = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"


_ZH_DATE = r"\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"


_EN_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"


_EN_DATE = (
    rf"\d{{1,2}}\s+{_EN_MONTH},?\s+\d{{4}}|{_EN_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
)


DATE_RE = re.compile(
    rf"(?<![A-Za-z0-9\-])(?:{_ISO_DATE}|{_ZH_DATE})(?![\d\-])|\b(?:{_EN_DATE})\b"
)  # never the tail of a code ('IR-2031-04-01')


_YEAR_RE = re.compile(r"(?<![\d.\-])(?:1[5-9]\d{2}|20\d{2})(?![\d\-]|\.\d)")  # not 1993.5


_TIME_RE = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])")


# the counted thing after a number: a name's words with its plural noun ('30 Coastal League
# clubs', '12 Vask Awards'), a unit and the noun it counts ('40 GB of storage')
_UNIT = (
    r"(?:\s?(?:%|％|℃|°C|(?:[A-Z][a-z]+\s+){1,4}[a-z]{3,12}s\b|(?:[A-Z][a-z]+\s+){0,3}[A-Z][a-z]+s\b"
    r"|[a-zA-Z]{1,12}\b(?:\s+(?:of\s+)?[a-z]{3,12}\b)?|[个台次张件元升天小时分钟秒年月周晚班人项条份只套组倍页万亿千百]{1,3}(?:/["
    + tx.CJK
    + "a-zA-Z]{1,2})?))?"
)


NUMBER_RE = re.compile(rf"(?<![A-Za-z0-9_.\-/:])\d[\d,]*(?:\.\d+)?(?![\d.]*-\d){_UNIT}")


_ZH_NUMBER_RE = re.compile(
    r"百分之[零一二三四五六七八九十百点]+|[零一二三四五六七八九十两百千万]+(?:个|台|次|张|件|元|升|天|小时|分钟|秒|年|个月|周|晚|班|人|项|份|倍)"
)


_CLAUSE_NUMBER_RE = re.compile(
    r"^(?:第.{1,4}[条章节款]\s*)?\d+(?:\.\d+)+\s*"
)  # '7.2 ...', '第七条 7.1'


# A reference to a part of a document ('按主合同第3.3条', 'under Section 4.2', 'Article 5'):
# the number names the part, it is no amount.
_REFERENCE_RE = re.compile(
    r"第\s*(\d+(?:\.\d+)*)\s*[条章节款项部篇页]"
    r"|\b(?:section|clause|article|chapter|paragraph|appendix|annex|schedule|page|item)s?\s+"
    r"(\d+(?:\.\d+)*)",
    re.IGNORECASE,
)


def codes_in(text: str) -> list[str]:
    """Identifiers in a text, in order ('KX-200', 'PO-77-0117')."""
    return [m.group(0) for m in CODE_RE.finditer(text)]


def spans_of(kind: str, text: str) -> list[str]:
    """Candidate answers of a kind in a text, in order."""
    if kind == "date":  # full dates; a bare year only where there is none
        return [m.group(0) for m in DATE_RE.finditer(text)] or [
            m.group(0) for m in _YEAR_RE.finditer(text)
        ]
    if kind == "number":
        taken = [m.span() for m in DATE_RE.finditer(text)] + [
            m.span() for m in _TIME_RE.finditer(text)
        ] + [m.span() for m in CODE_RE.finditer(text)]  # fmt: skip
        clause = _CLAUSE_NUMBER_RE.match(text)
        if clause:
            taken.append(clause.span())
        taken += [m.span(1 if m.group(1) else 2) for m in _REFERENCE_RE.finditer(text)]  # '第3.3条'
        return [
            _trim(m.group(0))
            for m in NUMBER_RE.finditer(text)
            if not any(a <= m.start() < b for a, b in taken)
        ] + [m.group(0) for m in (*NUMBER_WORD_RE.finditer(text), *_ZH_NUMBER_RE.finditer(text))]
    if kind == "code":
        return [m.group(0) for m in CODE_RE.finditer(text)]
    return []


# 'what time', '几点': a clock time is asked ('3 a.m.', '18:30', 'noon', '下午6点')
_CLOCK_ASKED_RE = re.compile(r"\bwhat\s+time\b|\bat\s+what\s+hour\b|几点|什么时间", re.IGNORECASE)
_CLOCK_RE = re.compile(
    r"(?<![\w:])\d{1,2}(?::\d{2})?\s*(?:a\.\s?m\.?|p\.\s?m\.?|am\b|pm\b)|(?<![\d:])\d{1,2}:\d{2}"
    r"(?![\d:])|\b(?:noon|midnight)\b|(?:上午|下午|早上|晚上|傍晚|凌晨|中午)?\d{1,2}\s*[点時时](?:\s*\d{1,2}\s*分|半)?",
    re.IGNORECASE,
)


def asks_clock(question: str) -> bool:
    """Whether a question asks for a time of day ('What time does X close?', '几点开门')."""
    return bool(_CLOCK_ASKED_RE.search(question))


def clock_times(text: str) -> list[str]:
    """The times of day a text states, in order ('7 a.m.', '3 a.m.'; '18:30'; '下午6点')."""
    return [m.group(0).strip() for m in _CLOCK_RE.finditer(text)]


def side_time(text: str, times: Sequence[str], part: str) -> str:
    """Of several times of day, the one said right after a word of the end the part asks
    ('opens at 08:30 and closes at 17:00': 17:00 for 'when does it close'); '' if none."""
    side = range_side(part)
    cues = _RANGE_SIDES.get(side, ()) if side else ()
    for t in times:
        at = text.find(t)
        if _says_cue(text[max(0, at - 24) : at], cues):
            return t
    return ""


def _trim(span: str) -> str:
    """'3,200 USD and' loses the function word; '120 升' stays."""
    words = span.strip().rstrip(",.;").split()
    while len(words) > 1 and words[-1].lower() in tx.EN_STOPWORDS:
        words.pop()
    if len(words) > 1 and words[1].lower() in tx.EN_STOPWORDS:  # '3,200 to cover'
        words = words[:1]
    return " ".join(words)


_MONTH_NUMBERS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}  # fmt: skip


@functools.lru_cache(maxsize=4096)
def date_keys(text: str) -> frozenset[tuple[int, int, int]]:
    """The full dates of a text as (year, month, day), whatever their format (remembered: the
    same question and cells are read again for every unit and row)."""
    keys: set[tuple[int, int, int]] = set()
    for m in DATE_RE.finditer(text):
        found = m.group(0)
        digits = [int(x) for x in re.findall(r"\d+", found)]
        month = next((v for k, v in _MONTH_NUMBERS.items() if k in found.lower()), 0)
        if month and len(digits) == 2:
            year, day = (digits[1], digits[0]) if digits[1] > 31 else (digits[0], digits[1])
            keys.add((year, month, day))
        elif len(digits) == 3:
            keys.add((digits[0], digits[1], digits[2]))
    return frozenset(keys)


def numeric_value(text: str) -> float | None:
    """A cell's value for comparing: a date as a day count, else its first number."""
    dates = sorted(date_keys(text))
    if dates:
        y, m, d = dates[0]
        return y * 372 + m * 31 + d
    n = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    return float(n.group(0).replace(",", "")) if n else None


def names_of_kind(kind: str, text: str) -> list[str]:
    return name_spans(kind, text)


_ZH_UNITS = "个台次张件元升天小时分钟秒年月周晚班人项条份只套组倍页"


_ASKED_UNIT_RE = re.compile(
    rf"\bhow (?:many|much)\s+(?P<en>[a-z]+)|(?:几|多少)\s*(?P<zh>小时|分钟|[{_ZH_UNITS}])", re.I
)


def asked_unit(question: str) -> str:
    """The unit a 'how many X' / '几天' question counts in ('day', '天'), '' if it names none."""
    m = _ASKED_UNIT_RE.search(question)
    if not m:
        return ""
    if m.group("zh"):
        return m.group("zh")
    word = tx.stem(m.group("en").lower())
    return "" if word in tx.EN_STOPWORDS else word


def unit_fits(span: str, unit: str) -> bool:
    if tx.has_cjk(unit):
        return unit in span
    return any(tx.stem(w.lower()) == unit for w in re.findall(r"[A-Za-z]+", span))


def amount_beside(value: str, question: str) -> bool:
    """Whether a value names a code the question names and a number besides it ('RX-7 x 40'
    for a question about RX-7): an amount of that very thing."""
    named = [
        c for c in codes_in(value) if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", question)
    ]
    rest = re.sub("|".join(re.escape(c) for c in named), " ", value) if named else ""
    return bool(re.search(r"\d", rest))


# A member of a numbered class: '一类' / '二级' / '三期', 'class 2' / 'tier II' / 'level 3'
# ('同一类' and '每一级' say "the same kind" and "each", not which one).
_CLASS_RE = re.compile(
    r"(?<![同每这那哪任某单唯统])[一二三四五六七八九十\d]{1,2}(?:类|级|期|档)"
    r"|\b(?:class|tier|level|grade|phase|category|zone|band)\s+(?:\d{1,2}|[IVX]{1,4}|[A-D])\b"
    r"|(?<![A-Za-z0-9_-])(?-i:[A-Z])\d(?![A-Za-z0-9_.]|-\d)",  # a priority or grade: 'P1', 'K2', 'L3'
    re.IGNORECASE,
)


def class_anchors(text: str) -> list[str]:
    """The numbered classes a text names ('一类', 'Tier 2', 'P1'), folded for comparison: a
    numbered class names one member among its like, as a code does."""
    return [" ".join(m.group(0).casefold().split()) for m in _CLASS_RE.finditer(text)]


_RANGE_SIDES = {side: words for side, words in lexicon.table("range_sides")}
# between the two dates: a dash or 'to', after a place the first date may name ('1899 Baltimore,
# Maryland – 1980')
_RANGE_DASH_RE = re.compile(
    r"^(?:,?\s*[A-Z][\w.'’-]*){0,4},?\s*(?:[-–—~～]|\bto\b|\buntil\b|\btill\b|至|到)\s*$"
)


@functools.lru_cache(maxsize=1024)
def range_side(part: str) -> str:
    """Which end of a range of two dates the part asks for: 'start' for 'born' / 'start',
    'end' for 'died' / 'until' (lexicon range_sides.txt); '' for neither or both."""
    asked = [side for side, cues in _RANGE_SIDES.items() if _says_cue(part, cues)]
    return asked[0] if len(asked) == 1 else ""


def _says_cue(text: str, cues: Sequence[str]) -> bool:
    """Whether the text holds one of the cue words: an English one whole, a Chinese one as
    part of it."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    return any((c in text) if tx.has_cjk(c) else (c in words) for c in cues)


def range_end(text: str, dates: Sequence[str], part: str) -> str:
    """Of a range of two dates in the text ('3 May 1901 – 9 June 1980'), the end the part asks
    for (`range_side`); '' when the text holds no such range or the part asks neither end."""
    side = range_side(part)
    pair = range_pair(text, dates) if side else None
    return "" if pair is None else pair[side == "end"]


def range_pair(text: str, dates: Sequence[str]) -> tuple[str, str] | None:
    """The first two dates of the text joined as a range ('1901 – 1980'), if any."""
    for first, second in zip(dates, dates[1:], strict=False):
        a, b = text.find(first), text.find(second)
        if 0 <= a < b and _RANGE_DASH_RE.match(text[a + len(first) : b]):
            return first, second
    return None
