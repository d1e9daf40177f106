"""Documents and search. Readers list, search and download only what their groups may read (a
document they may not read is a 404, the same as one that does not exist); admins upload (the
Admin page's limits, parser worker and per-file errors), delete, and see the embedding status."""

from __future__ import annotations

import mimetypes
from typing import Any
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Request, Response
from starlette.responses import JSONResponse

from hopwise.api.errors import NO_STORE, ApiError
from hopwise.api.gate import Svc, Who, require_admin
from hopwise.api.schemas import (
    Deleted,
    DocumentList,
    EmbeddingStatus,
    SearchHit,
    SearchRequest,
    SearchResponse,
    UploadResponse,
    UploadRow,
)
from hopwise.api.service import ApiService
from hopwise.api_keys import Caller
from hopwise.documents import access_changes
from ingest.hidden import hidden_note
from ingest.models import DocumentInfo, IngestResult, parse_notes
from ingest.store import validate_chunk_groups, validate_groups

router = APIRouter(prefix="/api/v1", tags=["documents"])
NO_DOCUMENT = "no such document, or you may not read it"
MAX_FILES = 50  # files in one upload request


def readable(service: ApiService, who: Caller, doc_id: str) -> DocumentInfo:
    doc = service.runner.readable_document(doc_id, who.user.groups, admin=who.admin)
    if doc is None:
        raise ApiError(404, NO_DOCUMENT)
    return doc


@router.get("/documents", response_model=DocumentList, summary="Documents you may read")
def list_documents(who: Who, service: Svc) -> DocumentList:
    """Every document for an admin key; for a reader, those sharing a group with them."""
    docs = service.runner.list_documents()
    if not who.admin:
        readers = set(validate_groups(who.user.groups))
        docs = [d for d in docs if readers & set(d.groups)]
    return DocumentList(documents=docs)


@router.get(
    "/documents/status", response_model=EmbeddingStatus, summary="Background embedding (admin)"
)
def embedding_status(who: Who, service: Svc) -> EmbeddingStatus:
    """How many chunks have a vector of the current model; the rest are found by keywords
    until the background worker reaches them."""
    require_admin(who)
    stats: dict[str, Any] = service.runner.kb_stats()
    _, _, problem = service.runner.kb_health()
    embedded = stats.get("embedded_chunks")
    return EmbeddingStatus(
        documents=int(stats.get("documents") or 0),
        chunks=int(stats.get("chunks") or 0),
        embedded_chunks=None if embedded is None else int(embedded),
        complete=bool(stats.get("embedding_complete", True)),
        note=str(stats.get("embedding_note") or ""),
        problem=problem,
    )


@router.get("/documents/{doc_id}", response_model=DocumentInfo, summary="One document")
def get_document(doc_id: str, who: Who, service: Svc) -> DocumentInfo:
    return readable(service, who, doc_id)


@router.get(
    "/documents/{doc_id}/original",
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}}},
    summary="Download the original file",
)
def download_original(doc_id: str, who: Who, service: Svc) -> Response:
    """The uploaded bytes, as an attachment (never rendered by a browser)."""
    doc = readable(service, who, doc_id)
    data = service.runner.original(doc)
    if data is None:
        raise ApiError(404, "the original of this document was not kept; upload it again")
    mime = mimetypes.guess_type(doc.source)[0] or "application/octet-stream"
    headers = {
        **NO_STORE,
        "Content-Disposition": f"attachment; filename*=utf-8''{quote(doc.source, safe='')}",
        "Content-Security-Policy": "sandbox; default-src 'none'",
    }
    return Response(data, media_type=mime, headers=headers)


@router.delete("/documents/{doc_id}", response_model=Deleted, summary="Delete a document (admin)")
def delete_document(doc_id: str, who: Who, service: Svc) -> Deleted:
    """Its chunks, vectors and original; answers that used it are withheld from then on."""
    require_admin(who)
    if service.runner.get_document(doc_id) is None:
        raise ApiError(404, NO_DOCUMENT)
    removed = service.runner.delete_document(doc_id)
    return Deleted(deleted=removed > 0, chunks=removed)


@router.post(
    "/documents",
    response_model=UploadResponse,
    summary="Upload files (admin; multipart: files, groups, widen)",
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["files"],
                        "properties": {
                            "files": {
                                "type": "array",
                                "items": {"type": "string", "format": "binary"},
                            },
                            "groups": {
                                "type": "string",
                                "description": "Comma-separated reader groups (`all` is "
                                "everyone); omit to keep each document's current readers.",
                            },
                            "widen": {
                                "type": "boolean",
                                "description": "Confirm an upload that lets more people read "
                                "an existing document.",
                            },
                        },
                    }
                }
            }
        }
    },
)
async def upload(request: Request, who: Who, service: Svc) -> Response:
    """Ingest each file as the Admin page does (type, size and parse checks, the parser worker,
    hidden text removed, the original kept). One file's failure never stops the others; when
    every file failed the answer is 422 with each reason."""
    require_admin(who)
    files, groups, widen = await read_upload(request, service)
    runner = service.runner
    changes = await anyio.to_thread.run_sync(
        access_changes, [name for name, _ in files], runner.document_named, groups
    )
    widening = [c for c in changes if c.widens]
    if widening and not widen:
        names = "; ".join(
            f"{c.name} ({', '.join(c.before)} → {', '.join(c.after)})" for c in widening
        )
        raise ApiError(409, f"this lets more people read: {names}; send widen=true to confirm")
    results = await anyio.to_thread.run_sync(lambda: runner.ingest_uploads(files, groups=groups))
    rows = [upload_row(r) for r in results]
    counts = {s: sum(r.status == s for r in rows) for s in ("ingested", "skipped", "failed")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    body = UploadResponse(results=rows, summary=summary)
    status = 422 if counts["failed"] == len(rows) else 200
    payload = body.model_dump(mode="json")
    if status == 422:
        reasons = "; ".join(f"{r.file}: {r.reason}" for r in rows)
        payload = {"status": 422, "message": f"no file was ingested: {reasons}", **payload}
    return JSONResponse(payload, status_code=status, headers=NO_STORE)


async def read_upload(
    request: Request, service: ApiService
) -> tuple[list[tuple[str, bytes]], list[str] | None, bool]:
    """The files, groups and widen flag of a multipart upload, or a 4xx in words: not
    multipart, no file, too many, a file over HOPWISE_MAX_UPLOAD_MB, a bad group name."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(415, "upload files as multipart/form-data (field `files`)")
    try:
        form = await request.form(max_files=MAX_FILES, max_fields=20)
    except ApiError:
        raise
    except Exception as exc:  # a broken multipart body, too many parts
        raise ApiError(400, f"the upload cannot be read: {' '.join(str(exc).split())}") from exc
    uploads = [f for key in ("files", "file") for f in form.getlist(key) if not isinstance(f, str)]
    unknown = sorted(set(form.keys()) - {"files", "file", "groups", "widen"})
    if unknown:
        raise ApiError(422, f"unknown form fields: {', '.join(unknown)}")
    if not uploads:
        raise ApiError(422, "files: send at least one file")
    limit = service.settings.max_upload_mb * 1024 * 1024
    files = []
    for item in uploads:
        data = await item.read()
        name = item.filename or "upload"
        if len(data) > limit:
            raise ApiError(
                413,
                f"{name} is larger than {service.settings.max_upload_mb:g} MB "
                "(HOPWISE_MAX_UPLOAD_MB); nothing was ingested",
            )
        files.append((name, data))
    raw_groups = form.get("groups")
    groups: list[str] | None = None
    if isinstance(raw_groups, str):
        named = [g.strip() for g in raw_groups.split(",") if g.strip()]
        if not named:
            raise ApiError(422, "groups: name at least one group (`all` is everyone)")
        try:
            groups = validate_chunk_groups(named)
        except ValueError as exc:
            raise ApiError(422, f"groups: {exc}") from exc
    widen = str(form.get("widen") or "").strip().lower() in {"1", "true", "yes", "on"}
    return files, groups, widen


def upload_row(result: IngestResult) -> UploadRow:
    status = result.status if result.status in ("ingested", "skipped") else "failed"
    return UploadRow(
        file=result.source,
        status=status,  # type: ignore[arg-type]
        doc_id=result.doc_id or "",
        chunks=result.chunks,
        version=result.version or 0,
        reason=result.reason or "",
        hidden_text=hidden_note(result.hidden_removed, result.hidden_kinds),
        notes=parse_notes("", result.ocr_pages, result.warnings),
    )


@router.post("/search", response_model=SearchResponse, summary="Search your documents")
def search(body: SearchRequest, who: Who, service: Svc) -> SearchResponse:
    """Hybrid search (BM25 and meaning) with your groups inside the store's filter; no
    reasoning. Scores are shown to admins only."""
    query = body.query.strip()
    if not query:
        raise ApiError(422, "query: the query is empty")
    if len(query) > service.settings.api_max_question_chars:
        raise ApiError(422, "query: the query is too long")
    hits = service.runner.search(query, who.user.groups, k=body.k)
    return SearchResponse(
        query=query,
        hits=[
            SearchHit(
                rank=h.rank or i,
                chunk_id=h.chunk_id,
                doc_id=h.doc_id,
                title=h.title,
                source=h.source,
                section=h.section,
                page=h.page,
                text=h.text,
                score=h.score if who.sees_scores else None,
            )
            for i, h in enumerate(hits, 1)
        ],
    )
