"""Talking to an OpenAI-compatible model: the chat client, what an error means (retry, switch
method, give up), lenient JSON parsing of a reply, and a stream that runs away (a loop, or
the prompt's own evidence markup).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Literal, TypeVar

import openai
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, SecretStr, ValidationError

from graph.config import LLMConfig
from graph.deadline import WallClockTimeout
from graph.protocols import Usage

M = TypeVar("M", bound=BaseModel)

Role = Literal["main", "router"]


Method = Literal["json_schema", "function_calling", "json_mode"]


METHODS: tuple[Method, ...] = ("json_schema", "function_calling", "json_mode")


T = TypeVar("T")


DUMMY_API_KEY = "not-needed"  # local servers (Ollama, llama.cpp, vLLM) accept any key


SWITCH_STATUSES = {400, 415, 422}  # a request shape the endpoint refuses: try the next method


WALL_CLOCK_MARGIN_S = 1.0


RETRY_KINDS = {"transient", "server", "rate"}  # worth the same request again after a wait


TIMEOUT_REASON = "timeout"  # a call that got no reply in time (classify_error's reason)


STEP_ATTEMPTS = 2  # model replies a structured step may take by default: a try and a retry


def worth_retrying(kind: str, reason: str) -> bool:
    """A dropped connection, a 5xx or a 429 is asked again after a wait; a model that did not
    reply within the call's timeout is not waited for a second time (the circuit then skips it
    for a while): a slow model costs a question one timeout, not two."""
    return kind in RETRY_KINDS and reason != TIMEOUT_REASON


OUTAGE_KINDS = RETRY_KINDS | {"auth", "refused", "deadline"}  # the endpoint failed


THINK_RE = re.compile(r"<think>.*?</think>", re.S)


MARKUP_RE = re.compile(r"<<<|>>>")  # the prompt's data delimiters: a reply never has them


LOOP_RE = re.compile(r"(.{8,200}?)(?:\s*\1){3,}\s*$", re.S)  # a phrase four times at the end


RUNAWAY_CHECK_CHARS = 64  # a stream is checked for a loop whenever this much more arrived


FENCE_RE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def build_chat_model(config: LLMConfig, role: Role = "main") -> ChatOpenAI:
    """A ChatOpenAI for the configured endpoint; the router role may use a cheaper model.

    max_retries=0: retries, backoff and fallback are done by LLMReasoner, where they are visible.
    """
    model = config.router_model if role == "router" and config.router_model else None
    model = model or config.model
    if not config.base_url or not model:
        raise ValueError(
            "no language model configured: set HOPWISE_LLM_BASE_URL and HOPWISE_LLM_MODEL"
        )
    return ChatOpenAI(
        model=model,
        base_url=config.base_url,
        api_key=SecretStr(config.api_key or DUMMY_API_KEY),
        timeout=config.timeout_s,
        max_retries=0,
        temperature=config.temperature,
        max_tokens=config.max_tokens or None,  # 0: the server's own limit
        stream_usage=True,
        use_responses_api=False,  # chat completions is what every compatible server speaks
        disabled_params={"parallel_tool_calls": None},  # one forced tool; some servers reject it
    )


class RunawayReply(Exception):
    """A streamed reply that loops or imitates the evidence markup: stopped, never shown."""


class StepFailure(Exception):
    """A model step that cannot succeed; `reason` is short and holds no secrets."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def classify_error(exc: BaseException) -> tuple[str, str, float | None]:
    """(kind, short reason, retry-after seconds) for an exception from a model call.

    kinds: transient (timeout, connection), server (5xx), rate (429), rejected (a request shape the
    endpoint refuses: worth trying another method), auth, refused (other 4xx), malformed, error.
    """
    if isinstance(exc, WallClockTimeout):  # the reply trickled past the call's wall clock
        return "transient", TIMEOUT_REASON, None
    if isinstance(exc, openai.APITimeoutError):
        return "transient", TIMEOUT_REASON, None
    if isinstance(exc, openai.APIConnectionError):
        return "transient", "connection failed", None
    if isinstance(exc, openai.RateLimitError):
        return "rate", "rate limited (HTTP 429)", retry_after(exc.response)
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        if code >= 500:
            return "server", f"server error (HTTP {code})", None
        if code in SWITCH_STATUSES:
            return "rejected", f"request rejected (HTTP {code})", None
        if code in (401, 403):
            return "auth", f"authentication failed (HTTP {code})", None
        return "refused", f"request refused (HTTP {code})", None
    if isinstance(exc, (ValidationError, json.JSONDecodeError, ValueError, openai.OpenAIError)):
        return "malformed", "malformed reply", None
    return "error", f"unexpected {type(exc).__name__}", None


def retry_after(response: Any) -> float | None:
    try:
        return max(0.0, float(response.headers.get("retry-after")))
    except (AttributeError, TypeError, ValueError):
        return None


def lenient_parse(raw: Any, schema: type[M]) -> M | None:
    """The schema object in a reply: tool-call arguments or JSON text, tolerating a <think>
    block, a code fence, prose around the object, or a wrapper named after the schema."""
    if not isinstance(raw, AIMessage):
        return None
    candidates: list[Any] = [call.get("args") for call in raw.tool_calls]
    candidates += [call.get("args") for call in raw.invalid_tool_calls]
    candidates.append(raw.text)
    for candidate in candidates:
        value = json_object(candidate) if isinstance(candidate, str) else candidate
        if isinstance(value, dict) and len(value) == 1 and schema.__name__ in value:
            value = value[schema.__name__]
        try:
            return schema.model_validate(value)
        except ValidationError:
            continue
    return None


def json_object(text: str) -> Any:
    text = FENCE_RE.sub("", THINK_RE.sub("", text).strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None


def add_tokens(usage: Usage, message: Any) -> None:
    meta = getattr(message, "usage_metadata", None) or {}
    usage.prompt_tokens += int(meta.get("input_tokens") or 0)
    usage.completion_tokens += int(meta.get("output_tokens") or 0)


class ThinkFilter:
    """Drops a leading <think>...</think> block from streamed text (reasoning models)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._state = "start"  # start -> thinking -> open

    def feed(self, piece: str) -> str:
        if self._state == "open":
            return piece
        self._buffer += piece
        if self._state == "start":
            head = self._buffer.lstrip()
            if "<think>".startswith(head) and len(head) < len("<think>"):
                return ""
            if not head.startswith("<think>"):
                self._state, out, self._buffer = "open", self._buffer, ""
                return out
            self._state = "thinking"
        end = self._buffer.find("</think>")
        if end < 0:
            return ""
        self._state, out, self._buffer = "open", self._buffer[end + 8 :].lstrip(), ""
        return out

    def flush(self) -> str:
        out = self._buffer if self._state == "start" else ""
        self._buffer = ""
        return out


def runaway(text: str) -> str | None:
    """Why a streamed reply must be stopped, or None: it reproduces the prompt's evidence
    markup (untrusted output imitating our data), repeats a line three times, or ends in a
    phrase said four times over."""
    if MARKUP_RE.search(text):
        return "the reply imitated the evidence markup"
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 4]
    if lines and max(lines.count(line) for line in set(lines)) >= 3:
        return "the reply repeated a line"
    if LOOP_RE.search(text[-1200:]):
        return "the reply repeated itself"
    return None


def squashed(text: str) -> str:
    """Whitespace-insensitive form, to check that an extracted sentence is really verbatim."""
    return "".join(text.split())


def backoff(attempt: int, retry_after: float | None, base_s: float, max_wait_s: float) -> float:
    """The wait before retry `attempt` (1-based): Retry-After when the server names it
    (capped), else exponential backoff from `base_s` with jitter."""
    if retry_after is not None:
        return min(retry_after, max_wait_s)
    base = base_s * (2 ** (attempt - 1))
    return float(min(max_wait_s, base * (0.5 + random.random() / 2)))
