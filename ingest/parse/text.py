"""Plain text: its encoding guessed (BOMs, UTF-16/32, GB 18030, charset-normalizer), then read
in windows so a huge file never sits in memory as one document.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from ingest.errors import IngestError
from ingest.hidden import Tally, strip_invisible
from ingest.lang import CJK_RE
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- text decoding


def looks_binary(data: bytes) -> bool:
    sample = data[:65536]
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls > max(8, len(sample) // 50)


def _gb2312_ratio(text: str) -> float:
    hanzi = CJK_RE.findall(text)
    if not hanzi:
        return 0.0
    ok = 0
    for ch in hanzi:
        try:
            ch.encode("gb2312")
            ok += 1
        except UnicodeEncodeError:
            pass
    return ok / len(hanzi)


_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Single-byte Latin code pages a detector may pick for Western European text: where the
# bytes are also valid cp1252 and read as plain words there, the Western reading wins ("très",
# not "trčs"). Text of those languages read as cp1252 puts symbols inside words ("³" for
# "ł", "¹" for "ą"), which `_plain_words` catches.
_OTHER_LATIN = {
    "cp1250", "cp1254", "cp1257", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_9",
    "iso8859_10", "iso8859_13", "iso8859_16", "mac_latin2", "cp852",
}  # fmt: skip
_SYMBOL_IN_WORD = re.compile(r"[^\W\d_][\u00a1-\u00bf\u00d7\u00f7][^\W\d_]")


def _plain_words(text: str) -> bool:
    return _SYMBOL_IN_WORD.search(text) is None


def _wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 without a byte-order mark, told by where the zero bytes of mostly
    Latin text fall (every other byte, or three bytes in four)."""
    sample = data[: 1 << 14]
    if len(sample) < 8:
        return None

    def zeros(start: int, step: int) -> float:
        part = sample[start::step]
        return sum(1 for b in part if b == 0) / max(1, len(part))

    if len(data) % 4 == 0:  # the high bytes of a code point below U+10000 are zero
        if min(zeros(2, 4), zeros(3, 4)) > 0.95 and zeros(0, 4) < 0.05:
            return "utf-32-le"
        if min(zeros(0, 4), zeros(1, 4)) > 0.95 and zeros(3, 4) < 0.05:
            return "utf-32-be"
    if len(data) % 2 == 0:
        if zeros(1, 2) > 0.4 and zeros(0, 2) < 0.05:
            return "utf-16-le"
        if zeros(0, 2) > 0.4 and zeros(1, 2) < 0.05:
            return "utf-16-be"
    return None


def decode_text(data: bytes) -> str:
    """Decode UTF-8 (with or without BOM), UTF-16 and UTF-32 (with or without BOM),
    GB18030/GBK and other encodings."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    else:
        bom = next(((mark, codec) for mark, codec in _BOMS if data.startswith(mark)), None)
        wide = bom[1] if bom else _wide_encoding(data)
        if wide is not None:
            try:
                return data[len(bom[0]) if bom else 0 :].decode(wide)
            except UnicodeDecodeError as exc:
                if bom:
                    raise IngestError(f"cannot decode text (broken {wide.upper()})") from exc
    if looks_binary(data):
        raise IngestError("binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    gb_text: str | None
    try:
        gb_text = data.decode("gb18030")
    except UnicodeDecodeError:
        gb_text = None
    # Short simplified-Chinese files are often guessed as Big5; GB2312 coverage settles it.
    if gb_text is not None and _gb2312_ratio(gb_text) >= 0.95:
        return gb_text
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is not None:
        if best.encoding in _OTHER_LATIN:
            with contextlib.suppress(UnicodeDecodeError):
                western = data.decode("cp1252")
                if _plain_words(western):
                    return western
        return str(best)
    if gb_text is not None:
        return gb_text
    raise IngestError("cannot decode text (unknown encoding; save it as UTF-8)")


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
TEXT_WINDOW_CHARS = 256 * 1024  # how much plain text is parsed and chunked at a time


def parse_txt(data: bytes, source: str) -> ParsedDocument:
    windows = list(iter_text_windows(data, source, window_chars=len(data) + 1))
    if not windows:
        raise IngestError("empty file (no text found)")
    return windows[0][1]


def iter_text_windows(
    data: bytes, source: str, *, window_chars: int = TEXT_WINDOW_CHARS
) -> Iterator[tuple[int, ParsedDocument]]:
    """A plain-text file as consecutive documents of about `window_chars`, each cut at a
    paragraph break and paired with its offset in the whole text, so a big file is parsed
    and chunked a window at a time in bounded memory. Invisible characters are counted
    once over the whole text and reported by the first window."""
    text = decode_text(data)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    hidden = Tally()
    text = strip_invisible(text, hidden)
    offset = 0
    position = 0
    first = True
    while position < len(text):
        end = min(len(text), position + window_chars)
        if end < len(text):
            cut = _PARAGRAPH_BREAK.search(text, end)
            end = cut.end() if cut else len(text)
        builder = Builder()
        for para in _PARAGRAPH_BREAK.split(text[position:end]):
            builder.text(para, columns=True)
        position = end
        if not builder.parts:
            continue
        if first:
            builder.hidden = hidden
        doc = builder.build(source, None)
        yield offset, doc
        offset += len(doc.text) + 2  # the paragraph break between two windows
        first = False
