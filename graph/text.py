"""Language-aware text helpers for offline reasoning: language, terms, sentences, entities.

Chinese goes through jieba; English through a regex with a stopword list. Everything here is
deterministic and cheap so the offline reasoner can run on every hop without a model.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Set
from functools import lru_cache

from graph.schemas import SubQuestion
from ingest import lexicon
from ingest.lang import CJK as CJK  # the one rule, used through graph.text too
from ingest.lang import has_cjk as has_cjk
from ingest.lang import language_of as language_of
from ingest.phrases import capitalized_spans as capitalized_spans  # shared with the phrase table
from ingest.phrases import cjk_names as cjk_names
from ingest.phrases import cjk_org_names as cjk_org_names
from ingest.phrases import fold as fold
from ingest.phrases import jieba_tokenizer
from ingest.phrases import phrase_key as phrase_key
from ingest.phrases import quoted_titles as quoted_titles
from ingest.phrases import with_parenthetical as with_parenthetical

_EN_WORD_RE = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['’][A-Za-z]+)?")
_YEAR_RE = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def word_set(text: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps the lists below compact)."""
    return frozenset(text.split())


EN_STOPWORDS = lexicon.words("en_stopwords")
EN_QUESTION_WORDS = lexicon.words("en_question_words")  # no retrieval signal on their own
ZH_STOPWORDS = lexicon.words("zh_stopwords")

_PUNCT_RE = re.compile(r"^[\W_]+$", re.UNICODE)

# Sentence ends: Chinese full stops always; English ., ! or ? followed by space and a capital,
# digit or quote (keeps "U.S. Army" and "Dr. Smith" mostly intact).
_SENT_SPLIT_RE = re.compile(
    r"(?<=[。！？；!?])\s*|(?<=[.])\s+(?=[\"'“(\[]?[A-Z0-9" + CJK + r"])|\n{2,}|\n(?=\s*[-*•\d])"
)
_ABBREVIATIONS = lexicon.words("abbreviations")
MONTHS = lexicon.words("months")


# ------------------------------------------------------------ sub-questions and #k
MAX_SUB_QUESTIONS = 8
PLACEHOLDER_RE = re.compile(r"#(\d+)")  # '#2': what sub-question 2 finds


def placeholder_ids(text: str) -> list[int]:
    """The k of every #k in the text, in order."""
    return [int(k) for k in PLACEHOLDER_RE.findall(text)]


def renumber_sub_questions(
    subs: Iterable[SubQuestion], limit: int = MAX_SUB_QUESTIONS
) -> list[SubQuestion]:
    """Ids 1..n in the given order (empty ones dropped, at most `limit`), each #k and
    depends_on following its sub-question's new id; a #k whose sub-question is gone is
    removed, and a link must point to an earlier one (read off the first #k when missing)."""
    kept = [s for s in subs if s.question.strip()][:limit]
    new_id: dict[int, int] = {}
    for i, s in enumerate(kept, start=1):
        new_id.setdefault(s.id, i)
    out: list[SubQuestion] = []
    for i, s in enumerate(kept, start=1):
        old_refs = placeholder_ids(s.question)
        refs = [new_id[k] for k in old_refs if k in new_id]
        question = PLACEHOLDER_RE.sub(lambda m: _renumbered(m, new_id), s.question)
        if len(refs) < len(old_refs):
            question = normalize_space(question)
        dep = new_id.get(s.depends_on) if s.depends_on is not None else None
        dep = dep if dep is not None and dep < i else next((k for k in refs if k < i), None)
        search = s.search_query
        if search:
            search = normalize_space(PLACEHOLDER_RE.sub(lambda m: _renumbered(m, new_id), search))
        out.append(
            SubQuestion(
                id=i, question=question.strip(), depends_on=dep, search_query=search or None
            )
        )
    return out


def _renumbered(match: re.Match[str], new_id: dict[int, int]) -> str:
    k = new_id.get(int(match.group(1)))
    return "" if k is None else f"#{k}"


_IRREGULAR = {form: base for base, forms in lexicon.table("en_irregular_verbs") for form in forms}


def stem(word: str) -> str:
    """A light English stemmer: enough to match 'films'/'film', 'directed'/'director', and
    an irregular verb's forms with its base ('led'/'leads')."""
    w = word.lower()
    w = _IRREGULAR.get(w, w)
    if len(w) == 4 and w.endswith("s") and w[2] not in "sui" and w.isalpha():
        return w[:3]  # 'owns', 'fees', 'buys': 'own', 'fee', 'buy' (not 'this', 'thus', 'less')
    if len(w) <= 4 or not w.isalpha():
        return w
    if len(w) > 6 and w.endswith(("ors", "ers")):
        w = w[:-1]
    if len(w) > 6 and w.endswith(("or", "er")):
        return w[:-2]  # the agent noun shares its verb's stem: director / directed
    for suffix, repl in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("ers", "er"),
        ("es", "e"),
        ("s", ""),
    ):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            if suffix == "s" and w.endswith(("ss", "us", "is")):
                return w
            base = w[: len(w) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(base) >= 4 and _DOUBLED_RE.search(base):
                return base[:-1]  # 'starring', 'planned': 'star', 'plan'
            return _without_e(base)
    return _without_e(w)


_DOUBLED_RE = re.compile(r"([b-df-hj-km-rtv-y])\1$")  # not l, s, z: 'filled' is 'fill'


def _without_e(stem_: str) -> str:
    """'service', 'services' and 'serviced' share 'servic': a final silent e is dropped."""
    return stem_[:-1] if len(stem_) > 4 and stem_.endswith("e") else stem_


def _is_cjk_token(token: str) -> bool:
    return has_cjk(token)


def words(text: str) -> list[str]:
    """Every word of the text in order (no stopword removal), lowercased for English."""
    return list(_words(text))


@lru_cache(maxsize=16384)  # the reader and the claim check cut the same sentences many times
def _words(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for segment in re.split(f"([{CJK}]+)", text):
        if not segment:
            continue
        if _is_cjk_token(segment):
            out.extend(t for t in jieba_tokenizer().lcut(segment) if t.strip())
        else:
            out.extend(m.group(0).lower().replace("’", "'") for m in _EN_WORD_RE.finditer(segment))
    return tuple(out)


def raw_tokens(text: str) -> list[str]:
    """jieba's tokens with case, spaces and punctuation kept, so they join back to the text."""
    return list(jieba_tokenizer().lcut(text))


def is_stopword(token: str) -> bool:
    t = token.lower()
    return t in EN_STOPWORDS or t in ZH_STOPWORDS or bool(_PUNCT_RE.match(t))


def tokenize(text: str, *, keep_question_words: bool = False) -> list[str]:
    """Content terms in order: stopwords and punctuation removed, English stemmed lightly."""
    out: list[str] = []
    for tok in words(text):
        if is_stopword(tok):
            continue
        if not keep_question_words and tok in EN_QUESTION_WORDS:
            continue
        if _is_cjk_token(tok):
            out.append(tok)
        else:
            tok = tok.removesuffix("'s")
            if tok:
                out.append(stem(tok))
    return out


def content_words(text: str) -> list[str]:
    """Words without stopwords or question words, unstemmed (for keyword queries)."""
    return [w for w in words(text) if not is_stopword(w) and w not in EN_QUESTION_WORDS]


def term_set(text: str) -> set[str]:
    """Content terms as a set; CJK words also contribute their characters' bigrams."""
    terms = set(tokenize(text))
    for t in list(terms):
        if _is_cjk_token(t) and len(t) > 2:
            terms.update(t[i : i + 2] for i in range(len(t) - 1))
    return terms


def split_sentences(text: str) -> list[str]:
    """Sentences of Chinese or English text, stripped, in order; abbreviations kept whole."""
    merged: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):  # a heading ending 'Co.' stays apart
        pieces = [p.strip() for p in _SENT_SPLIT_RE.split(paragraph) if p and p.strip()]
        start = len(merged)
        for piece in pieces:
            if len(merged) > start and ends_with_abbreviation(merged[-1]):
                merged[-1] = f"{merged[-1]} {piece}"
            else:
                merged.append(piece)
    return merged


def ends_with_abbreviation(sentence: str) -> bool:
    """'... Technology Co.' or '... J.': the full stop may not end the sentence."""
    if not sentence.endswith("."):
        return False
    last = sentence[:-1].rsplit(None, 1)[-1].lower() if sentence[:-1].split() else ""
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())


def years(text: str) -> list[str]:
    return _YEAR_RE.findall(text)


def cjk_terms(text: str) -> list[str]:
    """Chinese content words of two or more characters, in order, deduplicated."""
    seen: dict[str, None] = {}
    for tok in words(text):
        if _is_cjk_token(tok) and len(tok) >= 2 and not is_stopword(tok):
            seen.setdefault(tok, None)
    return list(seen)


def extract_entities(text: str) -> list[str]:
    """Named things in order of appearance: quoted titles, capitalised spans, years, CJK terms."""
    found: dict[str, None] = {}
    for item in quoted_titles(text):
        found.setdefault(item, None)
    for item in capitalized_spans(text):
        if not any(item in f for f in found):
            found.setdefault(item, None)
    for item in years(text):
        found.setdefault(item, None)
    if language_of(text) == "zh":
        for item in cjk_terms(text):
            if not any(item in f for f in found):
                found.setdefault(item, None)
    return list(found)


def overlap(query_terms: Iterable[str], text_terms: set[str]) -> float:
    """Share of the query terms present in the text (0..1)."""
    q = set(query_terms)
    if not q:
        return 0.0
    return len(q & text_terms) / len(q)


def normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def coverage_terms(text: str) -> list[str]:
    """Content terms for coverage checks: a lone CJK character is glued to the word before it.

    jieba cuts '供货方' into '供货' + '方' and '法定代表人' into '法定代表' + '人', but the
    passage may cut the same characters differently ('法定代表' + '人为'); a one-character
    fragment alone would then count as missing although the phrase is there.
    """
    out: list[str] = []
    prev_cjk = False
    for tok in _split_stop_tails(words(text)):
        cjk = _is_cjk_token(tok)
        if is_stopword(tok) or tok in EN_QUESTION_WORDS:
            prev_cjk = False
            continue
        if cjk and len(tok) == 1:
            if prev_cjk and out:
                out[-1] += tok
            prev_cjk = cjk and bool(out)
            continue  # a lone character with no word before it carries no signal
        out.append(tok if cjk else stem(tok.removesuffix("'s")))
        prev_cjk = cjk
    return list(dict.fromkeys(t for t in out if t))


ZH_STOP_CHARS = frozenset(w for w in ZH_STOPWORDS if len(w) == 1)


def _split_stop_tails(tokens: list[str]) -> Iterable[str]:
    """'方是' -> '方', '是'; '对嘉德鑫科' -> '对', '嘉德鑫科': jieba's HMM sometimes joins a
    stopword to its neighbour into a word its dictionary does not know ('首都' stays whole)."""
    freq = jieba_tokenizer().dt.FREQ
    for tok in tokens:
        if len(tok) < 2 or not _is_cjk_token(tok) or freq.get(tok):
            yield tok
            continue
        head = tok[0] if tok[0] in ZH_STOP_CHARS and len(tok) > 2 else ""
        tail = tok[-1] if tok[-1] in ZH_STOP_CHARS else ""
        core = tok[len(head) : len(tok) - len(tail)]
        yield from (t for t in (head, core, tail) if t)


def _stem_any(word: str) -> str:
    return word if _is_cjk_token(word) else stem(word)


def _relation_families() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(term -> the terms of its families, question cue -> the terms it asks for), from
    lexicon relation_words.txt."""
    kin: dict[str, set[str]] = {}
    cues: dict[str, set[str]] = {}
    for _, members in lexicon.table("relation_words"):
        family = {_stem_any(m) for m in members if not m.startswith("~")}
        for m in members:
            target = cues if m.startswith("~") else kin
            key = m.removeprefix("~").lower() if m.startswith("~") else _stem_any(m)
            target.setdefault(key, set()).update(family)
    return (
        {k: frozenset(v) for k, v in kin.items()},
        {k: frozenset(v) for k, v in cues.items()},
    )


_KIN, _CUES = _relation_families()


def kin(term: str) -> frozenset[str]:
    """The terms that say the same relation as a term ('employ' for 'work', 'acquir' for
    'purchas'), itself among them (lexicon relation_words.txt)."""
    return _KIN.get(term, frozenset()) | {term}


def kin_of(terms: Iterable[str]) -> set[str]:
    """Every term of the same relation as one of the terms (`kin`), the terms among them."""
    return set().union(*(kin(t) for t in terms))


def cue_terms(text: str) -> set[str]:
    """The relation terms a question asks for by a word that is no term itself ('born' for
    'What city is X from?')."""
    return {t for w in re.findall(r"[A-Za-z]+", text) for t in _CUES.get(w.lower(), ())}


def holds_kin(term: str, text: str, terms: set[str]) -> bool:
    """Whether a passage holds a term or a word of the same relation (`kin`)."""
    return any(term_in(k, text, terms) for k in kin(term))


def term_in(term: str, text: str, terms: Set[str]) -> bool:
    """Whether a coverage term occurs in a passage: CJK terms as a substring of its text, or
    without the character coverage_terms() may have glued on ('甘罗格市' in '塔甘罗格')."""
    if _is_cjk_token(term):
        return term in text or term in terms or (len(term) >= 3 and term[:-1] in text)
    return term in terms


# ----------------------------------------------------- invisible and look-alike characters

# Blank by design though their category says letter or symbol (Hangul and braille fillers).
_BLANK_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Cc"})  # format (zero-width, bidi), marks


def is_invisible(ch: str) -> bool:
    """Shows nothing on its own: zero-width, bidi control, joiner, variation selector, combining
    mark, control character (the line break excepted) or blank filler."""
    if ch in _BLANK_FILLERS:
        return True
    return ch != "\n" and unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def _angles(chars: str, direction: str, count: int) -> dict[str, tuple[str, int]]:
    return dict.fromkeys(chars, (direction, count))


# What reads as '<' or '>', and as how many: '«' looks like '<<'. Covers every character whose
# NFKC form is listed (full-width, small and vertical forms; tests/graph/test_fences.py checks).
ANGLE_LOOKALIKES: dict[str, tuple[str, int]] = {
    **_angles("<＜﹤‹〈\u2329︿⟨❮❬❰˂ᐸ≺⧼⦑⋖⊲◁", "<", 1),
    **_angles("«《︽⟪≪", "<", 2),
    **_angles("⋘", "<", 3),
    **_angles(">＞﹥›〉\u232a﹀⟩❯❭❱˃ᐳ≻⧽⦒⋗⊳▷", ">", 1),
    **_angles("»》︾⟫≫", ">", 2),
    **_angles("⋙", ">", 3),
}


def angle_runs(text: str, minimum: int = 3) -> list[tuple[int, int, str, int]]:
    """(start, end, '<' or '>', count) of each run of same-direction angle brackets worth at least
    `minimum`, look-alikes included, with invisible characters and spaces (not line breaks)
    between them ignored: `<\u200b<<`, `＜＜＜` and `‹ « ` each read as `<<<`."""
    runs, i, n = [], 0, len(text)
    while i < n:
        angle = ANGLE_LOOKALIKES.get(text[i])
        if angle is None:
            i += 1
            continue
        direction, count = angle
        end = k = i + 1
        while k < n:
            ch = text[k]
            more = ANGLE_LOOKALIKES.get(ch)
            if more is not None and more[0] == direction:
                count += more[1]
                end = k = k + 1
            elif more is None and (is_invisible(ch) or (ch.isspace() and ch != "\n")):
                k += 1
            else:
                break
        if count >= minimum:
            runs.append((i, end, direction, count))
        i = end
    return runs


def fold_for_markers(text: str) -> str:
    """The text as a marker check should read it: NFKC, invisible characters dropped, angle
    look-alikes as ASCII ('«' -> '<<'). For checking only; what is sent keeps its own text."""
    visible = "".join(ch for ch in text if not is_invisible(ch))  # before NFKC composes marks
    out = []
    for ch in unicodedata.normalize("NFKC", visible):
        angle = ANGLE_LOOKALIKES.get(ch)
        if angle is not None:
            out.append(angle[0] * angle[1])
        elif not is_invisible(ch):
            out.append(ch)
    return "".join(out)


# a sentence that opens with a pronoun or 'The/This <noun>' is about what came before it
_REFERS_BACK_RE = re.compile(
    r"(?:he|she|it|they|his|her|its|their|(?:the|this|these)\s+(?-i:[a-z])[\w-]*)\b", re.IGNORECASE
)


def refers_back(sentence: str) -> bool:
    """Whether an English sentence opens by referring back ('He was …', 'The club was …',
    'Its …'): it is about what the sentence before it names."""
    return _REFERS_BACK_RE.match(sentence) is not None


def singular(word: str) -> str:
    """A plural noun's singular by its '-s' ('meetings' -> 'meeting'; not 'glass'), lower-cased."""
    low = word.lower()
    return low[:-1] if len(low) > 3 and low.endswith("s") and not low.endswith("ss") else low
