"""The OpenAI-compatible endpoint: `POST /v1/chat/completions` (streaming and not) and
`GET /v1/models`, so the official `openai` client and chat UIs that speak the OpenAI API can
use Hopwise as the model `hopwise`.

The last user message is the question; earlier user and assistant messages are the
conversation a follow-up is rewritten with (system messages are not instructions to Hopwise
and are ignored). Nothing is saved in a thread: the client holds the conversation, as with
OpenAI. The reply's content is the answer with its `[n]` markers and a sources list; the full
`hopwise ask --json` result rides in the extra field `hopwise`, which standard clients ignore.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import StreamingResponse

from graph.result import QuestionResult
from hopwise.api.errors import NO_STORE, ApiError, error_body, internal_error
from hopwise.api.gate import Svc, Who
from hopwise.api.questions import ask_events, ask_once, check_question
from hopwise.api.service import ApiService

router = APIRouter(prefix="/v1", tags=["openai"])
MODEL = "hopwise"
SOURCES_HEADING = "Sources:"
CORRECTED = "(Checked against its sources, the answer reads:)"


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "text"
    text: str = ""


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content if p.type == "text" and p.text)
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI's request; fields Hopwise does not use (temperature, max_tokens, …) are accepted
    and ignored, as chat UIs send them."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="`hopwise`")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


def content_of(result: QuestionResult) -> str:
    """The answer with its [n] markers, then one line per cited source."""
    lines = []
    for c in result.citations:
        where = c.url or " · ".join(x for x in (c.title or c.source, c.section) if x)
        page = f" · p. {c.page}" if c.page else ""
        lines.append(f"[{c.n}] {where}{page}")
    sources = f"\n\n{SOURCES_HEADING}\n" + "\n".join(lines) if lines else ""
    return result.answer.strip() + sources


def conversation(messages: list[ChatMessage]) -> tuple[str, list[dict[str, str]]]:
    """The question (the last message, a user's) and the earlier turns as history."""
    last = messages[-1]
    if last.role != "user":
        raise ApiError(422, "messages: the last message must be the user's question")
    history = []
    for message in messages[:-1]:
        if message.role not in ("user", "assistant"):
            continue  # system and tool messages are not instructions to Hopwise
        text = message.text()
        if message.role == "assistant":  # our own sources list is no part of the answer
            text = text.split(f"\n\n{SOURCES_HEADING}\n", 1)[0]
        if text.strip():
            history.append({"role": message.role, "content": text})
    return last.text(), history


def completion(result: QuestionResult, ident: str, created: int) -> dict[str, Any]:
    return {
        "id": ident,
        "object": "chat.completion",
        "created": created,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content_of(result)},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": result.tokens},
        "hopwise": result.to_json(),
    }


def chunk(
    ident: str,
    created: int,
    delta: dict[str, Any],
    finish: Literal["stop"] | None = None,
    **extra: Any,
) -> str:
    body = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        **extra,
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


@router.get("/models", summary="The one model: hopwise")
def models(_: Who) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "hopwise"}],
    }


@router.post("/chat/completions", summary="OpenAI-compatible chat completion")
async def chat_completions(body: ChatRequest, who: Who, service: Svc) -> Any:
    """The adaptive graph over the documents your key's groups may read."""
    if body.model != MODEL:
        raise ApiError(404, f"the model {body.model!r} does not exist; use {MODEL!r}")
    question, history = conversation(body.messages)
    question = check_question(service, question)
    ident, created, thread = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), uuid.uuid4().hex
    if not body.stream:
        result = await ask_once(
            service, who, question, thread_id=thread, history=history, save=False
        )
        return completion(result, ident, created)
    events = ask_events(service, who, question, thread_id=thread, history=history, save=False)
    return StreamingResponse(
        stream(events, ident, created, service),
        media_type="text/event-stream",
        headers={**NO_STORE, "X-Accel-Buffering": "no"},
    )


async def stream(
    events: AsyncIterator[tuple[str, Any]], ident: str, created: int, service: ApiService
) -> AsyncIterator[str]:
    """Tokens as content deltas while the answer is written; at the end what the claim check
    changed (if anything), the sources list, and the full result in `hopwise`."""
    streamed = ""
    yield chunk(ident, created, {"role": "assistant", "content": ""})
    try:
        async for kind, payload in events:
            if kind == "keepalive":
                yield ": keep-alive\n\n"
            elif kind == "token":
                streamed += payload
                yield chunk(ident, created, {"content": payload})
            elif kind == "result":
                final = content_of(payload)
                answer = payload.answer.strip()
                if streamed.strip() and streamed.strip() == answer:
                    tail = len(streamed) - len(streamed.rstrip())  # newlines already sent
                    rest = final[len(answer) :]
                    rest = rest[min(tail, len(rest) - len(rest.lstrip())) :]
                elif streamed and answer.startswith(streamed):
                    rest = final[len(streamed) :]
                elif streamed.strip():
                    rest = f"\n\n{CORRECTED}\n\n{final}"
                else:
                    rest = final
                if rest:
                    yield chunk(ident, created, {"content": rest})
                yield chunk(ident, created, {}, "stop", hopwise=payload.to_json())
    except ApiError as exc:
        body = error_body(exc.status, service.settings.redact(exc.message), "/v1/")
        yield f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
    except Exception as exc:  # noqa: BLE001 - in words, with a reference in the log
        response = internal_error("/v1/chat/completions", exc)
        yield f"data: {bytes(response.body).decode('utf-8')}\n\n"
    yield "data: [DONE]\n\n"
