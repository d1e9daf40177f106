"""Language-aware text helpers for offline reasoning: language, terms, sentences, entities.

Chinese goes through jieba; English through a regex with a stopword list. Everything here is
deterministic and cheap so the offline reasoner can run on every hop without a model.
"""

from __future__ import annotations

import logging
import re
import unicodedata
import warnings
from collections.abc import Iterable
from functools import lru_cache

from graph.schemas import SubQuestion
from ingest.lang import CJK, has_cjk, language_of  # the one rule, used through graph.text too

_EN_WORD_RE = re.compile(r"[A-Za-z0-9\u00C0-\u024F]+(?:['’][A-Za-z]+)?")
_YEAR_RE = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def word_set(text: str) -> frozenset[str]:
    """A set from a whitespace-separated word list (keeps the lists below compact)."""
    return frozenset(text.split())


EN_STOPWORDS = word_set(
    """
    a about above after again against all also am an and any are aren't as at be became
    because been before being below between both but by can could did didn't do does doesn't
    doing don't down during each either else ever few for from further had has have having
    he her here hers herself him himself his how i if in into is isn't it it's its itself
    just let me more most my myself neither no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us very
    was wasn't we were weren't what whatever when where whereas whether which while who whom
    whose why will with would yet you your yours yourself yourselves one ones s t may might
    must shall also per via among within without whom please tell know give find show many
    much
    """
)

# Question words and vague relation words that carry no retrieval signal on their own.
EN_QUESTION_WORDS = word_set(
    """
    what which who whom whose when where why how name named called list does did do is are
    was were kind type sort
    """
)

ZH_STOPWORDS = word_set(
    """
    的 了 和 与 及 以及 或 或者 是 在 有 对 把 被 将 从 向 到 于 为 为了 由 而 并 并且 也 都 就 还 又 这 那 这个 那个 这些 那些 之 其 其中 它
    他 她 它们 他们 她们 我 我们 你 你们 您 吗 呢 吧 啊 呀 么 什么 怎么 怎样 如何 哪 哪个 哪些 哪里 哪儿 谁 多少 几 为何 为什么 是否 是不是 请问 请
    一下 一个 一些 个 上 下 中 等 等等 及其 其他 关于 通过 进行 以 所 可以 能 会 要 该 没有 不 时 后 前 里 内 吗？ 呢？ 多 较 更 最 啥 咋 分别
    各 各自 主要 具体 相关 情况 方面 问题 有关 哪一个 哪一
    """
)

_PUNCT_RE = re.compile(r"^[\W_]+$", re.UNICODE)

# Sentence ends: Chinese full stops always; English ., ! or ? followed by space and a capital,
# digit or quote (keeps "U.S. Army" and "Dr. Smith" mostly intact).
_SENT_SPLIT_RE = re.compile(
    r"(?<=[。！？；!?])\s*|(?<=[.])\s+(?=[\"'“(\[]?[A-Z0-9" + CJK + r"])|\n{2,}|\n(?=\s*[-*•\d])"
)
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "jr",
        "sr",
        "prof",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "rev",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "no",
        "vol",
        "fig",
        "u.s",
        "u.k",
        "e.g",
        "i.e",
        "a.m",
        "p.m",
    ]
)


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
        out.append(SubQuestion(id=i, question=question.strip(), depends_on=dep))
    return out


def _renumbered(match: re.Match[str], new_id: dict[int, int]) -> str:
    k = new_id.get(int(match.group(1)))
    return "" if k is None else f"#{k}"


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202 - jieba has no type hints
    """Import jieba once, quietly (it logs and warns on first use)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def stem(word: str) -> str:
    """A light English stemmer: enough to match 'films'/'film', 'directed'/'director'."""
    w = word.lower()
    if len(w) <= 4 or not w.isalpha():
        return w
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
            return w[: len(w) - len(suffix)] + repl
    return w


def _is_cjk_token(token: str) -> bool:
    return has_cjk(token)


def words(text: str) -> list[str]:
    """Every word of the text in order (no stopword removal), lowercased for English."""
    out: list[str] = []
    for segment in re.split(f"([{CJK}]+)", text):
        if not segment:
            continue
        if _is_cjk_token(segment):
            out.extend(t for t in _jieba().lcut(segment) if t.strip())
        else:
            out.extend(m.group(0).lower().replace("’", "'") for m in _EN_WORD_RE.finditer(segment))
    return out


def raw_tokens(text: str) -> list[str]:
    """jieba's tokens with case, spaces and punctuation kept, so they join back to the text."""
    return list(_jieba().lcut(text))


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


# Capitalised spans: "Battle of Mine Creek", "Joan, Lady of Wales" is two spans (comma).
# Lower-case words allowed inside a name ('Battle of Mine Creek', 'Vincent van Gogh'); 'for',
# 'in' or 'and' would glue two names together ('Martin Company for the United States Navy').
_CONNECTORS = word_set("of the de da di du del della van von der den la le y & 's")
_CAP_TOKEN_RE = re.compile(r"[A-Za-z0-9\u00C0-\u024F][\w\u00C0-\u024F'’.\-]*|&")
_QUOTED_RE = re.compile(r"[\"“《「『]([^\"”》」』]{2,80})[\"”》」』]")
_SENTENCE_START_SKIP = EN_STOPWORDS | EN_QUESTION_WORDS


MAX_SPAN_WORDS = 10  # capitalised words; longer runs are headings or infobox text


def capitalized_spans(text: str) -> list[str]:
    """Runs of Capitalised words (allowing 'of', 'the', 'de' inside), e.g. 'Battle of Mine Creek'."""
    spans: list[str] = []
    for clause in re.split(r"[,;:()?!\"“”]|\s[-–—]\s", text):
        tokens = _CAP_TOKEN_RE.findall(clause)
        current: list[str] = []
        for i, tok in enumerate(tokens):
            bare = tok if re.fullmatch(r"(?:[A-Z]\.)+|[A-Z][a-z]{0,3}\.", tok) else tok.rstrip(".")
            after_name = bool(current) and current[-1].lower() not in _CONNECTORS
            is_cap = bare[:1].isupper() or (bare[:1].isdigit() and after_name)
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if (
                bare.lower() == "the"
                and nxt[:1].isupper()
                or is_cap
                and not (i == 0 and bare.lower() in _SENTENCE_START_SKIP)
                or current
                and bare.lower() in _CONNECTORS
                or current
                and bare == "and"
                and nxt == "the"  # 'Charlie and the Chocolate Factory', not 'Rex and Ann'
            ):
                current.append(bare)
            else:
                _flush(current, spans)
                current = []
        _flush(current, spans)
    return spans


def with_parenthetical(span: str, text: str) -> str:
    """'Midnight Court' -> 'Midnight Court (Film)' when the text adds a short parenthetical."""
    m = re.search(re.escape(span) + r"\s*(\([^()]{1,30}\))", text)
    return f"{span} {m.group(1)}" if m else span


def _flush(current: list[str], spans: list[str]) -> None:
    while current and current[-1].lower() in _CONNECTORS:
        current.pop()
    while current and current[0].lower() in _CONNECTORS - {"the"}:
        current.pop(0)
    if current and current[0] == "the":
        current = current[1:]
    if not current:
        return
    if current:
        if sum(1 for w in current if w.lower() not in _CONNECTORS) > MAX_SPAN_WORDS:
            return
        if current[-1].endswith(".") and not re.fullmatch(r"(?:[A-Z]\.)+", current[-1]):
            current[-1] = current[-1].rstrip(".")
        span = " ".join(current).removesuffix("'s").removesuffix("’s")
        if span.lower() not in _SENTENCE_START_SKIP:
            spans.append(span)


def quoted_titles(text: str) -> list[str]:
    """Titles in quotes or book-title marks: "Swan Lake", 《天鹅湖》."""
    found = [m.group(1).strip() for m in _QUOTED_RE.finditer(text)]
    return [t for t in found if t and len(t.split()) <= 10]


def years(text: str) -> list[str]:
    return _YEAR_RE.findall(text)


def cjk_terms(text: str) -> list[str]:
    """Chinese content words of two or more characters, in order, deduplicated."""
    seen: dict[str, None] = {}
    for tok in words(text):
        if _is_cjk_token(tok) and len(tok) >= 2 and not is_stopword(tok):
            seen.setdefault(tok, None)
    return list(seen)


_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})


def cjk_names(text: str) -> list[str]:
    """Chinese proper names (people, places, organisations, works) by jieba's POS tags."""
    _jieba()  # quiet initialisation
    import jieba.posseg as posseg

    seen: dict[str, None] = {}
    for segment in re.findall(f"[{CJK}]+", text):
        for pair in posseg.cut(segment):
            if pair.flag in _NAME_FLAGS and len(pair.word) >= 2:
                seen.setdefault(pair.word, None)
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


# Organisation names end in a type word; the words before it (places, brand names, trades)
# are nouns, so the name starts after the last verb, preposition or punctuation.
_ORG_SUFFIX_RE = re.compile(
    "(?:有限责任公司|股份有限公司|有限公司|集团公司|集团|公司|银行|分行|支行|大学|学院|医院|研究院|"
    "研究所|仲裁院|法院|委员会|事务所|协会|基金会|工作室|工厂|厂)"
)
_ORG_PART_FLAGS = ("n", "j", "eng", "vn", "an", "nz", "nt", "ns", "nr")
MAX_ORG_WORDS = 6


def cjk_org_names(text: str) -> list[str]:
    """Chinese organisation names: '深圳星河电子有限公司', '深圳国际仲裁院', in order.

    jieba splits such names into a place and common nouns, so its name tags alone miss them;
    a type word ('有限公司', '仲裁院') plus the nouns right before it is the whole name.
    """
    _jieba()
    import jieba.posseg as posseg

    seen: dict[str, None] = {}
    for segment in re.findall(f"[{CJK}A-Za-z0-9]+", text):
        pairs = [(p.word, p.flag) for p in posseg.cut(segment)]
        starts, pos = [], 0
        for word, _ in pairs:
            starts.append(pos)
            pos += len(word)
        for m in _ORG_SUFFIX_RE.finditer(segment):
            first = idx = max(i for i, s in enumerate(starts) if s <= m.start())
            while (
                first > 0
                and idx - first < MAX_ORG_WORDS
                and pairs[first - 1][1].startswith(_ORG_PART_FLAGS)
                and not is_stopword(pairs[first - 1][0])
                and not pairs[first - 1][0].endswith("方")
            ):
                first -= 1
            name = segment[starts[first] : m.end()]
            if len(name) >= 4 and starts[first] < m.start():
                seen.setdefault(name, None)
    return [n for n in seen if not any(n != o and n in o for o in seen)]


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


_ZH_STOP_CHARS = frozenset(w for w in ZH_STOPWORDS if len(w) == 1)


def _split_stop_tails(tokens: list[str]) -> Iterable[str]:
    """'方是' -> '方', '是'; '对嘉德鑫科' -> '对', '嘉德鑫科': jieba's HMM sometimes joins a
    stopword to its neighbour into a word its dictionary does not know ('首都' stays whole)."""
    freq = _jieba().dt.FREQ
    for tok in tokens:
        if len(tok) < 2 or not _is_cjk_token(tok) or freq.get(tok):
            yield tok
            continue
        head = tok[0] if tok[0] in _ZH_STOP_CHARS and len(tok) > 2 else ""
        tail = tok[-1] if tok[-1] in _ZH_STOP_CHARS else ""
        core = tok[len(head) : len(tok) - len(tail)]
        yield from (t for t in (head, core, tail) if t)


def term_in(term: str, text: str, terms: set[str]) -> bool:
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
