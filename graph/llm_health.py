"""How well the configured model is doing its job, within one question and across questions.

Within a question (`QuestionWatch`, a context variable like the deadline): once a structured
step has failed after its one retry, the rest of that question's structured steps go straight
to offline reasoning. Across questions (`ModelHealth`, one per reasoner): after
`failing_questions` questions in a row in which the model failed a step, it is bypassed (no
call at all, said once) until a probe succeeds: every `probe_interval_s` seconds or every
`probe_questions` bypassed questions, the first model step of a question is tried once.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from graph.llm_wire import OUTAGE_KINDS
from graph.state import JsonObject

Plan = Literal["use", "probe", "bypass"]
Clock = Callable[[], float]


@dataclass
class QuestionWatch:
    """One question's dealings with the model: what the health allowed at its start (`plan`),
    and what happened since."""

    plan: Plan = "use"  # changes as the question goes: a probe that works turns it to "use"
    announce: bool = False  # the first bypassed question says so, once
    failing_before: int = 0  # failing questions in a row when it started
    calls_ok: int = 0
    failures: list[str] = field(default_factory=list)  # "step: reason"
    structured_failed: str = ""  # the structured step that failed (the rest go offline)
    probed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    began: Plan = field(init=False)

    def __post_init__(self) -> None:
        self.began = self.plan

    def record(self) -> JsonObject:
        """What the result shows of this question's dealings with the model."""
        out: JsonObject = {"this_question": self.began}
        if self.began == "probe":
            out["probe"] = "worked" if self.plan == "use" and self.calls_ok else "failed"
        if self.failures:
            out["failed_steps"] = [f[:200] for f in self.failures]
        return out

    def skip_reason(self, structured: bool) -> str | None:
        """Why this step must not ask the model, or None."""
        if self.plan == "bypass":
            return "model bypassed: it failed several questions in a row"
        if structured and self.structured_failed:
            return f"model skipped for this question after its {self.structured_failed} step failed"
        return None

    @property
    def probing(self) -> bool:
        """The next model call is the probe: one try, no retry."""
        return self.plan == "probe" and not self.probed

    def succeeded(self) -> None:
        with self.lock:
            self.calls_ok += 1
            if self.plan == "probe":
                self.plan, self.probed = "use", True

    def failed(self, step: str, reason: str, *, structured: bool) -> None:
        with self.lock:
            self.failures.append(f"{step}: {reason}")
            if self.plan == "probe":  # the probe failed: quiet offline for the rest
                self.plan, self.probed = "bypass", True
            elif structured and not self.structured_failed:
                self.structured_failed = step

    @property
    def quiet(self) -> bool:
        """Offline stands in without a note: the model is bypassed (a failed probe included)."""
        return self.plan == "bypass"


_WATCH: ContextVar[QuestionWatch | None] = ContextVar("hopwise_question_watch", default=None)


def current_watch() -> QuestionWatch | None:
    return _WATCH.get()


class ModelHealth:
    """Failing questions in a row, and whether the model is bypassed; thread-safe, shared by
    every question of one reasoner."""

    def __init__(
        self,
        failing_questions: int = 3,
        probe_interval_s: float = 300.0,
        probe_questions: int = 20,
        clock: Clock = time.monotonic,
    ) -> None:
        """`failing_questions` 0 never bypasses; `probe_questions` 0 probes by time only."""
        self.failing_questions = failing_questions
        self.probe_interval_s = probe_interval_s
        self.probe_questions = probe_questions
        self.clock = clock
        self._lock = threading.Lock()
        self._failing = 0  # questions in a row in which the model failed a step
        self._bypassed_at: float | None = None
        self._last_try = 0.0  # when the model was last tried while bypassed
        self._skipped = 0  # bypassed questions since that try
        self._announced = False
        self._last_error = ""

    @property
    def bypassed(self) -> bool:
        return self._bypassed_at is not None

    def begin(self) -> QuestionWatch:
        """The plan for a question starting now."""
        with self._lock:
            now = self.clock()
            if self._bypassed_at is None:
                return QuestionWatch("use", failing_before=self._failing)
            due_by_time = now - self._last_try >= self.probe_interval_s
            due_by_count = 0 < self.probe_questions <= self._skipped
            if due_by_time or due_by_count:
                self._last_try, self._skipped = now, 0
                return QuestionWatch("probe", failing_before=self._failing)
            self._skipped += 1
            announce, self._announced = not self._announced, True
            return QuestionWatch("bypass", announce=announce, failing_before=self._failing)

    def end(self, watch: QuestionWatch) -> None:
        """Count the question: a failure in a row, or (a model step worked, none failed) a
        recovery."""
        with self._lock:
            if watch.probed and watch.plan == "use":  # the probe worked: the model is back
                self._failing, self._bypassed_at, self._announced = 0, None, False
            if watch.failures:
                self._last_error = watch.failures[-1]
                if watch.plan == "bypass":
                    return  # a failed probe: still bypassed, next probe after the interval
                self._failing += 1
                if 0 < self.failing_questions <= self._failing and self._bypassed_at is None:
                    self._bypassed_at = self._last_try = self.clock()
                    self._skipped, self._announced = 0, False
            elif watch.calls_ok:
                self._failing, self._bypassed_at, self._announced = 0, None, False

    def snapshot(self) -> JsonObject:
        """The state for results, the trace and health endpoints: ok, failing or bypassed."""
        with self._lock:
            state = "bypassed" if self.bypassed else ("failing" if self._failing else "ok")
            out: JsonObject = {
                "state": state,
                "failing_questions": self._failing,
                "threshold": self.failing_questions,
            }
            if self._bypassed_at is not None:
                now = self.clock()
                out["bypassed_for_s"] = round(now - self._bypassed_at, 1)
                out["next_probe_in_s"] = round(
                    max(0.0, self._last_try + self.probe_interval_s - now), 1
                )
                if self.probe_questions:
                    out["next_probe_in_questions"] = max(0, self.probe_questions - self._skipped)
            if self._last_error:
                out["last_error"] = self._last_error[:200]
            return out


class Circuit:
    """After a step failed because the endpoint is down (timeouts, refused connections, 5xx,
    429, auth), later steps skip the model for `cooldown_s` (0: never), so one question does
    not wait out every step's timeout; the next call that works closes it."""

    def __init__(self, cooldown_s: float) -> None:
        self.cooldown_s = cooldown_s
        self._open_until = 0.0
        self._reason = ""
        self._lock = threading.Lock()

    def skip_reason(self) -> str | None:
        """The reason to skip the model right now, if the endpoint failed moments ago."""
        if self.cooldown_s > 0 and time.monotonic() < self._open_until:
            return f"model skipped for {self.cooldown_s:g}s after: {self._reason}"
        return None

    def record(self, kind: str | None, reason: str) -> None:
        """A call's outcome: None worked, an outage kind opens the circuit."""
        with self._lock:
            if kind in OUTAGE_KINDS:
                self._open_until = time.monotonic() + self.cooldown_s
                self._reason = reason
            elif kind is None:
                self._open_until = 0.0


@contextlib.contextmanager
def watched_question(health: ModelHealth | None) -> Iterator[QuestionWatch | None]:
    """Within the block, the model steps of one question follow `health`'s plan; at its end
    the question is counted. None (no model): nothing is watched."""
    if health is None:
        yield None
        return
    watch = health.begin()
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)
        health.end(watch)
