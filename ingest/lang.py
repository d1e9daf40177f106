"""The one home of the CJK ideograph class and of the zh/en language rule.

ingest/ is the lowest layer, so the chunker and parsers use it here and graph/text.py
re-exports it; a second copy of either is a bug waiting to disagree.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["zh", "en"]

# Han ideographs: CJK Unified Ideographs and Extension A, the compatibility ideographs,
# the ideographic zero 〇, and the supplementary planes (Extensions B-G and the compatibility
# supplement: rare characters of names, some in the standard list of Chinese characters).
# Kana, Hangul, radicals and CJK punctuation are not in it; modules that need them add them.
CJK = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
CJK_RE = re.compile(f"[{CJK}]")

# The label of a 'Label: value' field line, for the parsers (a field keeps its own line) and
# the reader (a field is a unit, a block of them a record): one token without spaces ('组长',
# 'PO'), or two to four words that start with a capital ('New ship date', 'ETA Berlin').
# A code that names one thing among its like: 'KX-200', 'KF-FW-2031-017', 'TK-310803-05',
# 'ABC123' (capitals, then digits or hyphenated parts); also written against Chinese text
# ('工单TK-310803-05的'): only Latin letters, digits, '_' and '-' continue a code.
CODE_RE = re.compile(
    r"(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+(?![A-Za-z0-9_-])"
    r"|(?<![A-Za-z0-9_-])[A-Z]{1,4}\d{2,}[A-Z0-9]*(?![A-Za-z0-9_-])"
)
FIELD_LABEL = r"(?:[^\s:：|]{1,12}|[A-Z][\w/&.'()-]*(?: [\w/&.'()-]+){1,3})"

_KANA_RE = re.compile("[\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff]")
_TITLES_RE = re.compile("《[^》]*》|「[^」]*」|『[^』]*』|“[^”]*”")
_ZH_PUNCT_RE = re.compile("[，。、；：？！（）【】]")
_LINK_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[!-~]+|www\.[!-~]+|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]+"
)
_WORD_RE = re.compile(f"[^\\W\\d_{CJK}]+")  # a run of letters other than Han


def has_cjk(text: str) -> bool:
    """Whether the text holds any Han ideograph (a tokenising question, not a language one)."""
    return CJK_RE.search(text) is not None


def language_of(text: str) -> Language:
    """'zh' when Han characters are at least half the text's other-language weight, or a ninth
    of it in text punctuated the Chinese way (，。？ …); else 'en'. The weight counts the letters
    of lower-case words, and half those of capitalised words and codes, since names say little
    about the language; digits, URLs and e-mail addresses do not count. Kana outside
    《》「」『』“” mean Japanese: 'en'.

    So 'Acme 的 penalty 是多少？' and 'Nimbus-7 和 Nimbus-9 哪个更贵' are Chinese, and
    'When was 华为 founded?' and 'Who is the legal representative of 深圳某某数据有限公司?' English.
    """
    # Each step is skipped when it cannot change the verdict (no link marker, no kana, no
    # letters): a hybrid search reads the language of ~80 chunks, and this was a third of it.
    if "://" in text or "www." in text or "@" in text:
        text = _LINK_RE.sub(" ", text)
    if CJK_RE.search(text) is None:
        return "en"
    if _KANA_RE.search(text) and _KANA_RE.search(_TITLES_RE.sub("", text)):
        return "en"
    # doubled to stay in whole numbers: 2 per letter of a lower-case word, 1 of a name or code
    weight = sum(len(w) * (2 if w == w.lower() else 1) for w in _WORD_RE.findall(text))
    if not weight:
        return "zh"
    han = len(text) - len(CJK_RE.sub("", text))
    if 4 * han >= weight or (_ZH_PUNCT_RE.search(text) and 18 * han >= weight):
        return "zh"
    return "en"
