"""ingest.parse.ocr: the real engine on small rendered fixtures, reading order on synthetic layouts,
and image decoding limits. Nothing here touches the network (the models are in the wheel)."""

from __future__ import annotations

import difflib
import io
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ingest.errors import IngestError
from ingest.parse import ocr
from ingest.parse.limits import OCR_ENGINE
from ingest.parse.ocr import OcrLine

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ocr"
# The text rendered into the fixtures (tests/fixtures/ocr/README.md), one string a paragraph.
ENGLISH = [
    "Water the garden plants early in the morning, before the sun is high, and check the soil "
    "for dryness twice a week.",
    "The library closes at six on weekdays. Return borrowed books to the desk near the north door.",
]
CHINESE = [  # left column, then right column
    "每天早上给花园里的植物浇水，中午之前检查土壤是否干燥，傍晚再把落叶扫到角落里。",
    "图书馆工作日晚上六点闭馆，借阅的书请还到北门旁边的服务台，周末不开放。",
]
# The fixtures read at 0.995-1.0 (difflib ratio) per paragraph. 0.9 leaves room for numeric
# differences between onnxruntime builds; a lost or garbled line costs a paragraph 0.3 or more.
MIN_SIMILARITY = 0.9


def similarity(found: str, expected: str) -> float:
    return difflib.SequenceMatcher(None, found, expected, autojunk=False).ratio()


def read_fixture(name: str) -> tuple[np.ndarray, list[OcrLine]]:
    image = ocr.decode_image((FIXTURES / name).read_bytes())
    return image, ocr.ocr_image(image)


def paragraphs_of(name: str) -> list[str]:
    image, lines = read_fixture(name)
    return ocr.lines_to_paragraphs(lines, image.shape[1], image.shape[0])


# --------------------------------------------------------------------------- the engine


def test_engine_is_available_and_named_for_lineage() -> None:
    assert ocr.ocr_available() is None
    assert OCR_ENGINE.startswith("rapidocr-onnxruntime-1.4.4+ocr-")
    assert " " not in OCR_ENGINE


@pytest.mark.parametrize(
    ("name", "expected"),
    [("english.png", ENGLISH), ("chinese_two_columns.png", CHINESE)],
)
def test_fixture_text_is_read_in_reading_order(name: str, expected: list[str]) -> None:
    paragraphs = paragraphs_of(name)
    assert len(paragraphs) == len(expected), paragraphs
    for found, want in zip(paragraphs, expected, strict=True):
        assert similarity(found, want) >= MIN_SIMILARITY, (found, want)


def test_lines_carry_confidence_and_boxes_inside_the_image() -> None:
    image, lines = read_fixture("english.png")
    height, width = image.shape[:2]
    assert len(lines) == 5
    for line in lines:
        assert ocr.MIN_CONFIDENCE <= line.confidence <= 1.0
        x0, y0, x1, y1 = line.box
        assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height


def test_a_shrunk_image_reports_boxes_in_its_own_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    image, full = read_fixture("english.png")
    monkeypatch.setattr(ocr, "MAX_SIDE", 500)  # the 640 px fixture is read at 500 px
    shrunk = ocr.ocr_image(image)
    assert len(shrunk) == len(full)
    for a, b in zip(full, shrunk, strict=True):
        assert similarity(a.text, b.text) >= MIN_SIMILARITY
        assert np.allclose(a.box, b.box, atol=5), (a.box, b.box)


def test_grayscale_and_blank_images() -> None:
    image = ocr.decode_image((FIXTURES / "english.png").read_bytes())
    gray = np.ascontiguousarray(image[:, :, 0])
    assert similarity(ocr.ocr_image(gray)[0].text, ENGLISH[0][:45]) >= MIN_SIMILARITY
    assert ocr.ocr_image(np.full((200, 300, 3), 255, dtype=np.uint8)) == []
    assert ocr.ocr_image(np.zeros((0, 10, 3), dtype=np.uint8)) == []


def test_wrong_array_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="uint8"):
        ocr.ocr_image(np.zeros((20, 20, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="uint8"):
        ocr.ocr_image(np.zeros((20, 20, 4), dtype=np.uint8))


def test_spaces_the_model_half_sees_are_kept() -> None:
    """Best-path CTC decoding: 'ab' glued, unless the space class reached the threshold in the
    blank gap between two Latin characters; CJK characters never get a space."""
    charset = ["blank", "a", "b", "水", " "]
    decoder = ocr._SpacedDecoder(charset)

    def steps(*rows: tuple[int, float]) -> np.ndarray:
        probabilities = np.full((len(rows), len(charset)), 0.001)
        for step, (index, space) in enumerate(rows):
            probabilities[step, index] = 0.9
            probabilities[step, 4] = max(probabilities[step, 4], space)
        return probabilities

    glued = steps((1, 0), (0, 0.003), (2, 0))
    spaced = steps((1, 0), (0, 0.02), (0, 0.001), (2, 0))
    repeated = steps((1, 0), (1, 0), (0, 0.001), (1, 0))
    cjk = steps((3, 0), (0, 0.3), (3, 0))
    assert decoder.decode(glued)[0] == "ab"
    assert decoder.decode(spaced)[0] == "a b"
    assert decoder.decode(repeated)[0] == "aa"
    assert decoder.decode(cjk)[0] == "水水"
    assert decoder.decode(spaced)[1] == pytest.approx(0.9)


# --------------------------------------------------------------------------- reading order


def line(text: str, x0: float, y0: float, x1: float, y1: float) -> OcrLine:
    return OcrLine(text=text, confidence=0.99, box=(x0, y0, x1, y1))


def column(texts: list[str], x0: float, x1: float, top: float, pitch: float = 30) -> list[OcrLine]:
    return [line(t, x0, top + i * pitch, x1, top + i * pitch + 24) for i, t in enumerate(texts)]


def test_rows_join_left_to_right_whatever_the_input_order() -> None:
    lines = [
        line("left", 100, 100, 200, 124),
        line("right", 400, 102, 500, 126),  # a wide gap: a separate phrase
        line("水", 210, 101, 234, 125),
        line("next row", 100, 130, 300, 154),
    ]
    expected = ["left 水 right next row"]
    for seed in range(5):
        random.Random(seed).shuffle(lines)
        assert ocr.lines_to_paragraphs(lines, 1000, 1000) == expected


def test_cjk_joins_without_spaces_latin_with_one() -> None:
    lines = column(["每天早上给花园", "里的植物浇水。", "Check the", "soil."], 100, 400, 100)
    assert ocr.lines_to_paragraphs(lines, 1000, 1000) == [
        "每天早上给花园里的植物浇水。 Check the soil."
    ]


def test_paragraphs_split_at_a_blank_line_at_any_line_spacing() -> None:
    for pitch in (28, 30, 45, 60):  # single, 1.5 and double spacing of 24 px boxes
        first = column(["one a", "one b", "one c"], 100, 600, 100, pitch)
        second = column(["two a", "two b"], 100, 600, 100 + 4 * pitch, pitch)
        found = ocr.lines_to_paragraphs(first + second, 1000, 1000)
        assert found == ["one a one b one c", "two a two b"], pitch


def test_layout_is_independent_of_position_and_scale() -> None:
    page = column(["alpha", "beta"], 100, 500, 100) + column(["gamma", "delta"], 100, 500, 200)
    expected = ocr.lines_to_paragraphs(page, 1000, 1000)
    assert expected == ["alpha beta", "gamma delta"]
    for scale, shift in ((2.0, 0.0), (0.5, 37.0), (1.0, 300.0)):
        moved = [line(item.text, *(v * scale + shift for v in item.box)) for item in reversed(page)]
        assert ocr.lines_to_paragraphs(moved, int(1000 * scale + shift), 1000) == expected


def test_two_columns_read_left_then_right_between_full_width_lines() -> None:
    title = line("Title across both columns", 100, 40, 1100, 70)
    left = column([f"left {i}" for i in range(6)], 100, 580, 100)
    right = column([f"right {i}" for i in range(6)], 640, 1120, 100)
    footer = line("Footer across the page", 100, 400, 1100, 424)
    found = ocr.lines_to_paragraphs([footer, *right, title, *left], 1240, 1754)
    assert found == [
        "Title across both columns",
        " ".join(f"left {i}" for i in range(6)),
        " ".join(f"right {i}" for i in range(6)),
        "Footer across the page",
    ]


def test_a_single_column_with_short_lines_is_not_split() -> None:
    texts = ["a long line that fills the column", "short", "another long line of the text"] * 3
    lines = [
        line(t, 100, 100 + i * 30, 100 + 20 * len(t), 124 + i * 30) for i, t in enumerate(texts)
    ]
    assert ocr.lines_to_paragraphs(lines, 1240, 1754) == [" ".join(texts)]


def test_no_lines_no_paragraphs() -> None:
    assert ocr.lines_to_paragraphs([], 100, 100) == []


# --------------------------------------------------------------------------- decoding


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_claiming(width: int, height: int) -> bytes:
    """A PNG header with the given size and no real pixel data behind it."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", b"not deflate data")
        + png_chunk(b"IEND", b"")
    )


def encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


@pytest.mark.parametrize(("width", "height"), [(10_000, 10_000), (200_000, 100_000)])
def test_an_over_limit_image_is_refused_before_decoding(width: int, height: int) -> None:
    with pytest.raises(IngestError, match="over the 50-megapixel limit") as caught:
        ocr.decode_image(png_claiming(width, height))
    # decoding the fake pixel data would have failed as "corrupt image": it was never tried
    assert "corrupt" not in str(caught.value)


def test_the_size_is_named_when_refused() -> None:
    with pytest.raises(IngestError, match=r"10000x10000 pixels \(100 megapixels\)"):
        ocr.decode_image(png_claiming(10_000, 10_000))


GOOD_PNG = (FIXTURES / "english.png").read_bytes()
BROKEN = {
    "truncated": GOOD_PNG[: len(GOOD_PNG) // 2],
    "damaged data": GOOD_PNG[:200] + bytes(b ^ 0x5A for b in GOOD_PNG[200:400]) + GOOD_PNG[400:],
    "header only": png_claiming(100, 100),
    "not an image": b"just some text, not a picture",
    "a GIF": encode(Image.new("RGB", (8, 8)), "GIF"),
    "empty": b"",
}


@pytest.mark.parametrize("data", BROKEN.values(), ids=BROKEN.keys())
def test_broken_images_raise_a_clear_ingest_error(data: bytes) -> None:
    with pytest.raises(IngestError, match=r"^corrupt image \(.+\)$"):
        ocr.decode_image(data)


def test_decoded_images_are_upright_rgb_on_white() -> None:
    gray = ocr.decode_image(encode(Image.new("L", (30, 20), 128), "PNG"))
    assert gray.shape == (20, 30, 3) and gray.dtype == np.uint8
    clear = Image.new("RGBA", (30, 20), (0, 0, 0, 0))  # black, fully transparent
    assert (ocr.decode_image(encode(clear, "PNG")) == 255).all()
    deep = Image.fromarray(np.full((20, 30), 32768, dtype=np.uint16))  # a 16-bit gray scan
    assert abs(int(ocr.decode_image(encode(deep, "PNG"))[0, 0, 0]) - 128) <= 1
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: the camera was turned; rotate 90 degrees to view
    rotated = ocr.decode_image(encode(Image.new("RGB", (40, 20), "white"), "JPEG", exif=exif))
    assert rotated.shape == (40, 20, 3)


def test_a_large_jpeg_is_decoded_at_a_reduced_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "MAX_SIDE", 200)
    data = encode(Image.new("RGB", (640, 300), "white"), "JPEG")
    assert ocr.decode_image(data).shape == (150, 320, 3)  # libjpeg's 1/2 scale, still >= 200


def grid(rows: list[list[str]], top: float = 100) -> list[OcrLine]:
    """A scanned table: each cell its own box, the columns 300 px apart, a row 40 px down."""
    return [line(cell, 100 + 300 * c, top + 40 * r, 100 + 300 * c + 120, top + 40 * r + 24)
            for r, row in enumerate(rows) for c, cell in enumerate(row) if cell]  # fmt: skip


def test_a_scanned_table_keeps_its_rows_and_cells_and_becomes_table_rows() -> None:
    from ingest.parse.builder import Builder

    table = [["Bay", "Crane", "Load"], ["B1", "", "12 t"], ["B2", "Heron", "30 t"]]  # a gap
    lead = line("Cranes in service this week.", 100, 40, 600, 64)
    paragraphs = ocr.lines_to_paragraphs([lead, *grid(table)], 1200, 1000)
    assert paragraphs == [
        "Cranes in service this week.",
        "Bay | Crane | Load\nB1 |  | 12 t\nB2 | Heron | 30 t",
    ]
    builder = Builder()
    for paragraph in paragraphs:
        builder.text(paragraph, page=3, columns=True)
    doc = builder.build("scan.pdf", None)
    assert [(b.kind, b.text, b.page) for b in doc.blocks] == [
        ("text", "Cranes in service this week.", 3),
        ("table", "Bay | Crane | Load", 3),
        ("table", "B1 |  | 12 t", 3),  # the empty cell kept in its column
        ("table", "B2 | Heron | 30 t", 3),
    ]


def test_a_scanned_table_whose_cells_cannot_be_placed_is_read_as_text_and_marked() -> None:
    from ingest.parse.builder import Builder

    table = grid([["Bay", "Crane", "Load"], ["B2", "Heron", "30 t"]])
    table += [line("B1", 100, 180, 220, 204), line("under", 340, 180, 400, 204),
              line("repair", 460, 180, 560, 204), line("12 t", 700, 180, 820, 204)]  # fmt: skip
    builder = Builder()
    for paragraph in ocr.lines_to_paragraphs(table, 1200, 1000):
        builder.text(paragraph, page=3, columns=True)
    [block] = builder.build("scan.pdf", None).blocks
    assert block.kind == "text_table" and block.page == 3
    assert block.text.splitlines() == ["Bay Crane Load", "B2 Heron 30 t", "B1 under repair 12 t"]


def test_prose_on_a_scan_is_no_table() -> None:
    lines = column(["The cranes are inspected", "every Monday before the", "first shift starts."],
                   100, 700, 100)  # fmt: skip
    assert ocr.lines_to_paragraphs(lines, 1000, 1000) == [
        "The cranes are inspected every Monday before the first shift starts."
    ]
