"""`POST /api/v1/ask`: one question, answered as `hopwise ask --json` answers it, or streamed as
Server-Sent Events (`step`, `token`, then `result` or `error`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import APIRouter
from starlette.responses import StreamingResponse

from graph.conversations import ThreadAccessError
from graph.result import QuestionResult
from hopwise.api.errors import NO_STORE, NOT_FOUND_THREAD, ApiError, error_body, internal_error
from hopwise.api.gate import Svc, Who
from hopwise.api.questions import ask_events, ask_once, check_question, start_thread
from hopwise.api.schemas import AskRequest
from hopwise.api.service import ApiService
from hopwise.database import StoreUnavailable

router = APIRouter(prefix="/api/v1", tags=["ask"])


@router.post(
    "/ask",
    response_model=QuestionResult,
    responses={200: {"content": {"text/event-stream": {}}}},
    summary="Ask a question (JSON, or Server-Sent Events with stream: true)",
)
async def ask(
    body: AskRequest,
    who: Who,
    service: Svc,
) -> Any:
    """The answer with citations, evidence, hops, verdict, mode and timings: the object
    `hopwise ask --json` prints. Raw scores are shown to admins only (docs/security.md)."""
    question = check_question(service, body.question)
    thread_id = await anyio.to_thread.run_sync(start_thread, service, who, body.thread_id)
    if not body.stream:
        result = await ask_once(service, who, question, thread_id=thread_id, web=body.web)
        return result.to_json()
    events = ask_events(service, who, question, thread_id=thread_id, web=body.web)
    return StreamingResponse(
        sse(events, service),
        media_type="text/event-stream",
        headers={**NO_STORE, "X-Accel-Buffering": "no"},
    )


def sse_event(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def sse(events: AsyncIterator[tuple[str, Any]], service: ApiService) -> AsyncIterator[str]:
    """The events as SSE; an error after the stream began is an `error` event in words."""
    try:
        async for kind, payload in events:
            if kind == "keepalive":
                yield ": keep-alive\n\n"
            elif kind == "token":
                yield sse_event("token", {"text": payload})
            elif kind == "step":
                yield sse_event("step", payload)
            elif kind == "result":
                yield sse_event("result", payload.to_json())
    except ApiError as exc:
        yield sse_event("error", error_body(exc.status, service.settings.redact(exc.message)))
    except ThreadAccessError:
        yield sse_event("error", error_body(404, NOT_FOUND_THREAD))
    except StoreUnavailable as exc:
        yield sse_event("error", error_body(503, service.settings.redact(str(exc))))
    except Exception as exc:  # noqa: BLE001 - in words, with a reference in the log
        response = internal_error("/api/v1/ask", exc)
        yield sse_event("error", json.loads(bytes(response.body)))
