"""The claim check: every claim of an answer against the passages it cites.

An answer is split into claims (sentences and list items, Chinese and English). A claim's
facts are its numbers, dates, codes and names; each must appear in a passage the claim cites
(after normalising width, case, thousands separators and date formats), be said by the
question itself, or be arithmetic on two numbers of those passages (a difference, a sum, a
share). A longer claim must also be close in meaning to a sentence of its passages (the
built-in embedder). A claim that states a fact and cites nothing fails, and so does one that
cites a passage that does not exist. Pure functions: the graph step that applies the verdicts
is `graph.nodes.check_claims`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import combinations

from graph import text as tx
from graph.binding import unbound_values
from graph.offline.params import PARAMS, OfflineParams
from graph.protocols import EvidenceItem
from graph.result import LOOKED_FOR_LEAD, NOT_SAID_LEAD, QUOTE_LEAD
from ingest.lang import CODE_RE, has_cjk
from ingest.phrases import cjk_tags

Similarity = Callable[[str, Sequence[str]], list[float]]

CITATION_RE = re.compile(r"\[(\d+(?:\s*[,，、]\s*\d+)*)\]")
_MARKERS_RE = re.compile(r"(?:\s*\[\d+(?:\s*[,，、]\s*\d+)*\])+")  # used with .match(pos)
_BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)、])\s+")
_LEAD_RE = re.compile(
    "^(?:"
    + "|".join(
        re.escape(x)
        for x in ("Answer:", "答案：", "答案:", *QUOTE_LEAD.values(), *NOT_SAID_LEAD.values())
    )
    + r")\s*"
)
# our own lines around an answer: what was searched, and notes in parentheses
_NOT_A_CLAIM_RE = re.compile(
    "^(?:" + "|".join(re.escape(x) for x in LOOKED_FOR_LEAD.values()) + r"|\(|（)"
)
_ZH_END = "。！？；"
_QUOTES = {"“": "”", "「": "」", "『": "』", '"': '"'}
_ABBREVIATIONS = frozenset({"e.g", "i.e", "mr", "mrs", "ms", "dr", "no", "vs", "etc", "st", "inc"})
_NUMBER_RE = re.compile(r"(?<![0-9A-Za-z.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![0-9])")
_YMD_RE = re.compile(r"(?<!\d)(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?!\d)")
_YM_RE = re.compile(r"(?<!\d)(\d{4})\s*(?:年\s*(\d{1,2})\s*月|[-/](\d{1,2})(?![-/.\d]))")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_WORD = r"(?:" + "|".join(sorted(tx.MONTHS, key=len, reverse=True)) + r")\.?"
_MDY_RE = re.compile(rf"\b({_MONTH_WORD})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_DMY_RE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_WORD}),?\s+(\d{{4}})\b", re.I)
_MY_RE = re.compile(rf"\b({_MONTH_WORD}),?\s+(\d{{4}})\b", re.I)
_NAME_RE = re.compile(r"\b[A-Z][a-z]*[A-Z]?[\w'’-]*")
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_NUMBER_RE = re.compile("[零〇一二两三四五六七八九十百千万]+")
_CJK_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt"})

Verdict = str  # supported | unsupported | uncited | unknown_source | no_claim
# a value a claim states: a code, or a number with its separators ('+86 186 8023 1149', '3,200')
_VALUE_RE = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+|\d[\d,.:/ -]*\d|\d")


@dataclass
class Claim:
    """One sentence or list item of an answer, where it sits, and what the check found."""

    start: int  # character span in the answer
    end: int
    text: str  # its words: no citation markers, bullet or lead
    cites: list[int]
    inherited: bool = False  # checked against a later sentence's citations on the same line
    verdict: Verdict = "no_claim"
    why: str = ""
    facts: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict in ("unsupported", "uncited", "unknown_source")

    def record(self) -> dict[str, object]:
        """What the trace shows of it."""
        return {
            "claim": self.text[:200],
            "cites": self.cites,
            "verdict": self.verdict,
            "why": self.why,
        }


# --- splitting ------------------------------------------------------------------------


def split_claims(answer: str) -> list[Claim]:
    """The answer's sentences and list items, each with the [n] markers it carries. Markers
    right after a sentence's full stop belong to it; a quotation is never split."""
    claims: list[Claim] = []
    offset = 0
    for line in answer.splitlines(keepends=True):
        if _NOT_A_CLAIM_RE.match(line.strip()) and not CITATION_RE.search(line):
            offset += len(line)
            continue
        bullet = _BULLET_RE.match(line)
        body_start = offset + (bullet.end() if bullet else 0)
        line_claims = [
            _claim(answer, start, end)
            for start, end in _sentences(answer, body_start, offset + len(line.rstrip("\n")))
        ]
        line_claims = [c for c in line_claims if c.text or c.cites]
        later: list[int] = []  # a paragraph cited once at its end cites its earlier sentences
        for claim in reversed(line_claims):
            if claim.cites:
                later = claim.cites
            elif later:
                claim.cites, claim.inherited = list(later), True
        claims.extend(line_claims)
        offset += len(line)
    return claims


def _sentences(answer: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    closing: list[str] = []
    begin = start
    i = start
    while i < end:
        ch = answer[i]
        if closing and ch == closing[-1]:
            closing.pop()
        elif ch in _QUOTES and not (ch == '"' and closing and closing[-1] == '"'):
            closing.append(_QUOTES[ch])
        elif not closing and _ends_sentence(answer, i, end):
            stop = i + 1
            markers = _MARKERS_RE.match(answer, stop, end)
            if markers:
                stop = markers.end()
            spans.append((begin, stop))
            begin = i = stop
            continue
        i += 1
    if answer[begin:end].strip():
        spans.append((begin, end))
    return spans


def _ends_sentence(text: str, i: int, end: int) -> bool:
    ch = text[i]
    if ch in _ZH_END:
        return True
    if ch not in ".!?":
        return False
    nxt = text[i + 1 : i + 3]
    if i + 1 >= end:
        return True
    if not nxt[:1].isspace() and not nxt.startswith("["):
        return False
    after = text[i + 1 : end].lstrip()
    markers = _MARKERS_RE.match(after)
    after = after[markers.end() :].lstrip() if markers else after
    if after[:1].islower():
        return False
    word = re.search(r"([\w.]+)$", text[max(0, i - 6) : i])
    return not (word and word.group(1).casefold() in _ABBREVIATIONS)


def _claim(answer: str, start: int, end: int) -> Claim:
    raw = answer[start:end]
    cites: list[int] = []
    for match in CITATION_RE.finditer(raw):
        for n in re.split(r"\s*[,，、]\s*", match.group(1)):
            if int(n) not in cites:
                cites.append(int(n))
    words = CITATION_RE.sub(" ", raw).replace("**", "")
    words = _LEAD_RE.sub("", tx.normalize_space(words))
    return Claim(start, end, words.strip(" “”「」\"'"), cites)


# --- facts ----------------------------------------------------------------------------


def normalise(text: str) -> str:
    """Width, case and thousands separators folded, so '１,２００' and '1200' are one fact."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"(?<=\d)[,，](?=\d{3}(?!\d))", "", text)


@dataclass(frozen=True)
class Facts:
    numbers: tuple[float, ...]
    dates: tuple[tuple[int, int, int], ...]  # day 0: a month
    codes: tuple[str, ...]
    names: tuple[str, ...]

    def shown(self) -> list[str]:
        days = [f"{y}-{m:02d}" + (f"-{d:02d}" if d else "") for y, m, d in self.dates]
        return [*map(_number_text, self.numbers), *days, *self.codes, *self.names]


def facts_of(text: str, *, names: bool = True) -> Facts:
    """The numbers, dates, codes and names one text states."""
    codes = [m.group(0) for m in CODE_RE.finditer(unicodedata.normalize("NFKC", text))]
    plain = normalise(CODE_RE.sub(" ", unicodedata.normalize("NFKC", text)))
    found_dates, plain = _dates(plain)
    numbers = [float(m.group(0).replace(",", "")) for m in _NUMBER_RE.finditer(plain)]
    if not names:  # a passage: its numbers written in Chinese count too ('百分之五', '三十日')
        numbers += [float(_cn_number(m.group(0))) for m in _CN_NUMBER_RE.finditer(plain)]
    return Facts(
        tuple(numbers),
        tuple(found_dates),
        tuple(dict.fromkeys(c.casefold() for c in codes)),
        tuple(_names(text)) if names else (),
    )


def _dates(text: str) -> tuple[list[tuple[int, int, int]], str]:
    """The dates of a normalised text and the text with them blanked out."""
    found: list[tuple[int, int, int]] = []

    def keep(y: int, m: int, d: int) -> str:
        if 1 <= m <= 12 and 0 <= d <= 31:
            found.append((y, m, d))
        return " "

    def month(word: str) -> int:
        return _MONTHS.index(word.rstrip(".")[:3].casefold()) + 1

    text = _YMD_RE.sub(lambda m: keep(int(m[1]), int(m[2]), int(m[3])), text)
    text = _MDY_RE.sub(lambda m: keep(int(m[3]), month(m[1]), int(m[2])), text)
    text = _DMY_RE.sub(lambda m: keep(int(m[3]), month(m[2]), int(m[1])), text)
    text = _MY_RE.sub(lambda m: keep(int(m[2]), month(m[1]), 0), text)
    text = _YM_RE.sub(lambda m: keep(int(m[1]), int(m[2] or m[3]), 0), text)
    return found, text


def _names(text: str) -> list[str]:
    """Proper names: capitalised English words (a sentence's first word only when the next is
    capitalised too) and Chinese person, place and organisation names."""
    out: list[str] = []
    matches = list(_NAME_RE.finditer(CITATION_RE.sub(" ", text)))
    for i, match in enumerate(matches):
        word = match.group(0).strip("'’-")
        if len(word) < 2 or word.casefold() in tx.EN_STOPWORDS or word.isupper():
            continue
        if _contraction(word):  # "I'm", "Let's", "You'll": a pronoun, not a name
            continue
        before = text[: match.start()].rstrip()
        opens = not before or before[-1] in '.!?:：“"(' or _LEAD_RE.fullmatch(before + " ")
        joined = i + 1 < len(matches) and matches[i + 1].start() - match.end() <= 1
        if opens and not joined:
            continue
        out.append(word)
    if has_cjk(text):
        out += [w for w, tag in cjk_tags(text) if tag in _CJK_NAME_TAGS and len(w) >= 2]
    return list(dict.fromkeys(out))


_CONTRACTION_RE = re.compile(r"(?P<base>\w+)['’](?:m|s|ll|ve|re|d)", re.IGNORECASE)


def _contraction(word: str) -> bool:
    """A stop word with a contracted verb ('I'm', 'Let's'); 'Nolan's' or "O'Brien" is not."""
    found = _CONTRACTION_RE.fullmatch(word)
    return found is not None and found.group("base").casefold() in tx.EN_STOPWORDS


def _cn_number(text: str) -> int:
    """The value of a number written in Chinese characters, up to the ten thousands."""
    total = section = digit = 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (digit or 1) * _CN_UNITS[ch]
            digit = 0
        else:  # 万
            total += (section + digit or 1) * 10_000
            section = digit = 0
    return total + section + digit


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


# --- checking -------------------------------------------------------------------------


@dataclass
class Passages:
    """What the cited passages state, for one claim."""

    text: str  # normalised
    facts: Facts
    sentences: list[str]
    latin: bool  # they hold Latin-script words (names can be compared)


def passages(cited: Sequence[EvidenceItem], evidence: Sequence[EvidenceItem]) -> Passages:
    """What the cited items state; a cited document that was read whole is cited as a whole
    (its reader cites the document by its first chunk)."""
    whole = {_document(i) for i in cited if i.whole_document}
    items = [*cited, *(i for i in evidence if i not in cited and _document(i) in whole)]
    texts = [
        "\n".join([item.title or "", item.section or "", item.text, *item.sentences])
        for item in items
    ]
    joined = "\n".join(texts)
    sentences = [s for t in texts for s in tx.split_sentences(t) if s.strip()]
    return Passages(
        normalise(joined),
        facts_of(joined, names=False),
        sentences,
        bool(re.search(r"[A-Za-z]{3,}", joined)),
    )


def _document(item: EvidenceItem) -> str:
    """The document a chunk belongs to (its id without the chunk number)."""
    return (item.chunk_id or item.url or "").rsplit("-", 1)[0]


def check(
    claims: Sequence[Claim],
    items: Sequence[EvidenceItem],
    question: str,
    similarity: Similarity | None = None,
    params: OfflineParams = PARAMS,
) -> list[Claim]:
    """Sets each claim's verdict and why; returns the claims."""
    by_n = {item.n: item for item in items}
    asked = facts_of(question)
    asked_text = normalise(question)
    for claim in claims:
        if not claim.text:
            continue  # markers alone: the sentence before them carries them
        facts = facts_of(claim.text)
        claim.facts = facts.shown()
        unknown = [n for n in claim.cites if n not in by_n]
        if unknown:
            claim.verdict = "unknown_source"
            claim.why = f"cites [{', '.join(map(str, unknown))}], which no passage has"
            continue
        stated = _unasked(facts, asked, asked_text)
        if not claim.cites:
            if stated:
                claim.verdict, claim.why = "uncited", "states " + ", ".join(stated[:3])
            continue
        cited = passages([by_n[n] for n in claim.cites], items)
        missing = _missing(facts, cited, asked, asked_text)
        if missing:
            where = ", ".join(f"[{n}]" for n in claim.cites)
            claim.verdict = "unsupported"
            claim.why = f"{', '.join(missing[:3])} not in {where}"
            continue
        claim.verdict, claim.why = "supported", "facts found" if stated else ""
        values = [v for v in _VALUE_RE.findall(claim.text) if normalise(v) not in asked_text]
        copied = "".join(normalise(claim.text).split()) in "".join(cited.text.split())
        loose = (
            []
            if copied
            else unbound_values(values, claim.text, question, [by_n[n] for n in claim.cites], items)
        )  # a quote copied from its passage is bound as the passage binds it
        if loose:
            claim.verdict = "unsupported"
            claim.why = f"{', '.join(loose[:3])} is said of another name in its passages"
            continue
        far = _far(claim.text, cited, similarity, params)
        if far is not None:
            claim.verdict, claim.why = (
                "unsupported",
                f"far in meaning from its passages ({far:.2f})",
            )
    return list(claims)


def _unasked(facts: Facts, asked: Facts, asked_text: str) -> list[str]:
    """The facts a claim states that the question does not already give."""
    out = [_number_text(v) for v in facts.numbers if v not in asked.numbers]
    out += [f"{y}-{m:02d}" for y, m, _ in facts.dates if (y, m) not in {d[:2] for d in asked.dates}]
    out += [c for c in facts.codes if c not in asked_text]
    out += [n for n in facts.names if normalise(n) not in asked_text]
    return out


def _missing(facts: Facts, cited: Passages, asked: Facts, asked_text: str) -> list[str]:
    """The claim's facts that neither its passages nor the question hold."""
    missing: list[str] = []
    known = set(cited.facts.numbers) | set(asked.numbers)
    for value in facts.numbers:
        if value not in known and not _derived(value, cited.facts):
            missing.append(_number_text(value))
    days = set(cited.facts.dates) | set(asked.dates)
    months = {d[:2] for d in days}
    for y, m, d in facts.dates:
        if (y, m, d) not in days and not (d == 0 and (y, m) in months):
            missing.append(f"{y}-{m:02d}" + (f"-{d:02d}" if d else ""))
    missing += [c for c in facts.codes if c not in cited.text and c not in asked_text]
    for name in facts.names:
        key = normalise(name)
        if key in cited.text or key in asked_text:
            continue
        if not has_cjk(name) and not cited.latin:
            continue  # an English name of a Chinese passage cannot be compared by its letters
        if has_cjk(name) and not has_cjk(cited.text):
            continue
        missing.append(name)
    return missing


def _derived(value: float, facts: Facts, limit: int = 40) -> bool:
    """Whether `value` is a difference, sum, product, ratio or percentage of two numbers of the
    passages (rounded as the claim writes it), or the days between two of their dates."""
    decimals = len(_number_text(value).partition(".")[2])
    numbers = list(dict.fromkeys(facts.numbers))[:limit]
    for a, b in combinations(numbers, 2):
        for result in (a + b, abs(a - b), a * b):
            if round(result, decimals) == value:
                return True
        for x, y in ((a, b), (b, a)):
            if y and (round(x / y, decimals) == value or round(100 * x / y, decimals) == value):
                return True
    full = [d for d in dict.fromkeys(facts.dates) if d[2]][:limit]
    for first, second in combinations(full, 2):
        try:
            if abs((date(*first) - date(*second)).days) == value:
                return True
        except ValueError:
            continue
    return False


def _far(
    claim: str, cited: Passages, similarity: Similarity | None, params: OfflineParams
) -> float | None:
    """The claim's best similarity to a sentence of its passages when it is too low, else None.
    Short claims (a name, a value) and claims copied from the passages are not compared."""
    squashed = "".join(normalise(claim).split())
    if not squashed or squashed in "".join(cited.text.split()):
        return None
    size = len(tx.content_words(claim)) if not has_cjk(claim) else len(squashed) // 2
    if similarity is None or size < params.claim_meaning_words or not cited.sentences:
        return None
    try:
        scores = similarity(claim, cited.sentences[: params.claim_passage_sentences])
    except Exception:  # noqa: BLE001 - no embedder only leaves the facts check
        return None
    best = max(scores, default=1.0)
    return best if best < params.claim_min_similarity else None


# --- applying -------------------------------------------------------------------------


def without(answer: str, claims: Sequence[Claim]) -> str:
    """The answer with the failed claims cut out, and lines left empty by it dropped."""
    out: list[str] = []
    last = 0
    for claim in sorted((c for c in claims if c.failed), key=lambda c: c.start):
        out.append(answer[last : claim.start])
        last = claim.end
    out.append(answer[last:])
    kept = []
    for line in "".join(out).splitlines():
        if _BULLET_RE.sub("", line).strip() or not line.strip():
            kept.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip() + "\n"


def stated(claims: Sequence[Claim]) -> Claim | None:
    """The answer's stated answer: its first sentence with words (a model's first line must
    be a cited, supported claim: one that only restates the question answers nothing)."""
    return next((c for c in claims if c.text), None)
