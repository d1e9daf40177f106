"""Structured output from one OpenAI-compatible endpoint: which method it accepts (json_schema,
then function calling, then JSON mode with the schema in the prompt, remembered once one
works), bounded retries, and lenient parsing of the reply. Raises StepFailure; the reasoner
(graph.llm) turns that into an offline stand-in.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableSequence
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from graph import prompts as P
from graph.config import LLMConfig
from graph.deadline import T, WallClockTimeout, deadline_passed, run_bounded, stop_at
from graph.llm_wire import (
    METHODS,
    WALL_CLOCK_MARGIN_S,
    M,
    Method,
    Role,
    StepFailure,
    add_tokens,
    backoff,
    classify_error,
    lenient_parse,
    worth_retrying,
)
from graph.protocols import Usage

logger = logging.getLogger(__name__)


class StructuredCalls:
    """One endpoint's structured steps; thread-safe (the method found is shared)."""

    def __init__(
        self,
        config: LLMConfig,
        main: ChatOpenAI,
        router: ChatOpenAI,
        *,
        backoff_s: float,
        max_wait_s: float,
        sleep: Callable[[float], None],
    ) -> None:
        self.config, self.main, self.router = config, main, router
        configured = config.structured_method
        self.method: Method | None = None if configured == "auto" else configured
        self._backoff_s = backoff_s
        self._max_wait_s = max_wait_s
        self._sleep = sleep
        self._bound: dict[tuple[int, str, str], Any] = {}
        self._lock = threading.Lock()

    def call(
        self,
        schema: type[M],
        system: str,
        user: str,
        check: Callable[[M], T | None],
        usage: Usage,
        role: Role,
        attempts: list[int],
    ) -> tuple[T, str]:
        """The checked result and the method that gave it; StepFailure when none does.
        `attempts`: the model replies this step may still take, spent by every reply or
        timeout (a request refused as a shape, which tries the next method, is free)."""
        methods: tuple[Method, ...] = (self.method,) if self.method else METHODS
        reasons: list[str] = []
        for i, method in enumerate(methods):
            may_switch = self.method is None and i < len(methods) - 1
            try:
                result = self._call_method(
                    schema, method, system, user, check, usage, role, may_switch, attempts
                )
            except StepFailure as failure:
                reasons.append(f"{method}: {failure.reason}")
                switch = failure.kind in ("rejected", "malformed", "switch")
                if may_switch and switch and attempts[0] > 0:
                    continue
                raise StepFailure(failure.kind, "; ".join(reasons)) from None
            if self.method is None:
                with self._lock:
                    self.method = method
                logger.info("structured output method for this endpoint: %s", method)
            return result, method
        raise StepFailure("error", "; ".join(reasons))

    def _call_method(
        self,
        schema: type[M],
        method: Method,
        system: str,
        user: str,
        check: Callable[[M], T | None],
        usage: Usage,
        role: Role,
        may_switch: bool,
        attempts: list[int],
    ) -> T:
        """Up to llm_max_retries retries on transient errors and one retry on a malformed reply,
        while `attempts` lasts."""
        if method == "json_mode":
            user += P.json_mode_suffix(schema.__name__, schema.model_json_schema())
        messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
        bound = self._bound_model(schema, method, role)
        retries_left = max(0, self.config.max_retries)
        repaired = not self.config.repair  # one repair request, when configured
        attempt = 0
        while True:
            attempt += 1
            # a wall clock beyond the read timeout (which a trickling reply never trips), and
            # never past the question's deadline
            until = stop_at(self.config.timeout_s + WALL_CLOCK_MARGIN_S)
            if until <= time.monotonic():
                raise StepFailure("late", "the question's deadline had passed")
            usage.llm_calls += 1
            attempts[0] -= 1
            try:
                reply = run_bounded(partial(bound.invoke, messages), until, "hopwise-llm")
            except Exception as exc:  # noqa: BLE001 - classified below
                kind, reason, retry_after = classify_error(exc)
                if isinstance(exc, WallClockTimeout) and deadline_passed():
                    kind, reason = "deadline", "no reply before the question's deadline"
                if kind in ("server", "rejected") and may_switch:
                    attempts[0] += 1  # a request shape refused at once: the next method is free
                if kind == "server" and may_switch:
                    raise StepFailure("switch", reason) from None  # llama.cpp-style rejection
                if worth_retrying(kind, reason) and retries_left > 0 and attempts[0] > 0:
                    retries_left -= 1
                    self._sleep(backoff(attempt, retry_after, self._backoff_s, self._max_wait_s))
                    continue
                if kind != "malformed":
                    raise StepFailure(kind, reason) from None
                parsed = None
            else:
                add_tokens(usage, reply)
                parsed = lenient_parse(reply, schema)
            result = check(parsed) if parsed is not None else None
            if result is not None:
                return result
            if repaired or attempts[0] <= 0:
                raise StepFailure("malformed", "malformed reply")
            repaired = True
            messages = [*messages, HumanMessage(P.REPAIR_NOTE)]

    def _bound_model(self, schema: type[BaseModel], method: Method, role: Role) -> Any:
        """The chat model bound exactly as `with_structured_output` binds it, minus its parser.

        Parsing the AIMessage here (tool arguments or JSON text, leniently) keeps the raw reply
        for tokens and repair, and saves the parallel map `include_raw` runs in a thread pool
        (about 5 ms per call).
        """
        model = self.router if role == "router" else self.main
        key = (id(model), schema.__name__, method)
        if key not in self._bound:
            structured = model.with_structured_output(schema, method=method)
            if not isinstance(structured, RunnableSequence):
                raise TypeError("unexpected with_structured_output shape")
            self._bound[key] = structured.first
        return self._bound[key]
