"""`hopwise ingest`, `hopwise docs list|delete`, `hopwise search` and `hopwise reindex`: the
knowledge base CLI.

Output lines and JSON keys are a contract (see docs/usage.md, "Command line").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from hopwise.app import open_store, semantic_search_note
from ingest.hidden import hidden_note
from ingest.models import IngestResult, parse_notes
from ingest.phrases import PHRASER


def register(subparsers: Any) -> None:
    ingest = subparsers.add_parser("ingest", help="add or update files and folders")
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    ingest.add_argument(
        "--groups",
        default=None,
        help="comma-separated reader groups; without it a new file is readable by all and an "
        "existing document keeps its groups",
    )
    ingest.add_argument("--json", action="store_true", help="print a JSON list of results")
    ingest.set_defaults(handler=run_ingest)

    reindex = subparsers.add_parser(
        "reindex", help="bring an existing knowledge base up to date (index format, vectors)"
    )
    reindex.add_argument(
        "--format", action="store_true",
        help="rebuild the index in the current format (accent-insensitive keywords, phrases)",
    )  # fmt: skip
    reindex.add_argument(
        "--embeddings", action="store_true",
        help="embed every chunk that has no vector of the current model, in the foreground",
    )  # fmt: skip
    reindex.add_argument("--json", action="store_true", help="print a JSON summary")
    reindex.set_defaults(handler=run_reindex)

    docs = subparsers.add_parser("docs", help="list or delete documents")
    docs_sub = docs.add_subparsers(dest="docs_command", required=True)
    listing = docs_sub.add_parser("list", help="list documents with versions and chunk counts")
    listing.add_argument("--json", action="store_true", help="print a JSON list")
    listing.set_defaults(handler=run_docs_list)
    delete = docs_sub.add_parser("delete", help="delete a document by id")
    delete.add_argument("doc_id", metavar="DOC_ID")
    delete.set_defaults(handler=run_docs_delete)

    search = subparsers.add_parser("search", help="raw hybrid retrieval, no reasoning")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--groups", default="", help="comma-separated groups besides all")
    search.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    search.add_argument("--json", action="store_true", help="print a JSON list of hits")
    search.set_defaults(handler=run_search)


def _store(*, format_hint: bool = True) -> Any:
    from hopwise.settings import load_settings

    store = open_store(load_settings())
    for note in store.repairs:  # what the consistency check on open found and repaired
        print(f"hopwise: repaired: {note}", file=sys.stderr)
    if store.embedding_problem:  # the built-in embedder could not load: said once, here
        print(f"hopwise: {store.embedding_problem}", file=sys.stderr)
    if format_hint and not store.index_current:
        print(f"hopwise: {_index_line(store)}", file=sys.stderr)
    return store


def _index_line(store: Any) -> str:
    """The index format, and for an old one what it lacks and the command that fixes it."""
    from ingest.store import INDEX_FORMAT

    line = f"index format {store.index_format}" + (f" ({store.phraser})" if store.phraser else "")
    if store.index_current:
        return line
    return (
        f"{line}, current is {INDEX_FORMAT} ({PHRASER}): run `hopwise reindex --format` for "
        "accent-insensitive keyword search and the phrase table"
    )


def _groups(raw: str) -> list[str]:
    return [g.strip() for g in raw.split(",") if g.strip()]


def format_result(result: IngestResult) -> str:
    """One line per file: ingested / skipped / failed with its detail in parentheses."""
    if result.status == "ingested":
        detail = f"{result.chunks} chunks, v{result.version}"
        if note := hidden_note(result.hidden_removed, result.hidden_kinds):
            detail += f"; {note}"
        if note := parse_notes("", result.ocr_pages, result.warnings):
            detail += f"; {note}"
    elif result.status == "skipped":
        detail = result.reason or "unchanged"
    else:
        detail = result.reason or "unknown error"
    return f"{result.status}  {result.source}  ({detail})"


def run_ingest(args: argparse.Namespace) -> int:
    from hopwise.documents import originals_for
    from hopwise.settings import load_settings
    from ingest.pipeline import document_groups, ingest_paths

    settings = load_settings()
    groups = None if args.groups is None else _groups(args.groups)
    if groups == []:
        raise ValueError("--groups is empty; name the reader groups (`all` is everyone)")
    document_groups(groups)  # a bad group name stops here, before any file

    def progress(done: int, total: int, result: IngestResult) -> None:
        if not args.json:
            print(format_result(result), flush=True)

    with _store() as store:
        results = ingest_paths(
            args.paths, store, groups=groups, config=settings.ingest,
            on_progress=progress, originals=originals_for(settings, store),
        )  # fmt: skip
        store.build_phrases()  # cheap; a question in the next process then waits for nothing
        pending = (
            semantic_search_note(store) if any(r.status == "ingested" for r in results) else ""
        )
    if pending:
        print(
            f"hopwise: {pending}. The app fills them in the background, or run "
            "`hopwise reindex --embeddings`",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps([r.model_dump() for r in results], ensure_ascii=False, indent=2))
    elif not results:
        print("hopwise: no files found", file=sys.stderr)
    else:
        counts = {s: sum(r.status == s for r in results) for s in ("ingested", "skipped", "failed")}
        summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        print(f"{len(results)} files: {summary}", file=sys.stderr)
    return 1 if any(r.status == "failed" for r in results) else 0


def run_docs_list(args: argparse.Namespace) -> int:
    with _store() as store:
        documents = store.list_documents()
        if store.index_current:  # an old format was said when the store opened
            print(f"hopwise: {_index_line(store)}", file=sys.stderr)
    if args.json:
        print(json.dumps([d.model_dump() for d in documents], ensure_ascii=False, indent=2))
        return 0
    if not documents:
        print("no documents")
        return 0
    print(f"{'DOC_ID':<22}  {'VER':>3}  {'CHUNKS':>6}  {'GROUPS':<16}  SOURCE  (TITLE)")
    for d in documents:
        groups = ",".join(d.groups)
        note = "; ".join(filter(None, [hidden_note(d.hidden_removed), parse_notes(d.parser)]))
        print(
            f"{d.doc_id:<22}  {d.version:>3}  {d.chunks:>6}  {groups:<16}  {d.source}  ({d.title})"
            + (f"  [{note}]" if note else "")
        )
    return 0


def run_docs_delete(args: argparse.Namespace) -> int:
    from hopwise.documents import delete_document
    from hopwise.settings import load_settings

    with _store() as store, store.document_lock(args.doc_id):  # waits for a write of it
        if store.get_document(args.doc_id) is None:
            print(f"hopwise: error: no document with id {args.doc_id!r}", file=sys.stderr)
            return 1
        removed = delete_document(store, args.doc_id, load_settings())
    print(f"deleted  {args.doc_id}  ({removed} {'chunk' if removed == 1 else 'chunks'})")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from ingest.store import validate_groups

    groups = validate_groups(_groups(args.groups))
    with _store() as store:
        hits = store.search(args.query, groups, k=max(1, args.k))
    if args.json:
        print(json.dumps([h.model_dump() for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no hits")
    for h in hits:
        where = " > ".join(p for p in (h.source, h.section) if p)
        page = f" p.{h.page}" if h.page else ""
        snippet = " ".join(h.text.split())[:160]
        print(f"{h.rank:>2}. {h.score:.4f}  {where}{page}  [{h.chunk_id}]\n    {snippet}")
    return 0


def run_reindex(args: argparse.Namespace) -> int:
    """`hopwise reindex --format` rebuilds an older index, `--embeddings` fills missing vectors
    now; both may be given (the format first). Progress on stderr; `--json` one summary."""
    if not (args.format or args.embeddings):
        print(
            "hopwise: error: nothing to reindex; say what: --format, --embeddings", file=sys.stderr
        )
        return 2
    started = time.monotonic()
    summary: dict[str, Any] = {}
    with _store(format_hint=False) as store:
        if args.embeddings and store.vectors is None:  # said before a long format rebuild
            reason = store.embedding_problem or (
                "embeddings are off or written inline by an endpoint (HOPWISE_EMBEDDINGS)"
            )
            print(f"hopwise: error: no background embeddings to fill: {reason}", file=sys.stderr)
            return 1
        if args.format:
            summary |= _reindex_format(store, args.json)
        if args.embeddings:
            summary |= _reindex_embeddings(store, args.json)
    summary["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    return 0 if summary.get("complete", True) else 1


def _reindex_format(store: Any, quiet: bool) -> dict[str, Any]:
    """Rebuild the chunk collection in the current index format (a no-op when it is)."""

    def progress(step: str, done: int, total: int) -> None:
        if not quiet and (done == total or done % 5000 < 500):  # ~every 5,000 (pages of 500)
            what = "copied" if step == "copy" else "swapped in"
            print(f"{what}  {done} of {total} chunks", file=sys.stderr, flush=True)

    result = store.reindex_format(progress)
    store.build_phrases()  # the phrase keys a format 2 collection never had
    if not quiet:
        if result.rebuilt:
            print(
                f"index format {result.format_before} -> {result.format_after}: "
                f"{result.rows} chunks rebuilt in {result.seconds:.1f}s"
            )
        else:
            print(f"{_index_line(store)} is current; nothing to rebuild")
    return {
        "format_before": result.format_before, "format_after": result.format_after,
        "phraser": store.phraser, "rebuilt": result.rebuilt, "rows": result.rows,
        "chunks": store.count_chunks(),
    }  # fmt: skip


def _reindex_embeddings(store: Any, quiet: bool) -> dict[str, Any]:
    """Fill the vectors the side collection lacks, in the foreground."""
    from ingest.vectors import EmbeddingWorker

    index = store.vectors
    index.document_embedder = index.embedder  # the foreground may use every core

    def progress(doc_id: str, added: int) -> None:
        doc = store.get_document(doc_id)
        if doc is not None and not quiet:
            unit = "chunk" if added == 1 else "chunks"
            print(f"embedded  {doc.source}  ({added} {unit})", file=sys.stderr, flush=True)

    worker = EmbeddingWorker(index)
    embedded = worker.run_once(on_document=progress)  # the app's worker, in the foreground
    if worker.error:
        print(f"hopwise: embedding failed for {worker.error}", file=sys.stderr)
    after = index.coverage()
    if not quiet:
        print(after.line(index.embedder.name))
    return {
        "model": index.embedder.name, "embedded": embedded,
        "with_vectors": after.embedded, "chunks": after.total, "complete": after.complete,
    }  # fmt: skip
