"""Offline OCR for scanned PDF pages and image uploads (PNG, JPEG).

The engine is rapidocr-onnxruntime: PP-OCRv4 Chinese+English detection and recognition ONNX
models shipped inside its wheel, run by onnxruntime on the CPU; nothing is downloaded. The
settings below were measured on dense 150 dpi A4 pages, clean and with scan damage: the angle
classifier is off (it turned long Latin lines upside down and lost a quarter of an English
page), lines are recognised one at a time, onnxruntime's threads sleep instead of spinning
(which matters on shared cores), and the CTC decoding keeps the spaces between English words
that the model only half sees.
"""

from __future__ import annotations

import io
import os
import re
import statistics
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ingest.errors import IngestError
from ingest.parse.aligned import ALIGNED_LINES, table_end
from ingest.parse.builder import join_lines

# A setting or paragraph rule below that changes the text bumps limits.OCR_SETTINGS (lineage).
MAX_PIXELS = 50_000_000  # larger images are refused before they are decoded
# Longest side OCR works at: 150 dpi A4 and A3 pages (1754, 2480 px) stay as they are; a photo
# or a 300 dpi scan is shrunk, which speeds detection (recognition rescales every line anyway).
MAX_SIDE = 2560
# Recognition input height, the model's own: 40 took 0.75x the time but lost characters and
# spaces on 8 pt and condensed English (0.90 instead of 0.98 on a scanned 8 pt page).
REC_HEIGHT = 48
# Lines read with less confidence are dropped: on 4 fonts x 4 degrees of scan damage, lines
# under 0.7 had a mean character accuracy of 0.5 or less, lines from 0.7 to 0.75 of 0.71 and
# lines over 0.85 of 0.93 or more; specks, rules, photos and upside-down text stayed under 0.5.
MIN_CONFIDENCE = 0.7
# A space the model scored at least this between two Latin words is kept although the blank
# class won: 0.01 restored 90-100% of the lost spaces on scanned English pages, with about one
# false space in 800 words.
SPACE_PROBABILITY = 0.01
PARAGRAPH_GAP = 0.5  # a row this many line heights further down than usual starts a paragraph
WORD_GAP = 1.0  # boxes on a row this many line heights apart are separate phrases: a space
CELL_GAP = 2.0  # ... and this many apart, a table's cells (in a run of rows: aligned.table_end)


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One line of text found in an image; `box` is (x0, y0, x1, y1) in the image's pixels."""

    text: str
    confidence: float
    box: tuple[float, float, float, float]

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


# --------------------------------------------------------------------------- the engine

_engine_lock = threading.Lock()
_run_lock = threading.Lock()  # one image at a time: each run already uses every core
_engine: Any = None
_failure: str | None = None


def _cores() -> int:
    """The cores this process may run on (a container's cpuset, not the host's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _quiet_session(session: Any, threads: int) -> Any:
    """The same model in a session whose idle threads sleep. RapidOCR 1.4.4 has no setting
    for it; spinning threads on two shared cores made recognition 1.5-3x slower."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    path = session._model_path  # RapidOCR keeps no model path of its own
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


_LATIN = re.compile(r"[0-9A-Za-z\u00c0-\u024f]")


class _SpacedDecoder:
    """CTC decoding (best path) that keeps the spaces between Latin words which the model only
    half sees: on blurred or small English text the blank class outvotes the space class, and
    words run together ("checkthevalve"). Between two Latin letters or digits a space goes in
    when the space class reached SPACE_PROBABILITY anywhere in the blank gap between them."""

    def __init__(self, charset: list[str]) -> None:
        self.charset = charset  # index 0 is the CTC blank, the last entry the space
        self.space = len(charset) - 1

    def __call__(self, preds: np.ndarray, *_: Any, **__: Any) -> list[tuple[str, float]]:
        return [self.decode(probabilities) for probabilities in preds]

    def decode(self, probabilities: np.ndarray) -> tuple[str, float]:
        best = probabilities.argmax(axis=1)
        chars: list[str] = []
        scores: list[float] = []
        previous, space = 0, 0.0
        for step, index in enumerate(best.tolist()):
            if index == 0:
                space = max(space, float(probabilities[step, self.space]))
            elif index != previous:
                char = self.charset[index]
                if (
                    space >= SPACE_PROBABILITY
                    and chars
                    and _LATIN.match(char)
                    and _LATIN.match(chars[-1])
                ):
                    chars.append(" ")
                chars.append(char)
                scores.append(float(probabilities[step, index]))
                space = 0.0
            previous = index
        return "".join(chars), float(np.mean(scores)) if scores else 0.0


def _create_engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    threads = _cores()
    engine = RapidOCR(
        use_cls=False,
        text_score=0.0,  # ocr_image filters at MIN_CONFIDENCE
        max_side_len=MAX_SIDE,
        intra_op_num_threads=threads,
        inter_op_num_threads=1,
        rec_batch_num=1,  # batches of 6 padded lines took 1.5-3x the time of single lines
        rec_img_shape=[3, REC_HEIGHT, 320],
    )
    for holder in (engine.text_det.infer, engine.text_rec.session):
        holder.session = _quiet_session(holder.session, threads)
    charset = engine.text_rec.postprocess_op.character
    if charset[0] != "blank" or charset[-1] != " ":
        raise RuntimeError("unexpected recognition character set")
    engine.text_rec.postprocess_op = _SpacedDecoder(charset)
    return engine


def _get_engine() -> Any:
    """The process-wide engine, created on first use (about half a second)."""
    global _engine, _failure
    with _engine_lock:
        if _engine is None and _failure is None:
            try:
                _engine = _create_engine()
            except Exception as exc:  # ImportError, a missing model file, no memory, ...
                _failure = " ".join(f"{type(exc).__name__}: {exc}".split())
        if _engine is None:
            raise RuntimeError(f"OCR engine unavailable ({_failure})")
        return _engine


def ocr_available() -> str | None:
    """None when OCR works here, else a one-line reason (e.g. the import error)."""
    try:
        _get_engine()
    except RuntimeError:
        return _failure
    return None


# --------------------------------------------------------------------------- reading images


def decode_image(data: bytes) -> np.ndarray:
    """PNG or JPEG bytes as an (H, W, 3) uint8 RGB array, upright (EXIF orientation), with
    transparency flattened onto white. The pixel count is checked before anything is decoded;
    a JPEG larger than OCR needs is decoded at a reduced scale."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    limit = f"over the {MAX_PIXELS // 1_000_000}-megapixel limit"
    try:
        with warnings.catch_warnings():  # Pillow warns from 89 megapixels; we refuse below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            file = Image.open(io.BytesIO(data), formats=["PNG", "JPEG"])
    except Image.DecompressionBombError as exc:  # Pillow's own refusal, from 179 megapixels
        raise IngestError(f"image is {limit}") from exc
    except UnidentifiedImageError as exc:
        raise IngestError("corrupt image (not a PNG or JPEG file)") from exc
    except Exception as exc:  # Pillow reports a damaged header as many kinds of error
        raise IngestError(f"corrupt image ({exc})") from exc
    width, height = file.size
    if width * height > MAX_PIXELS:
        raise IngestError(
            f"image is {width}x{height} pixels ({width * height / 1e6:.0f} megapixels), {limit}"
        )
    try:
        if file.format == "JPEG" and max(width, height) > MAX_SIDE:
            scale = MAX_SIDE / max(width, height)
            file.draft("RGB", (round(width * scale), round(height * scale)))
        file.load()
        image = ImageOps.exif_transpose(file)
        if image.mode.startswith("I"):  # 16-bit grayscale: scaled to 8 bits, not clipped
            image = image.convert("I").point(lambda value: value / 256)
        if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
            image = Image.alpha_composite(
                Image.new("RGBA", image.size, "white"), image.convert("RGBA")
            )
        return np.asarray(image.convert("RGB"), dtype=np.uint8)
    except Exception as exc:  # a truncated or damaged stream fails only while decoding
        raise IngestError(f"corrupt image ({exc})") from exc


def ocr_image(image: np.ndarray) -> list[OcrLine]:
    """The text lines in `image`: (H, W, 3) uint8 **RGB** (what decode_image and
    pdf_text.render give) or (H, W) grayscale. Lines below MIN_CONFIDENCE are dropped."""
    import cv2

    if image.dtype != np.uint8 or image.ndim not in (2, 3) or image.shape[2:] not in ((), (3,)):
        raise ValueError(f"expected an (H, W, 3) or (H, W) uint8 image, got {image.shape}")
    height, width = image.shape[:2]
    if height == 0 or width == 0:
        return []
    code = cv2.COLOR_GRAY2BGR if image.ndim == 2 else cv2.COLOR_RGB2BGR
    bgr = cv2.cvtColor(np.ascontiguousarray(image), code)  # the models learnt OpenCV's BGR
    scale = min(1.0, MAX_SIDE / max(height, width))
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        bgr = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)
    engine = _get_engine()
    with _run_lock:
        found, _ = engine(bgr)
    lines = []
    for quad, text, confidence in found or []:
        text = " ".join(str(text).split())
        if not text or float(confidence) < MIN_CONFIDENCE:
            continue
        xs = [point[0] / scale for point in quad]
        ys = [point[1] / scale for point in quad]
        lines.append(OcrLine(text, float(confidence), (min(xs), min(ys), max(xs), max(ys))))
    return lines


# --------------------------------------------------------------------------- reading order


def _gutter(lines: list[OcrLine], width: int) -> float | None:
    """The x of a clear vertical gap between two columns of text, if the page has one: at
    least a line height wide, in the middle half of the text's extent, crossed by no more than
    two lines or a tenth of them (full-width titles, footers), with three lines on each side."""
    if len(lines) < 6:
        return None
    left = max(0, int(min(line.box[0] for line in lines)))
    right = min(width, int(max(line.box[2] for line in lines)) + 1)
    crossing = np.zeros(max(right, left + 1), dtype=np.int32)
    for line in lines:
        crossing[max(0, int(line.box[0])) : int(line.box[2]) + 1] += 1
    span = right - left
    low, high = left + span // 4, left + 3 * span // 4
    clear = np.flatnonzero(crossing[low:high] <= max(2, len(lines) // 10)) + low
    if clear.size == 0:
        return None
    runs = np.split(clear, np.flatnonzero(np.diff(clear) > 1) + 1)
    widest = max(runs, key=len)
    if len(widest) < statistics.median(line.height for line in lines):
        return None
    x = float(widest.mean())
    on_left = sum(line.box[2] <= x for line in lines)
    on_right = sum(line.box[0] >= x for line in lines)
    return x if min(on_left, on_right) >= 3 else None


def _rows(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into visual rows, top to bottom, each row left to right: a line joins a
    row when they overlap vertically by half the shorter one's height."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda item: (item.box[1] + item.box[3]) / 2):
        row = rows[-1] if rows else None
        if row is not None:
            top, bottom = min(item.box[1] for item in row), max(item.box[3] for item in row)
            overlap = min(bottom, line.box[3]) - max(top, line.box[1])
            if overlap >= 0.5 * min(bottom - top, line.height):
                row.append(line)
                continue
        rows.append([line])
    return [sorted(row, key=lambda item: item.box[0]) for row in rows]


def _row_text(row: list[OcrLine], line_height: float) -> str:
    text = row[0].text
    for before, line in zip(row, row[1:], strict=False):
        if line.box[0] - before.box[2] > WORD_GAP * line_height:
            text += " " + line.text
        else:
            text = join_lines(f"{text}\n{line.text}")
    return text


def _cells(row: list[OcrLine], line_height: float) -> list[tuple[float, str]]:
    """A row's pieces set CELL_GAP line heights or more apart (a table row's cells): where
    each starts, and its text."""
    pieces: list[list[OcrLine]] = [[row[0]]]
    for before, line in zip(row, row[1:], strict=False):
        if line.box[0] - before.box[2] > CELL_GAP * line_height:
            pieces.append([])
        pieces[-1].append(line)
    return [(piece[0].box[0], _row_text(piece, line_height)) for piece in pieces]


def _placed(rows: list[list[tuple[float, str]]]) -> str:
    """A table's rows, a line each: every cell under the header cell whose start is nearest
    (an empty cell where a row has none), cells joined by ' | ' for the builder's table
    reading; when two cells fall under one column, the cells as they are, two spaces apart
    (the builder keeps such lines as a table read as text)."""
    starts = [x for x, _ in rows[0]]
    out = []
    for row in rows:
        placed = [""] * len(starts)
        for x, text in row:
            column = min(range(len(starts)), key=lambda c: abs(starts[c] - x))
            if placed[column]:
                return "\n".join("  ".join(text for _, text in r) for r in rows)
            placed[column] = text
        out.append(" | ".join(placed))
    return "\n".join(out)


def _paragraphs(lines: list[OcrLine], line_height: float) -> list[str]:
    """One column's rows joined into paragraphs, split where the white space between two rows
    is PARAGRAPH_GAP line heights more than the column's usual gap between rows."""
    rows = _rows(lines)
    tops = [min(line.box[1] for line in row) for row in rows]
    bottoms = [max(line.box[3] for line in row) for row in rows]
    gaps = [max(0.0, top - bottom) for top, bottom in zip(tops[1:], bottoms, strict=False)]
    usual = statistics.median(gaps) if gaps else 0.0
    paragraphs: list[list[str]] = []
    for index, row in enumerate(rows):
        if index == 0 or gaps[index - 1] > usual + PARAGRAPH_GAP * line_height:
            paragraphs.append([])
        paragraphs[-1].append(_row_text(row, line_height))
    return [join_lines("\n".join(texts)) for texts in paragraphs]


def _table_bands(lines: list[OcrLine], line_height: float) -> list[tuple[list[OcrLine], str]]:
    """The page top to bottom as bands of (lines, table): a run of rows of cells CELL_GAP apart
    that the parser's plain-text rule takes for a table (aligned.table_end) is a table band (see
    `_placed`); the lines between are read as text (columns and all)."""
    rows = _rows(lines)
    cells = [_cells(row, line_height) for row in rows]
    bands: list[tuple[list[OcrLine], str]] = []
    text: list[OcrLine] = []
    k = 0
    widths = [len(c) for c in cells]
    while k < len(rows):
        end = table_end(widths, k)
        if end - k < ALIGNED_LINES:
            text += rows[k]
            k += 1
            continue
        if text:
            bands.append((text, ""))
            text = []
        bands.append(([], _placed(cells[k:end])))
        k = end
    if text:
        bands.append((text, ""))
    return bands


def lines_to_paragraphs(lines: list[OcrLine], width: int, height: int) -> list[str]:
    """OCR lines of a `width` x `height` page as paragraphs in reading order: top to bottom;
    on a two-column page the left column before the right one, between any full-width lines
    (a title, a footer) that cross the gutter. Chinese and Japanese lines join without a
    space, Latin ones with one (join_lines). A table (rows of cells set well apart) is one
    paragraph, a row a line, its cells under their header's columns."""
    lines = [line for line in lines if line.height > 0]
    if not lines:
        return []
    line_height = statistics.median(line.height for line in lines)
    out: list[str] = []
    for text, table in _table_bands(lines, line_height):
        if table:  # one row a line: the builder reads it as a table (ingest/parse/aligned.py)
            out.append(table)
        else:
            out += _columns(text, width, line_height)
    return out


def _columns(lines: list[OcrLine], width: int, line_height: float) -> list[str]:
    """Text lines as paragraphs in reading order, a two-column page's left column first."""
    gutter = _gutter(lines, width)
    if gutter is None:
        return _paragraphs(lines, line_height)
    # full-width lines cut the page into bands; each band is read left column, right column
    bands: list[list[OcrLine]] = [[]]
    for line in sorted(lines, key=lambda item: item.box[1]):
        if line.box[0] < gutter < line.box[2]:
            bands.extend([[line], []])
        else:
            bands[-1].append(line)
    paragraphs: list[str] = []
    for band in filter(None, bands):
        left = [line for line in band if line.box[2] <= gutter]
        right = [line for line in band if line.box[2] > gutter]
        for column in filter(None, (left, right)):
            paragraphs.extend(_paragraphs(column, line_height))
    return paragraphs
