"""`hopwise bench parsing PATH... [--engines pypdf,pypdfium2,pdfplumber]`: parse real files.

Each file (folders are walked for ingest.parse.SUPPORTED_EXTENSIONS) goes through the
product's parse_file, in-process and without a timeout, and is timed. When poppler's
`pdftotext` is on PATH, the text of every PDF is compared with its output: words are NFKC,
casefolded runs of word characters, each Han character a word of its own; recall = |ours ∩
pdftotext| / |pdftotext| and precision = |ours ∩ pdftotext| / |ours| over word multisets.
`--engines` also times plain page-by-page text extraction (each library's default call) with
each named engine that is installed, so the choice of PDF engine can be reproduced.

JSON (one object, keys lower_snake_case):
  files: one object per file
    path, name, format (extension without the dot), pages (PDF page count, else 1 or the last
    page a block names), seconds, pages_per_s, chars (of ParsedDocument.text), error (the
    IngestError text, or null), and for PDFs:
    recall, precision     words against pdftotext (null without pdftotext or words; a
                          failed parse scores recall 0 where pdftotext reads words)
    order_recall          share of pdftotext's line breaks (2 words either side) found on
                          the same page of ours: low when lines are read in another order
                          (columns read across the gutter, tables)
    glued_words           our words over 25 characters that pdftotext does not have
    pdftotext             {seconds, chars, words, error}, or null without pdftotext
    engines               {engine: {seconds, pages_per_s, chars, recall, precision,
                           order_recall, glued_words, error}} for each engine run
  summary:
    files, failed, pages, seconds, pages_per_s (parsed files only), pdf_files,
    mean_recall, mean_precision, mean_order_recall (over PDFs pdftotext reads words from,
    failures included), glued_words (added up),
    pdftotext (its version, or null), pdftotext_seconds, pdftotext_pages_per_s,
    engines: {engine: {files, failed, pages, seconds, pages_per_s, mean_recall,
              mean_precision, mean_order_recall, glued_words}},
    notes: skipped engines, a missing pdftotext
"""

from __future__ import annotations

import contextlib
import importlib
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ingest.errors import IngestError
from ingest.lang import CJK
from ingest.models import ParsedDocument
from ingest.parse import SUPPORTED_EXTENSIONS, parse_file

GLUED_LENGTH = 25  # a longer "word" is nearly always two or more words missing their space
ORDER_WINDOW = 2  # words on each side of a reference line break
PDFTOTEXT_TIMEOUT_S = 600
_TOKEN_RE = re.compile(f"[{CJK}]|[^\\W{CJK}]+")

Extractor = Callable[[Path], list[str]]


def tokens(text: str) -> list[str]:
    """Words for comparison: NFKC, casefolded, split on non-word characters, Han one by one."""
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).casefold())


class Reference(NamedTuple):
    """pdftotext's words, and per page the word windows around each of its line breaks."""

    words: list[str]
    breaks: list[Counter[tuple[str, ...]]]


def reference(text: str) -> Reference:
    """Split pdftotext's output at its form feeds (one per page) and lines."""
    words: list[str] = []
    breaks: list[Counter[tuple[str, ...]]] = []
    for page in text.split("\f"):
        page_words: list[str] = []
        starts: list[int] = []
        for line in page.splitlines():
            found = tokens(line)
            if found:
                starts.append(len(page_words))
                page_words += found
        w = ORDER_WINDOW
        inner = [i for i in starts[1:] if w <= i <= len(page_words) - w]
        breaks.append(Counter(_window(page_words, i - w) for i in inner))
        words += page_words
    return Reference(words, breaks)


def _window(words: Sequence[str], start: int) -> tuple[str, ...]:
    return tuple(words[start : start + 2 * ORDER_WINDOW])


def compare(ours: Sequence[Sequence[str]], ref: Reference) -> dict[str, Any]:
    """Recall and precision of our words (one list per page) against the reference's, and
    how many of the reference's line breaks join the same words on the same page of ours.
    Per page, so a phrase the document repeats elsewhere does not count as order kept."""
    mine, theirs = Counter(w for page in ours for w in page), Counter(ref.words)
    common = sum((mine & theirs).values())
    kept = 0
    for page, breaks in zip(ours, ref.breaks, strict=False):
        windows = Counter(_window(page, i) for i in range(len(page) - 2 * ORDER_WINDOW + 1))
        kept += sum((windows & breaks).values())
    return {
        "recall": _ratio(common, sum(theirs.values())),
        "precision": _ratio(common, sum(mine.values())),
        "order_recall": _ratio(kept, sum(sum(b.values()) for b in ref.breaks)),
        "glued_words": sum(n for w, n in mine.items() if len(w) > GLUED_LENGTH and w not in theirs),
    }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def collect(paths: Iterable[Path]) -> list[Path]:
    """The files named and every supported file under the folders named, in name order."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUPPORTED_EXTENSIONS
            )
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def pdf_pages(path: Path) -> int | None:
    """The page count from pypdfium2, else pypdf; None when neither can open the file."""
    try:
        import pypdfium2

        document = pypdfium2.PdfDocument(str(path))
        try:
            return len(document)
        finally:
            document.close()
    except Exception:  # noqa: BLE001 - not installed, or a file PDFium refuses
        pass
    try:
        from pypdf import PdfReader

        return len(PdfReader(str(path), strict=False).pages)
    except Exception:  # noqa: BLE001 - a corrupt file: the parse reports why
        return None


def pdftotext_version() -> str | None:
    exe = shutil.which("pdftotext")
    if exe is None:
        return None
    done = subprocess.run([exe, "-v"], capture_output=True, text=True, check=False)
    first = (done.stderr or done.stdout).splitlines()
    return first[0].strip() if first else "pdftotext"


def run_pdftotext(path: Path) -> tuple[float, str | None, str | None]:
    """(seconds, text, error) of `pdftotext -enc UTF-8 FILE -` (its default reading order)."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(path), "-"],
            capture_output=True, timeout=PDFTOTEXT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None, f"timed out after {PDFTOTEXT_TIMEOUT_S} s"
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return seconds, None, f"exit {done.returncode}: {reason[-1] if reason else ''}".strip()
    return seconds, done.stdout.decode("utf-8", "replace"), None


# ----------------------------------------------------------------------------- raw engines


def _pypdf(path: Path) -> list[str]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    if reader.is_encrypted:
        reader.decrypt("")
    return [page.extract_text() or "" for page in reader.pages]


def _pypdfium2(path: Path) -> list[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    texts: list[str] = []
    try:
        for page in document:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        document.close()
    return texts


def _pdfplumber(path: Path) -> list[str]:
    import pdfplumber

    with pdfplumber.open(str(path)) as document:
        return [page.extract_text() or "" for page in document.pages]


_EXTRACTORS: dict[str, Extractor] = {
    "pypdf": _pypdf,
    "pypdfium2": _pypdfium2,
    "pdfplumber": _pdfplumber,
}


def load_engines(names: Sequence[str], notes: list[str]) -> dict[str, Extractor]:
    """The named engines that import here (imported now, so no timing pays for it)."""
    loaded: dict[str, Extractor] = {}
    for name in names:
        if name not in _EXTRACTORS:
            notes.append(f"engine {name!r} unknown (known: {', '.join(_EXTRACTORS)}); skipped")
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            notes.append(f"engine {name} not installed ({exc}); skipped")
            continue
        loaded[name] = _EXTRACTORS[name]
    return loaded


def measure_engine(
    extract: Extractor, path: Path, pages: int, ref: Reference | None
) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        texts = extract(path)
    except Exception as exc:  # noqa: BLE001 - each library raises its own types
        failed = dict.fromkeys(("seconds", "pages_per_s", "chars"), None) | _scores([], ref)
        return {**failed, "error": f"{type(exc).__name__}: {exc}"}
    seconds = time.perf_counter() - start
    row: dict[str, Any] = {
        "seconds": round(seconds, 4),
        "pages_per_s": _rate(pages, seconds),
        "chars": len("\n".join(texts)),
        "error": None,
    }
    row.update(_scores(texts, ref))
    return row


def _scores(pages: Sequence[str], ref: Reference | None) -> dict[str, Any]:
    if ref is None:
        return {"recall": None, "precision": None, "order_recall": None, "glued_words": None}
    return compare([tokens(text) for text in pages], ref)


def _page_texts(parsed: ParsedDocument, pages: int) -> list[str]:
    """The parsed text of each page, from the blocks' page numbers."""
    texts: list[list[str]] = [[] for _ in range(max(pages, 1))]
    for block in parsed.blocks:
        texts[min(max((block.page or 1) - 1, 0), len(texts) - 1)].append(block.text)
    return ["\n".join(page) for page in texts]


def _rate(pages: int, seconds: float) -> float | None:
    return round(pages / seconds, 1) if seconds > 0 and pages else None


# ----------------------------------------------------------------------------- the run


def _format(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def warm_up(files: Sequence[Path]) -> None:
    """Parse the smallest file of each format once, untimed: imports and caches load here."""
    smallest: dict[str, Path] = {}
    for path in sorted(files, key=lambda p: p.stat().st_size, reverse=True):
        smallest[_format(path)] = path
    for path in smallest.values():
        with contextlib.suppress(IngestError):
            parse_file(path)


def measure_file(path: Path, pdftotext: bool, engines: dict[str, Extractor]) -> dict[str, Any]:
    kind = _format(path)
    row: dict[str, Any] = {"path": str(path), "name": path.name, "format": kind}
    pages = pdf_pages(path) if kind == "pdf" else None
    start = time.perf_counter()
    try:
        parsed = parse_file(path)
        error = None
    except IngestError as exc:
        parsed, error = None, str(exc)
    seconds = time.perf_counter() - start
    if pages is None:
        known = [b.page for b in parsed.blocks if b.page] if parsed else []
        pages = max(known, default=1)
    text = parsed.text if parsed else ""
    row.update(
        pages=pages,
        seconds=round(seconds, 4),
        pages_per_s=_rate(pages, seconds) if parsed else None,
        chars=len(text),
        error=error,
    )
    if kind != "pdf":
        return row
    ref: Reference | None = None
    row["pdftotext"] = None
    if pdftotext:
        ref_seconds, ref_text, ref_error = run_pdftotext(path)
        ref = reference(ref_text) if ref_text is not None else None
        row["pdftotext"] = {
            "seconds": round(ref_seconds, 4),
            "chars": len(ref_text or ""),
            "words": len(ref.words) if ref else 0,
            "error": ref_error,
        }
    page_texts = _page_texts(parsed, pages) if parsed else []  # failed: recall 0 if pdftotext reads
    row.update(_scores(page_texts, ref))
    if engines:
        row["engines"] = {n: measure_engine(e, path, pages, ref) for n, e in engines.items()}
    return row


def _mean(values: Iterable[Any]) -> float | None:
    numbers = [v for v in values if v is not None]
    return round(sum(numbers) / len(numbers), 4) if numbers else None


def _scored(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean scores over the rows that have a reference; glued words added up."""
    return {
        "mean_recall": _mean(r.get("recall") for r in rows),
        "mean_precision": _mean(r.get("precision") for r in rows),
        "mean_order_recall": _mean(r.get("order_recall") for r in rows),
        "glued_words": sum(r.get("glued_words") or 0 for r in rows),
    }


def summarise(
    files: list[dict[str, Any]], version: str | None, engines: Sequence[str]
) -> dict[str, Any]:
    parsed = [f for f in files if f["error"] is None]
    pdfs = [f for f in files if f["format"] == "pdf"]
    seconds = sum(f["seconds"] for f in parsed)
    pages = sum(f["pages"] for f in parsed)
    summary: dict[str, Any] = {
        "files": len(files),
        "failed": len(files) - len(parsed),
        "pages": pages,
        "seconds": round(seconds, 3),
        "pages_per_s": _rate(pages, seconds),
        "pdf_files": len(pdfs),
        **_scored(pdfs),
        "pdftotext": version,
    }
    if version is not None:
        refs = [f for f in pdfs if f["pdftotext"] and f["pdftotext"]["error"] is None]
        ref_seconds = sum(f["pdftotext"]["seconds"] for f in refs)
        summary["pdftotext_seconds"] = round(ref_seconds, 3)
        summary["pdftotext_pages_per_s"] = _rate(sum(f["pages"] for f in refs), ref_seconds)
    summary["engines"] = {}
    for name in engines:
        runs = [(f["pages"], f["engines"][name]) for f in pdfs if name in f.get("engines", {})]
        good = [(p, r) for p, r in runs if r["error"] is None]
        engine_seconds = sum(r["seconds"] for _, r in good)
        engine_pages = sum(p for p, _ in good)
        summary["engines"][name] = {
            "files": len(runs),
            "failed": len(runs) - len(good),
            "pages": engine_pages,
            "seconds": round(engine_seconds, 3),
            "pages_per_s": _rate(engine_pages, engine_seconds),
            **_scored([r for _, r in runs]),
        }
    return summary


def run(args: Any) -> dict[str, Any]:
    """`hopwise bench parsing PATH... [--engines a,b]`: {"files": [...], "summary": {...}}."""
    notes: list[str] = []
    files = collect(getattr(args, "paths", None) or [])
    names = [n.strip() for n in str(getattr(args, "engines", None) or "").split(",") if n.strip()]
    engines = load_engines(names, notes)
    version = pdftotext_version()
    if version is None:
        notes.append("pdftotext not on PATH (apt-get install poppler-utils): no recall")
    warm_up([f for f in files if f.is_file()])
    rows = [measure_file(path, version is not None, engines) for path in files]
    summary = summarise(rows, version, list(engines))
    summary["notes"] = notes
    return {"files": rows, "summary": summary}


# ----------------------------------------------------------------------------- the table

_COLUMNS = (
    ("name", 28), ("format", 6), ("pages", 5), ("seconds", 8), ("pages_per_s", 7),
    ("chars", 8), ("recall", 6), ("precision", 6), ("order_recall", 6), ("glued_words", 5),
)  # fmt: skip
_HEADS = {
    "pages_per_s": "pg/s",
    "precision": "prec",
    "order_recall": "order",
    "glued_words": "glued",
}
_MEANS = {
    "recall": "mean_recall",
    "precision": "mean_precision",
    "order_recall": "mean_order_recall",
}


def _line(values: dict[str, Any]) -> str:
    cells = []
    for key, width in _COLUMNS:
        value = values.get(key)
        text = "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
        cells.append(text[:width].ljust(width) if key == "name" else text[:width].rjust(width))
    return "  " + " ".join(cells)


def print_table(name: str, result: dict[str, Any], file: Any = None) -> None:
    """One row per file (engines indented under it), then the totals, one row per engine."""
    file = file or sys.stdout
    print(f"== bench {name}", file=file)
    print(_line({key: _HEADS.get(key, key) for key, _ in _COLUMNS}), file=file)
    for row in result["files"]:
        print(_line(row), file=file)
        if row["error"]:
            print(f"    failed: {row['error']}", file=file)
        ref = row.get("pdftotext")
        if ref:
            extra = f" ({ref['error']})" if ref["error"] else ""
            print(f"    pdftotext {ref['seconds']:g} s, {ref['words']} words{extra}", file=file)
        for engine, stats in row.get("engines", {}).items():
            print(_line({**stats, "name": f"  {engine}", "pages": row["pages"]}), file=file)
            if stats.get("error"):
                print(f"    {engine} failed: {stats['error']}", file=file)
    summary = result["summary"]
    print("  totals", file=file)
    totals = {**summary, **{k: summary.get(v) for k, v in _MEANS.items()}, "name": "  hopwise"}
    print(_line(totals), file=file)
    for engine, stats in summary.get("engines", {}).items():
        stats = {**stats, **{k: stats.get(v) for k, v in _MEANS.items()}, "name": f"  {engine}"}
        print(_line(stats), file=file)
    for key in ("files", "failed", "pdf_files", "pdftotext", "pdftotext_pages_per_s"):
        if key in summary:
            print(f"  {key:<22}  {summary[key]}", file=file)
    for note in summary.get("notes", []):
        print(f"  note: {note}", file=file)
