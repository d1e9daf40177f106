"""Answers that compare named things: a choice ('Which …, A or B?': the item whose value the
comparison word picks, else the one whose passage says what is asked) and yes/no ('Are A and
B both …?', 'the same country?'), each item read from the passage and the sentence about it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from graph import text as tx
from graph.offline.answer_spans import ANSWER_DATE_RE, Short
from graph.offline.namelists import COUNTRIES, NAMED_KINDS
from graph.offline.nations import asks_same_nation, nation_keys
from graph.offline.params import PARAMS, OfflineParams
from graph.offline.spans import MASK_RE, mask, question_spans
from graph.protocols import EvidenceItem, HopView
from ingest import lexicon
from ingest.phrases import text_phrases

if TYPE_CHECKING:
    from graph.protocols import Similarity


def _directions(name: str) -> dict[str, int]:
    """A comparatives lexicon's words and the direction each picks ('-' smaller or earlier)."""
    return {w: (-1 if sign == "-" else 1) for sign, ws in lexicon.table(name) for w in ws}


DIRECTIONS = _directions("comparatives")


def _items_of(question: str) -> list[str]:
    spans = question_spans(question)
    return [s.text for s in spans]


def passage_about(name: str, evidence: Sequence[EvidenceItem]) -> EvidenceItem | None:
    """The best passage about a name: its title names it, else the first that mentions it;
    never one whose title is a longer name holding it ('Torrent Dice Game' is no passage
    about 'Torrent': another thing of the same name)."""
    low = name.lower().strip('"“”《》')
    own = [e for e in evidence if not _longer_name(e.title, low)]
    titled = [e for e in own if e.title and low in e.title.lower()]
    exact = [e for e in titled if _plain_title(e.title) == low]
    if titled:  # its own title first ('Torrent' over 'Torrent: Islanders', an expansion's)
        return (exact or titled)[0]
    return next((e for e in own if low in e.text.lower()), None)


def _plain_title(title: str) -> str:
    """A title without its qualifier, lower-cased ('torrent' of 'Torrent (game)')."""
    return re.sub(r"\s*\([^()]*\)", "", title).strip().lower()


def _longer_name(title: str, low: str) -> bool:
    """Whether a title is a longer name that holds the name: a capitalised word right before
    or after it ('Torrent Dice Game', 'Old Torrent'; not 'The Torrent', 'Torrent (game)')."""
    plain = re.sub(r"\s*\([^()]*\)", "", title).strip()
    at = plain.lower().find(low)
    if at < 0 or not low:
        return False
    before = plain[:at].split()[-1:] if plain[:at].strip() else []
    after = plain[at + len(low) :].split()[:1]
    return any(w[:1].isupper() and w.lower() not in tx.EN_STOPWORDS for w in (*before, *after))


def choice(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    params: OfflineParams = PARAMS,
    similarity: Similarity | None = None,
) -> Short | None:
    """'Which …, A or B?': the item whose value the comparison word picks (an earlier date,
    a larger number); without one, the item whose passage best matches the question."""
    question = question.replace("⟨", "〈").replace("⟩", "〉")
    masked = mask(question, question_spans(question))
    names = _items_of(question)
    named = [names[int(k)] for k in MASK_RE.findall(masked)]
    items = named[-2:] if len(named) >= 2 else named
    if len(items) < 2:
        return None
    direction = comparison_direction(question)
    if direction:  # 'which is larger': a value of the same kind for each, or no stated choice
        passages = [passage_about(n, evidence) or _via_hop(n, evidence, hops) for n in items]
        found = [p for p in passages if p is not None]
        texts = [p.text for p in found]
        values = _compared_values(texts, _asks_time(question)) if len(found) == len(items) else None
        if values is None or len(set(values)) < len(values):
            return None  # the same value (both born in 1958): neither is earlier or larger
        pick = (min if direction < 0 else max)(range(len(items)), key=lambda i: values[i])
        return Short(items[pick], found[pick].n, params.choice_by_value)
    asked = MASK_RE.sub(  # the question without the compared items; other names kept
        lambda m: " " if names[int(m.group(1))] in items else names[int(m.group(1))], masked
    )
    listed = None if direction else _by_named_value(question, asked, items, evidence, params)
    if listed is not None:  # 'which film is from Japan': the one whose passage says Japanese
        return listed
    rel_terms = tx.term_set(asked)
    scored = []
    for name in items:
        passage = passage_about(name, evidence)
        if passage is not None:
            scored.append((len(rel_terms & tx.term_set(passage.text)), name, passage))
    if len(scored) < len(items):
        return None  # one side's passage alone settles no choice: read, not stated
    scored.sort(key=lambda x: -x[0])
    if len(scored) > 1 and scored[0][0] == scored[1][0]:  # as many of the question's words:
        return _by_meaning(asked, scored[:2], similarity, params)  # never by the name
    _, name, passage = scored[0]
    return Short(name, passage.n, params.choice_by_words)


def _by_named_value(
    question: str,
    asked: str,
    items: Sequence[str],
    evidence: Sequence[EvidenceItem],
    params: OfflineParams,
) -> Short | None:
    """Of the compared items, the only one whose passage names the country or language the
    question asks about ('from Japan': 'a 2009 Japanese animated film'; 'in English': a film
    in English, not a British one); None when the question names none, or not exactly one
    item's passage names it."""
    spoken = [name for _, name in NAMED_KINDS["language"].find(asked)]
    in_one = any(re.search(rf"\b(?:in|into)\s+{re.escape(n)}\b", asked) for n in spoken)
    kind = "language" if in_one or re.search(r"\blanguage\b|语言|文字", question) else "nation"
    names = NAMED_KINDS[kind]
    wanted = {key for key, _ in names.find(asked)}
    holding = []
    for name in items if wanted else ():
        passage = passage_about(name, evidence)
        sentence = sentence_about(name, passage) if passage is not None else ""
        if passage is not None and wanted & {key for key, _ in names.find(sentence)}:
            holding.append((name, passage.n))
    if len(holding) != 1:
        return None
    return Short(holding[0][0], holding[0][1], params.choice_by_words)


def _by_meaning(
    asked: str,
    tied: Sequence[tuple[int, str, EvidenceItem]],
    similarity: Similarity | None,
    params: OfflineParams,
) -> Short | None:
    """Of two items whose passages hold as many of the question's words, the one whose
    passage is nearer in meaning to what is asked ('from Japan' and a passage saying
    'Japanese') by `choice_meaning_margin`; None without the embedder or when as near."""
    asked = tx.normalize_space(asked)
    if similarity is None or not asked:
        return None
    try:
        sims = similarity(asked, [passage.text for _, _, passage in tied])
    except Exception:  # noqa: BLE001 - without meaning the tie stays a tie
        return None
    if len(sims) != 2 or abs(sims[0] - sims[1]) < params.choice_meaning_margin:
        return None
    _, name, passage = tied[0] if sims[0] > sims[1] else tied[1]
    return Short(name, passage.n, params.choice_by_words)


def _via_hop(
    name: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView]
) -> EvidenceItem | None:
    """For 'the director of A': the passage of the hop that bridged from A's lookup."""
    for k, hop in enumerate(hops):
        if name.lower() in hop.query.lower():
            for later in hops[k + 1 :]:
                if f"#{k + 1}" in later.sub_question and later.hit_ids:
                    return next((e for e in evidence if e.chunk_id == later.hit_ids[0]), None)
    return None


# a Chinese predicate adjective that compares where it ends a clause that asks 谁/哪 ('谁的额度
# 高？', '哪家便宜'), never inside a word ('组长', '身高', '延长') or a pair ('大小', '长短'), nor
# after a degree word ('这么贵', '很多') or in 多长/多久, which ask: comparatives_final.txt
_FINAL = _directions("comparatives_final")
_FINAL_RE = re.compile(
    r"(?:谁|哪)[^，,。？?！!；;\s是为当任做]*?"  # '谁是站长' names a post: no comparison
    r"(?<![多很太好么组部事身体特延大小长短高低远近早晚轻重])("
    + "|".join(sorted(map(re.escape, _FINAL), key=len, reverse=True))
    + r")(?![大小长短高低远近早晚轻重])(?:一些|一点|些|点)?(?:呢|啊|吗)?\s*(?:[？?。，,！!；;]|$)"
)


def comparison_direction(question: str) -> int:
    """-1 when the question asks for the smaller value or earlier date, +1 the larger or
    later, 0 when it compares nothing (comparatives.txt; comparatives_final.txt at the end
    of a clause)."""
    said = next((d for w, d in DIRECTIONS.items() if _has_word(question, w)), 0)
    if said:
        return said
    final = _FINAL_RE.search(question)
    return _FINAL[final.group(1)] if final else 0


def _has_word(text: str, word: str) -> bool:
    if tx.has_cjk(word):
        return word in text
    return re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) is not None


def _first_value(text: str) -> float | None:
    """The first date (as a year with a fraction for month and day) or number in a passage."""
    m = ANSWER_DATE_RE.search(text)
    if m:
        years = re.findall(r"\d{3,4}", m.group(0))
        if years:
            month = next((i for i, mo in enumerate(_MONTH_ORDER) if mo in m.group(0).lower()), 0)
            day = re.match(r"\d{1,2}\b", m.group(0))
            return int(years[-1]) + month / 13 + (int(day.group(0)) / 400 if day else 0)
    n = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    return float(n.group(0).replace(",", "")) if n else None


def _asks_time(question: str) -> bool:
    """Whether a comparison word of the question compares times ('first', 'more recently',
    'older'; time_comparatives.txt), not sizes ('more albums', 'larger')."""
    return any(_has_word(question, w) for w in _TIME_WORDS)


_TIME_WORDS = lexicon.words("time_comparatives")


def _compared_values(texts: Sequence[str], dates: bool = True) -> list[float] | None:
    """One value per passage to compare: the first dates or years when each passage has one
    first ('born 4 May 1901', 'a 1927 film') and `dates` (the question compares times), else
    the first amount of a unit all of them give ('7,816 m' and '8,051 m'; not the year '1808'
    against '8051 m'); None when they share no kind of value."""
    firsts = [_first_value(t) for t in texts]
    opens = [v is not None and _opens_with_date(t) for v, t in zip(firsts, texts, strict=True)]
    if dates and all(opens):
        return [v for v in firsts if v is not None]
    per = [_amounts_by_unit(t) for t in texts]
    common = [u for u in per[0] if u != "date" and all(u in p for p in per[1:])]
    return [p[common[0]] for p in per] if common else None


def _amounts_by_unit(text: str) -> dict[str, float]:
    """The first number of each unit in a text, in order ('m' of '8,051 m'); a unit of the
    units lexicon counts in its quantity's base unit ('7.8 km' is 7,800 of 'length')."""
    from graph.offline.calc import base_unit

    out: dict[str, float] = {}
    for m in re.finditer(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])", text):
        word = _word_after(text, m.end())
        if not word or word in tx.EN_STOPWORDS:
            if not re.fullmatch(r"\d{4}", m.group(0)):
                continue  # a bare number counts nothing it says
            word = "date"
        value = float(m.group(0).replace(",", ""))
        base = base_unit(word)
        if base is not None:
            word, value = base[0], value * base[1]
        out.setdefault(word, value)
    return out


def _opens_with_date(text: str) -> bool:
    """Whether the value `_first_value` reads is a date or a bare year ('4 May 1901', '(born
    1958)', 'a 1927 silent film'), not an amount."""
    m = ANSWER_DATE_RE.search(text) or re.search(r"\d[\d,]*(?:\.\d+)?", text)
    if m is None:
        return False
    if re.search(r"[A-Za-z]", m.group(0)):
        return True
    if re.fullmatch(r"\d{4}", m.group(0)) and 1000 <= int(m.group(0)) < 2100:
        return True
    return _word_after(text, m.end()) == "date"


def _word_after(text: str, end: int) -> str:
    """The word right after a number, lower-cased ('m' of '8,051 m above'), or ''."""
    after = re.match(r"\s*([A-Za-z]+)", text[end:])
    return after.group(1).lower() if after else ""


_MONTH_ORDER = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def yes_no(
    question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView], params: OfflineParams
) -> Short | None:
    """Yes when every part of the question is backed by one passage; for 'both'/'same'
    questions, when the compared items' passages share the value asked about."""
    zh = tx.has_cjk(question)
    yes, no = ("是", "否") if zh else ("yes", "no")
    compares = re.search(r"\b(?:same|both)\b|相同|同一|都", question, re.I)
    if asks_same_nation(question):  # 'the same country': each one's country, read
        return _same_nation(question, evidence, hops, yes, no, params)
    parts = [h.query for h in hops] or [question]
    support: list[EvidenceItem] = []
    from graph.offline.evidence import relevance

    for part in parts:
        scored = [(relevance(part, e.title, e.text), e) for e in evidence]
        best = max(scored, key=lambda x: x[0], default=(0.0, None))
        if best[1] is None or best[0] < params.relevant_coverage:
            return None  # no passage speaks to it: not found, not "no"
        support.append(best[1])
    if (
        len(support) >= 2
        and re.search(r"\bboth\b", question, re.I)
        and not re.search(r"\bsame\b", question, re.I)
    ):
        return _both(question, support, yes, no, params)
    if len(support) >= 2 and compares:
        values = [set(_attributes(e.text)) for e in support]
        shared = set.intersection(*values) if values else set()
        return Short(yes if shared else no, support[0].n, params.yes_no_compared)
    if any(relevance(p, e.title, e.text) < 1.0 for p, e in zip(parts, support, strict=True)):
        return None  # 'was it cancelled?' over a passage without 'cancelled': no yes to state
    return Short(yes, support[0].n, params.yes_supported)


def _both(
    question: str, support: Sequence[EvidenceItem], yes: str, no: str, params: OfflineParams
) -> Short | None:
    """'Are A and B both X?': yes when each one's own first sentence says all of X ('… is a
    board game'); no only when X names a country and a sentence gives its subject another one
    ('a Hungarian director' for 'both American directors'). A word of X missing from a sentence
    says nothing: quoted, not a 'no' ('a guitarist and singer' for 'lead vocalists')."""
    tail = re.split(r"\bboth\b", question, maxsplit=1, flags=re.I)[-1]
    for name in _items_of(question):  # the compared things, not 'American' of the asked
        tail = tail if nation_keys(name) else tail.replace(name, " ")
    wanted = nation_keys(tail)
    terms = tx.term_set(tail) - {t for _, n in COUNTRIES.find(tail) for t in tx.term_set(n)}
    firsts = [(tx.split_sentences(e.text) or [""])[0] for e in support]
    said = [terms <= tx.term_set(f) for f in firsts]
    held = [nation_keys(f) for f in firsts]
    if wanted and any(h and not (h & wanted) for h in held):
        return Short(no, support[0].n, params.yes_no_compared)
    if all(said) and all(wanted <= h for h in held) and (terms or wanted):
        return Short(yes, support[0].n, params.yes_no_compared)
    return None


def _same_nation(
    question: str,
    evidence: Sequence[EvidenceItem],
    hops: Sequence[HopView],
    yes: str,
    no: str,
    params: OfflineParams,
) -> Short | None:
    """Whether the compared things share a country: the two a chain found ('the directors of
    A and B'), else the two parts' own names, else the two the question names; each read from
    the first sentence naming it, where it is the subject ('X is a village in …, Iran', 'Y (born
    1901) was an American director'). Nothing is stated unless each sentence names exactly
    one country, from two different passages."""
    from graph.offline.evidence import relevance

    found = [h.entity for h in hops if h.entity and tx.PLACEHOLDER_RE.search(h.sub_question)]
    parts = [h.query for h in hops if not tx.PLACEHOLDER_RE.search(h.sub_question)
             and h.query.strip(" ?？") != question.strip(" ?？")]  # fmt: skip
    compared: list[tuple[str, EvidenceItem | None]] = []
    if found:  # a chain found them: each by the name it found (one found: the chain broke)
        compared = [(name, passage_about(name, evidence)) for name in found[-2:]]
    elif len(parts) >= 2 and evidence:  # one part each: the passage that answers it, read
        for part in parts[-2:]:  # for the name the part asks about
            best = max(evidence, key=lambda e: relevance(part, e.title, e.text))
            named = [n for n in text_phrases(part) if n.lower() in best.text.lower()]
            if not named:
                return None  # no passage names it: not found, not "no"
            compared.append((named[0], best))
    elif len(named := _items_of(question)) == 2:  # asked whole: the two things it names
        compared = [(name, passage_about(name, evidence)) for name in named]
    read: list[tuple[frozenset[str], int, str]] = []
    for name, passage in compared:
        keys, sentence = _nations_of(name, passage) if passage and name else (frozenset(), "")
        if len(keys) != 1 or passage is None:
            return None  # none read, or several ('a French-Canadian film'): nothing to compare
        read.append((keys, passage.n, sentence))
    if len(read) < 2 or read[0][2] == read[1][2]:
        return None  # one sentence read for both: the other was not found
    shared = read[0][0] & read[1][0]
    shown = tuple((n, sentence) for _, n, sentence in read)
    return Short(yes if shared else no, read[0][1], params.yes_no_compared, shown)


def _nations_of(name: str, passage: EvidenceItem) -> tuple[frozenset[str], str]:
    """The countries the first sentence that names `name` says after it (a passage titled by
    the name: its first sentence), and that sentence; a nationality that only describes a
    language ('a French-language film') is none."""
    sentence = sentence_about(name, passage)
    low = name.lower().strip('"“”《》')
    at = sentence.lower().find(low)
    said = _LANGUAGE_ADJECTIVE_RE.sub(" ", sentence[at + len(low) :] if at >= 0 else sentence)
    return nation_keys(said), sentence


_LANGUAGE_ADJECTIVE_RE = re.compile(r"\b[A-Z][a-z]+-(?:language|speaking)\b")


def sentence_about(name: str, passage: EvidenceItem) -> str:
    """The first sentence of a passage, in its order, that names `name` (its first sentence
    when the passage is titled by the name); never a heading of only the name or the title's
    words. '' when none."""
    low = name.lower().strip('"“”《》')
    titled = bool(passage.title) and low in passage.title.lower()
    lines = [line.strip() for s in tx.split_sentences(passage.text) for line in s.splitlines()]
    own = tx.term_set(f"{name} {passage.title}")
    for sentence in lines:
        if sentence and not tx.term_set(sentence) <= own and (titled or low in sentence.lower()):
            return sentence
    return ""


def _attributes(text: str) -> list[str]:
    """Capitalised words used as adjectives in a passage's first sentence ('an American
    film director'): nationality, origin, kind."""
    first = tx.split_sentences(text)[:1]
    if not first:
        return []
    return [m.group(1) for m in re.finditer(r"\b(?:an?|the)\s+([A-Z][a-z]+)\s+[a-z]", first[0])]
