"""What may be parsed: the supported extensions, size limits, safe file names, and the
parser lineage each chunk records (a document re-ingests when it changes).
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import unicodedata
from pathlib import PurePosixPath

from ingest.errors import IngestError
from ingest.models import PARSER_VERSION
from ingest.normalize import NORMALIZER

log = logging.getLogger(__name__)


SUPPORTED_EXTENSIONS = (
    ".pdf", ".docx", ".md", ".markdown", ".txt", ".html", ".htm", ".png", ".jpg", ".jpeg",
)  # fmt: skip
MAX_PDF_PAGES = 2000
MAX_DOCX_UNCOMPRESSED = 300 * 1024 * 1024  # bytes a DOCX may expand to
MAX_DOCX_RATIO = 100  # uncompressed / compressed; real DOCX files are well under 20
WORKER_MEMORY_LIMIT = 4 * 1024**3  # address-space cap for the parse worker


# --------------------------------------------------------------------------- names and limits

# The libraries that read each format: part of every chunk's lineage (ParsedDocument.parser),
# so a document re-ingests when one of them, or Hopwise's own parsing, changes.
ENGINES = {
    ".pdf": ("pypdfium2",),
    ".docx": ("python-docx",),
    ".html": ("beautifulsoup4", "lxml"),
    ".htm": ("beautifulsoup4", "lxml"),
    ".md": ("beautifulsoup4",),
    ".markdown": ("beautifulsoup4",),
    ".txt": ("charset-normalizer",),
    ".png": ("rapidocr-onnxruntime",),
    ".jpg": ("rapidocr-onnxruntime",),
    ".jpeg": ("rapidocr-onnxruntime",),
}

# What an OCR'd document's lineage adds (" ocr=<engine>"): the engine and its settings.
try:
    _VERSION = importlib.metadata.version("rapidocr-onnxruntime")
except importlib.metadata.PackageNotFoundError:
    _VERSION = "missing"
OCR_SETTINGS = "ocr-2"  # bump when a setting or the paragraph rules of ocr.py change the text
OCR_ENGINE = f"rapidocr-onnxruntime-{_VERSION}+{OCR_SETTINGS}"


def parser_lineage(source: str) -> str:
    """What parses a file of this name, e.g. "parse-3 nfkc-1 pypdfium2-5.15.2" (an OCR'd
    document adds " ocr=<engine>")."""
    return _lineage(PurePosixPath(source).suffix.lower())


@functools.cache
def _lineage(ext: str) -> str:
    """Per extension, once a process: package versions do not change while it runs, and a
    streamed text file builds a document per window."""
    engines = []
    for package in ENGINES.get(ext, ()):
        try:
            engines.append(f"{package}-{importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            engines.append(package)
    return " ".join([PARSER_VERSION, NORMALIZER, *engines])


def safe_source(filename: str) -> str:
    """The base name of an uploaded file: never a path, never `..`, no control characters."""
    name = unicodedata.normalize("NFC", str(filename)).replace("\\", "/").split("/")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    if name in {"", ".", ".."}:
        raise IngestError(f"invalid file name {filename!r}")
    return name


def extension(name: str) -> str:
    ext = PurePosixPath(name).suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        shown = ext or "(none)"
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        raise IngestError(f"unsupported file type {shown} (supported: {supported})")
    return ext


def megabytes(n: float) -> str:
    return f"{n / (1024 * 1024):.1f}".rstrip("0").rstrip(".")


def check_size(size: int, max_bytes: int | None) -> None:
    """Reject a file over the upload limit before it is read or parsed."""
    if max_bytes is not None and size > max_bytes:
        raise IngestError(f"file is {megabytes(size)} MB, over the {megabytes(max_bytes)} MB limit")


def lineage_is_current(stored: str, source: str) -> bool:
    """A document parsed with this lineage would be parsed the same way today (OCR'd ones:
    by the same OCR engine and settings too)."""
    base = parser_lineage(source)
    if stored == base:
        return True
    if not stored.startswith(f"{base} ocr="):
        return False
    return stored == f"{base} ocr={OCR_ENGINE}"
