"""Scans and photos of pages (PNG, JPEG): their text by OCR, as page 1."""

from __future__ import annotations

import logging

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.builder import Builder
from ingest.parse.progress import report

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- images


def parse_image(data: bytes, source: str) -> ParsedDocument:
    """A scan or a photo of a page (PNG, JPEG): its text by OCR, as page 1."""
    from ingest.parse import ocr

    if (problem := ocr.ocr_available()) is not None:
        raise IngestError(f"images are read by OCR, which is unavailable here ({problem})")
    image = ocr.decode_image(data)
    report("ocr", 1, 1)
    height, width = image.shape[:2]
    builder = Builder()
    for paragraph in ocr.lines_to_paragraphs(ocr.ocr_image(image), width, height):
        builder.text(paragraph, page=1, columns=True)  # a scanned table's rows
    if not builder.blocks:
        raise IngestError("no text found in the image (OCR)")
    builder.ocr_pages.append(1)
    return builder.build(source, None)
