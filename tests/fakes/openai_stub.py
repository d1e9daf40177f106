"""A local OpenAI-compatible HTTP server for tests and benchmarks (loopback only).

It speaks enough of the OpenAI API for the real langchain-openai `ChatOpenAI` and
`OpenAIEmbeddings`: chat completions (json_schema / json_object response formats, forced
tool calls, plain text, SSE streaming with a usage chunk), embeddings and the model list.
Replies come from a queue of scripted `Reply`s, then from a `responder(request) -> reply`
callable, then from a default that fills any requested schema with placeholder values.
Fault modes reproduce what real endpoints do: slow replies, HTTP 500 / 429, malformed or
truncated JSON, empty replies, dropped connections and llama.cpp's json_schema rejection.

    with StubOpenAIServer() as stub:
        stub.push({"route": "simple", ...})            # a structured reply
        llm = ChatOpenAI(base_url=stub.url, api_key="x", model="stub")
"""

from __future__ import annotations

import base64
import json
import re
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.openai_replies import (
    DEFAULT_EMBEDDING_DIM,
    Reply,
    content_text,
    count_tokens,
    default_responder,
    embed_text,
    plausible_responder,
    requested_schema,
    structured_method,
)

HANG_LIMIT_S = 60.0  # the hanging faults still end by themselves (bounded loops)


@dataclass
class RecordedRequest:
    """What the server received, for assertions."""

    method: str
    path: str
    json: Any
    headers: dict[str, str]  # lower-case names
    at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, Any]]:
        body = self.json if isinstance(self.json, dict) else {}
        return list(body.get("messages") or [])

    @property
    def prompt_text(self) -> str:
        """All message contents joined, as the model would read them."""
        return "\n".join(content_text(m.get("content")) for m in self.messages)

    @property
    def schema_name(self) -> str | None:
        return requested_schema(self.json) if isinstance(self.json, dict) else None

    @property
    def structured_method(self) -> str | None:
        return structured_method(self.json) if isinstance(self.json, dict) else None


Responder = Callable[[dict[str, Any]], "Reply | dict[str, Any] | str | None"]


# --------------------------------------------------------------------------- request helpers


# --------------------------------------------------------------------------- embeddings


# --------------------------------------------------------------------------- server


class StubOpenAIServer:
    """A threaded OpenAI-compatible server on 127.0.0.1 with scripted replies and faults."""

    def __init__(
        self,
        replies: Iterable[Reply | dict[str, Any] | str] = (),
        *,
        responder: Responder | None = None,
        fault: str | None = None,
        reject_json_schema: bool = False,
        slow_s: float = 5.0,
        trickle_s: float = 2.0,
        latency_s: float = 0.0,
        retry_after: float = 1.0,
        models: tuple[str, ...] = ("stub-model",),
        record: bool = True,
        zero_latency: bool = False,
    ) -> None:
        self._queue: deque[Reply] = deque()
        self.push(*replies)
        self.responder = responder
        self.fault = fault  # sticky fault for every chat request
        self.reject_json_schema = reject_json_schema
        self.slow_s = slow_s
        self.trickle_s = trickle_s
        self.latency_s = 0.0 if zero_latency else latency_s
        self.retry_after = retry_after
        self.models = models
        self.record = record and not zero_latency
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def zero_latency(cls, **kwargs: Any) -> StubOpenAIServer:
        """A benchmark stub: no delays, no request recording, plausible replies by default."""
        kwargs.setdefault("responder", plausible_responder)
        return cls(zero_latency=True, **kwargs)

    # -- lifecycle
    def start(self) -> StubOpenAIServer:
        handler = type("Handler", (_Handler,), {"stub": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> StubOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting
    def push(self, *replies: Reply | dict[str, Any] | str) -> None:
        """Queue replies; a dict is structured data, a str is text content."""
        for reply in replies:
            self._queue.append(_as_reply(reply))

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.request_count = 0

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            answer = self.responder(request)
            if answer is not None:
                return _as_reply(answer)
        return default_responder(request)

    def _record(self, method: str, path: str, body: Any, headers: dict[str, str]) -> None:
        with self._lock:
            self.request_count += 1
            if self.record:
                self.requests.append(RecordedRequest(method, path, body, headers))


class _QuietServer(ThreadingHTTPServer):
    """Clients that time out or hang up mid-reply are expected here, not errors to print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


def _as_reply(value: Reply | dict[str, Any] | str) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    return Reply(data=value)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall
    stub: StubOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        return

    # -- plumbing
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        err = {"error": {"message": message, "type": "stub_error", "code": status}}
        self._send_json(status, err, headers)

    def _drop(self) -> None:
        """Close the socket without a reply (RST), as a crashing server would."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"null")
        except json.JSONDecodeError:
            return None

    # -- routes
    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self.stub._record("GET", self.path, None, _headers(self.headers))
        if self.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "stub"}
                for m in self.stub.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = self._read_body()
        self.stub._record("POST", self.path, body, _headers(self.headers))
        if not isinstance(body, dict):
            self._error(400, "body must be a JSON object")
        elif self.path.endswith("/chat/completions"):
            self._chat(body)
        elif self.path.endswith("/embeddings"):
            self._embeddings(body)
        else:
            self._error(404, f"no route {self.path}")

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str) or (
            isinstance(inputs, list) and inputs and isinstance(inputs[0], int)
        ):
            inputs = [inputs]
        dim = int(body.get("dimensions") or DEFAULT_EMBEDDING_DIM)
        data = []
        tokens = 0
        for i, text in enumerate(inputs or []):
            vec = embed_text(text, dim)
            tokens += len(text) if isinstance(text, list) else count_tokens(text)
            value: Any = vec
            if body.get("encoding_format") == "base64":
                value = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": value})
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(
            200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
        )

    def _chat(self, body: dict[str, Any]) -> None:
        stub = self.stub
        if (
            stub.reject_json_schema
            and (body.get("response_format") or {}).get("type") == "json_schema"
        ):
            self._error(500, "JSON schema conversion failed: unsupported response_format")
            return
        reply = stub.next_reply(body)
        fault = reply.fault or stub.fault
        delay = reply.delay_s + stub.latency_s + (stub.slow_s if fault == "slow" else 0.0)
        if delay:
            time.sleep(delay)
        if fault == "drop":
            self._drop()
            return
        if fault == "http500" or (reply.status or 200) >= 500:
            self._error(reply.status or 500, "internal server error")
            return
        if fault == "http429" or reply.status == 429:
            wait = reply.retry_after if reply.retry_after is not None else stub.retry_after
            self._error(429, "rate limited", {"Retry-After": f"{wait:g}"})
            return
        if reply.status and reply.status >= 400:
            self._error(reply.status, "request rejected")
            return
        if fault in ("endless", "think_forever", "trickle"):
            self._hang(body, fault)
            return
        content, tool_args = _render(body, reply, fault)
        if body.get("stream"):
            self._stream(body, content, tool_args, fault)
        else:
            self._complete(body, content, tool_args)

    def _usage(self, body: dict[str, Any], content: str, tool_args: str | None) -> dict[str, int]:
        prompt = "\n".join(content_text(m.get("content")) for m in body.get("messages") or [])
        prompt_tokens = count_tokens(prompt) + 4 * len(body.get("messages") or [])
        completion_tokens = count_tokens(tool_args if tool_args is not None else content)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }

    def _complete(self, body: dict[str, Any], content: str, tool_args: str | None) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish = "stop"
        if tool_args is not None:
            name = requested_schema(body) or "tool"
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [_tool_call(name, tool_args)],
            }
            finish = "tool_calls"
        payload = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "stub-model",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": self._usage(body, content, tool_args),
        }
        self._send_json(200, payload)

    def _hang(self, body: dict[str, Any], fault: str) -> None:
        """A reply that never finishes (within HANG_LIMIT_S): empty stream pieces forever, an
        unclosed <think> block, or one byte every trickle_s (the read timeout never fires)."""
        self.send_response(200)
        streaming = bool(body.get("stream"))
        self.send_header("Content-Type", "text/event-stream" if streaming else "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        started = time.monotonic()
        base = {"id": "chatcmpl-hang", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model") or "stub-model"}  # fmt: skip
        first = True
        try:
            while time.monotonic() - started < HANG_LIMIT_S:
                if fault == "trickle":
                    self.wfile.write(b"d" if streaming else b" ")
                    self.wfile.flush()
                    time.sleep(self.stub.trickle_s)
                    continue
                piece = "<think>" if fault == "think_forever" and first else ""
                if fault == "think_forever" and not first:
                    piece = "still thinking "
                first = False
                event = {**base, "choices": [{"index": 0, "delta": {"content": piece},
                                              "finish_reason": None}]}  # fmt: skip
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:  # the client gave up and closed the connection: the goal
            return

    def _stream(
        self, body: dict[str, Any], content: str, tool_args: str | None, fault: str | None
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or "stub-model",
        }

        def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            event = {**base, "choices": choices, **extra}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        pieces = _split_stream(content)
        for i, piece in enumerate(pieces):
            if fault == "drop_midstream" and i >= max(1, len(pieces) // 2):
                self._drop()
                return
            send([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
        if tool_args is not None:
            call = _tool_call(requested_schema(body) or "tool", tool_args)
            call["index"] = 0
            send([{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}])
        send([{"index": 0, "delta": {}, "finish_reason": "tool_calls" if tool_args else "stop"}])
        if (body.get("stream_options") or {}).get("include_usage"):
            send([], usage=self._usage(body, content, tool_args))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _headers(message: Any) -> dict[str, str]:
    """Request headers with lower-case names (HTTP names are case-insensitive)."""
    return {k.lower(): v for k, v in message.items()}


def _tool_call(name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _split_stream(text: str) -> list[str]:
    """Word-sized pieces (CJK per character) so streaming tests see several tokens."""
    return re.findall(r"\s*[\u3400-\u9fff]|\s*[^\s\u3400-\u9fff]+|\s+$", text) or (
        [text] if text else []
    )


def _render(body: dict[str, Any], reply: Reply, fault: str | None) -> tuple[str, str | None]:
    """(content, tool-call arguments or None) for a reply, shaped the way the request asked."""
    if fault == "empty":
        return "", None
    if reply.data is not None:
        text = json.dumps(reply.data, ensure_ascii=False)
    elif reply.content is not None:
        text = reply.content
    else:
        text = default_responder(body).content or ""
    if fault == "malformed":
        text = "Sure! Here is the JSON you asked for: {route: simple,, 'reason' ...}"
    elif fault == "truncated":
        text = (
            text[: max(1, len(text) // 2)]
            if text.startswith("{")
            else '{"standalone_question": "unterminated'
        )
    if structured_method(body) == "function_calling" and reply.content is None:
        return "", text
    return text, None
