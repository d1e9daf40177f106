"""The language-model reasoner: every graph step through langchain-openai `ChatOpenAI`.

Real OpenAI-compatible endpoints differ (llama.cpp rejects json_schema with HTTP 500, some
ignore response formats, some drop system messages), so structured output tries json_schema,
then function calling, then JSON mode with the schema in the prompt, and remembers what worked.
Transient failures get bounded retries with backoff; after that the step is answered by the
offline reasoner and marked `fallback`. No exception, stack trace or API key leaves a method.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from graph import prompts as P
from graph import text as tx
from graph.config import LLMConfig
from graph.deadline import (
    T,
    WallClockTimeout,
    iterate_bounded,
    stop_at,
)
from graph.llm_checks import anchors_of, check_decomposition, filled_in
from graph.llm_health import Circuit, ModelHealth, current_watch
from graph.llm_structured import StructuredCalls
from graph.llm_wire import (
    RUNAWAY_CHECK_CHARS,
    STEP_ATTEMPTS,
    M,
    Role,
    RunawayReply,
    StepFailure,
    ThinkFilter,
    add_tokens,
    backoff,
    build_chat_model,
    classify_error,
    runaway,
    squashed,
    worth_retrying,
)
from graph.protocols import EvidenceItem, HopView, PhraseLookup, Reasoner, Usage
from graph.schemas import (
    BridgeQuery,
    Decomposition,
    EvidenceSentence,
    EvidenceVerdict,
    ExtractedEvidence,
    PlanDecision,
    RouteDecision,
    SubQuestion,
)
from ingest.models import Hit

logger = logging.getLogger(__name__)


class LLMReasoner:
    """Reasoner backed by an OpenAI-compatible endpoint, with the offline reasoner as fallback."""

    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        fallback: Reasoner,
        *,
        backoff_s: float = 0.5,
        max_wait_s: float = 8.0,
        circuit_cooldown_s: float = 30.0,
        max_answer_chars: int = 12_000,
        max_stream_s: float = 300.0,
        sleep: Callable[[float], None] = time.sleep,
        health: ModelHealth | None = None,
    ) -> None:
        """`circuit_cooldown_s`: after a step fails because the endpoint is down (timeouts,
        refused connections, 5xx, 429, auth), later steps go straight to offline reasoning for
        this long, so one question does not wait out every step's timeout. 0 disables it.
        `max_answer_chars`: streamed answers stop here, since some endpoints ignore token limits.
        `health`: failing questions in a row, after which the model is bypassed until a probe
        works (graph.llm_health); by default from the config's thresholds."""
        self._config = config
        self.health = health or ModelHealth(
            config.failing_questions, config.probe_interval_s, config.probe_questions
        )
        self._fallback = fallback
        self._main = build_chat_model(config, "main")
        self._router = build_chat_model(config, "router") if config.router_model else self._main
        self._calls = StructuredCalls(
            config, self._main, self._router, backoff_s=backoff_s, max_wait_s=max_wait_s,
            sleep=sleep,
        )  # fmt: skip
        self._backoff_s = backoff_s
        self._max_wait_s = max_wait_s
        self._sleep = sleep
        self._circuit = Circuit(circuit_cooldown_s)
        self._max_answer_chars = max_answer_chars
        self._max_stream_s = max_stream_s  # a streamed answer's limit when no deadline is set
        secret = config.api_key or ""
        self._secret = secret if len(secret) >= 4 else ""

    @property
    def fallback(self) -> Reasoner:
        """The offline reasoner that stands in for a failed step."""
        return self._fallback

    @property
    def structured_method(self) -> str | None:
        """The structured-output method in use (None until auto mode has found one)."""
        return self._calls.method

    # ------------------------------------------------------------------ steps
    def route(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> tuple[RouteDecision, Usage]:
        user = P.ROUTE_USER.format(
            data_rule=P.DATA_RULE,
            conversation=P.render_conversation(history),
            question=P.question_text(question),
        )

        def check(result: RouteDecision) -> RouteDecision:
            if not result.standalone_question.strip():
                result.standalone_question = question
            return result

        return self._step(
            "route",
            RouteDecision,
            P.ROUTE_SYSTEM,
            user,
            check,
            lambda: self._fallback.route(question, history),
            lambda: RouteDecision(standalone_question=question, route="complex", reason="fallback"),
            role="router",
        )

    def decompose(
        self,
        question: str,
        phrases: PhraseLookup | None = None,
        documents_language: str | None = None,
    ) -> tuple[Decomposition, Usage]:
        user = P.DECOMPOSE_USER.format(
            data_rule=P.DATA_RULE,
            question=P.question_text(question),
            documents_rule=P.documents_rule(question, documents_language),
        )
        return self._step(
            "decompose",
            Decomposition,
            P.DECOMPOSE_SYSTEM,
            user,
            partial(check_decomposition, question=question),
            lambda: self._fallback.decompose(question, phrases, documents_language),
            lambda: Decomposition(sub_questions=[SubQuestion(id=1, question=question)]),
        )

    def bridge(
        self, sub_question: str, earlier: Sequence[HopView], evidence: Sequence[EvidenceItem]
    ) -> tuple[str, Usage]:
        user = P.BRIDGE_USER.format(
            data_rule=P.DATA_RULE,
            sub_question=P.render_text("Dependent sub-question", "SUBQUESTION", sub_question),
            earlier=P.render_hops(earlier),
            evidence=P.render_evidence(evidence, compact=True),
        )

        entities: list[str] = []

        said = " ".join(f"{e.title} {e.text}" for e in evidence).casefold()
        asked = tx.PLACEHOLDER_RE.sub(" ", sub_question)

        def check(result: BridgeQuery) -> str | None:
            query = result.query.strip()
            entity = result.entity.strip()
            if entity and entity.casefold() not in said:
                return None  # not found by the earlier step: the offline bridge reads it
            if entity and P.has_placeholder(query):
                query = tx.PLACEHOLDER_RE.sub(lambda _: entity, query)
            kept = query.casefold()
            if query and any(a.casefold() not in kept for a in anchors_of(asked)):
                # the rewrite lost a code, number or name the sub-question gives: the search
                # is the sub-question itself with the entity in place
                query = filled_in(sub_question, entity)
            if query and entity:
                entities.append(entity)
            return query or None

        query, usage = self._step(
            "bridge",
            BridgeQuery,
            P.BRIDGE_SYSTEM,
            user,
            check,
            lambda: self._fallback.bridge(sub_question, earlier, evidence),
            lambda: sub_question,
        )
        if entities and usage.mode == "llm":
            usage.details = {"chosen_entity": entities[-1]}
        return query, usage

    def extract(
        self, sub_question: str, hits: Sequence[Hit]
    ) -> tuple[list[EvidenceSentence], Usage]:
        if not hits:
            return [], Usage(mode="llm")
        user = P.EXTRACT_USER.format(
            data_rule=P.DATA_RULE,
            sub_question=P.render_text("Sub-question", "SUBQUESTION", sub_question),
            chunks=P.render_chunks(hits),
        )
        texts = {h.chunk_id: squashed(h.text) for h in hits}

        def check(result: ExtractedEvidence) -> list[EvidenceSentence] | None:
            kept = [
                s
                for s in result.sentences
                if s.chunk_id in texts
                and squashed(s.text)
                and squashed(s.text) in texts[s.chunk_id]
            ]
            return kept if kept or not result.sentences else None  # paraphrases only: refuse

        return self._step(
            "extract",
            ExtractedEvidence,
            P.EXTRACT_SYSTEM,
            user,
            check,
            lambda: self._fallback.extract(sub_question, hits),
            list,
        )

    def plan(
        self,
        question: str,
        remaining: Sequence[str],
        hops: Sequence[HopView],
        evidence: Sequence[EvidenceItem],
    ) -> tuple[PlanDecision, Usage]:
        user = P.PLAN_USER.format(
            data_rule=P.DATA_RULE,
            question=P.question_text(question),
            remaining=P.render_list("Planned sub-questions not yet searched", "PLANNED", remaining),
            hops=P.render_hops(hops),
            evidence=P.render_evidence(evidence, compact=True),
        )

        def check(result: PlanDecision) -> PlanDecision:
            if result.follow_up is not None and not result.follow_up.strip():
                result.follow_up = None
            return result

        return self._step(
            "plan",
            PlanDecision,
            P.PLAN_SYSTEM,
            user,
            check,
            lambda: self._fallback.plan(question, remaining, hops, evidence),
            lambda: PlanDecision(action="evaluate", reason="fallback"),
        )

    def evaluate(
        self, question: str, evidence: Sequence[EvidenceItem], hops: Sequence[HopView] = ()
    ) -> tuple[EvidenceVerdict, Usage]:
        user = P.EVALUATE_USER.format(
            data_rule=P.DATA_RULE,
            question=P.question_text(question),
            evidence=P.render_evidence(evidence, compact=True),
        )

        def check(result: EvidenceVerdict) -> EvidenceVerdict:
            if result.enough:
                result.missing, result.web_query = [], None
            elif result.web_query is not None and not result.web_query.strip():
                result.web_query = None
            return result

        return self._step(
            "evaluate",
            EvidenceVerdict,
            P.EVALUATE_SYSTEM,
            user,
            check,
            lambda: self._fallback.evaluate(question, evidence, hops),
            lambda: EvidenceVerdict(enough=False, missing=[], web_query=None),
        )

    def answer(
        self,
        question: str,
        evidence: Sequence[EvidenceItem],
        missing: Sequence[str],
        hops: Sequence[HopView] = (),
    ) -> Iterator[str | Usage]:
        user = P.ANSWER_USER.format(
            data_rule=P.DATA_RULE,
            language_rule=P.language_rule(question),
            missing=P.render_list("Facts the evidence check found missing", "MISSING", missing)
            if missing
            else "",
            evidence=P.render_evidence(evidence, compact=False),
            question=P.question_text(question),
        )
        messages = [SystemMessage(P.ANSWER_SYSTEM), HumanMessage(user)]
        yield from self._stream(
            "answer",
            messages,
            question,
            lambda: self._fallback.answer(question, evidence, missing, hops),
        )

    def answer_directly(
        self, question: str, history: Sequence[dict[str, str]]
    ) -> Iterator[str | Usage]:
        user = P.ANSWER_DIRECTLY_USER.format(
            data_rule=P.DATA_RULE,
            language_rule=P.language_rule(question),
            conversation=P.render_conversation(history),
            question=P.question_text(question),
        )
        messages = [SystemMessage(P.ANSWER_DIRECTLY_SYSTEM), HumanMessage(user)]
        yield from self._stream(
            "answer_directly",
            messages,
            question,
            lambda: self._fallback.answer_directly(question, history),
        )

    # ------------------------------------------------------------------ structured calls
    def _step(
        self,
        step: str,
        schema: type[M],
        system: str,
        user: str,
        check: Callable[[M], T | None],
        fallback: Callable[[], tuple[T, Usage]],
        default: Callable[[], T],
        role: Role = "main",
    ) -> tuple[T, Usage]:
        """One structured step: the model if it can, else the offline reasoner, never a raise.
        At most STEP_ATTEMPTS model replies (one while probing a bypassed model); a step that
        fails sends the question's later structured steps offline (graph.llm_health)."""
        usage = Usage(mode="llm")
        watch = current_watch()
        if watch is not None and (skipped := watch.skip_reason(structured=True)):
            return self._fall_back(step, usage, skipped, fallback, default, quiet=watch.quiet)
        if skipped := self._circuit_open():
            return self._fall_back(step, usage, skipped, fallback, default)
        # more retries (HOPWISE_LLM_MAX_RETRIES) or a repair (HOPWISE_LLM_REPAIR) are asked for
        retries = max(STEP_ATTEMPTS - 1, self._config.max_retries)
        most = 1 + retries + (1 if self._config.repair else 0)
        attempts = [1 if watch is not None and watch.probing else most]
        try:
            result, method = self._calls.call(schema, system, user, check, usage, role, attempts)
            usage.method = method
            self._record_outcome(None, "")
            if watch is not None:
                watch.succeeded()
            return result, usage
        except StepFailure as failure:
            kind, reason = failure.kind, failure.reason
        except Exception as exc:  # noqa: BLE001 - a reasoner method must never raise
            kind, reason = classify_error(exc)[:2]
        reason = self._scrub(reason)
        self._record_outcome(kind, reason)
        if watch is not None:
            watch.failed(step, reason, structured=True)
        quiet = watch is not None and watch.quiet  # a failed probe stays quiet
        return self._fall_back(step, usage, reason, fallback, default, quiet=quiet)

    def _circuit_open(self) -> str | None:
        return self._circuit.skip_reason()

    def _record_outcome(self, kind: str | None, reason: str) -> None:
        self._circuit.record(kind, reason)

    def _fall_back(
        self,
        step: str,
        usage: Usage,
        reason: str,
        fallback: Callable[[], tuple[T, Usage]],
        default: Callable[[], T],
        *,
        quiet: bool = False,
    ) -> tuple[T, Usage]:
        """`quiet`: the model is bypassed, so the step is marked `bypassed` (the answer says so
        once, not at every step of every question)."""
        if not quiet:
            logger.warning("LLM step %s fell back to offline reasoning: %s", step, reason)
        usage.mode, usage.method, usage.error = "bypassed" if quiet else "fallback", None, reason
        try:
            result, stood_in = fallback()
            usage.details = stood_in.details  # what offline reasoning decided, for the trace
        except Exception as exc:  # noqa: BLE001 - the offline stand-in failing must not crash
            logger.warning("offline %s failed too: %s", step, type(exc).__name__)
            result = default()
        return result, usage

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text

    # ------------------------------------------------------------------ streaming
    def _stream(
        self,
        step: str,
        messages: list[BaseMessage],
        question: str,
        fallback: Callable[[], Iterator[str | Usage]],
    ) -> Iterator[str | Usage]:
        """Stream tokens; on failure before any token retry, after some tokens finish offline.
        A bypassed model is not asked; a probe is one try."""
        usage = Usage(mode="llm")
        watch = current_watch()
        probing = watch is not None and watch.probing
        retries_left = 0 if probing else max(0, self._config.max_retries)
        empty_retry = not probing
        emitted = False
        skipped = watch.skip_reason(structured=False) if watch is not None else None
        quiet = skipped is not None
        skipped = skipped or self._circuit_open()
        reason, kind = skipped or "", ""
        attempt = 0
        while not skipped:
            attempt += 1
            usage.llm_calls += 1
            kind, retry_after = "", None
            think = ThinkFilter()
            sent = 0
            so_far, checked_at = "", 0
            until = stop_at(self._max_stream_s)
            if until <= time.monotonic():
                kind, reason = "late", "the question's deadline had passed"
                break
            try:
                stream = partial(self._main.stream, messages, stream_usage=True)
                for chunk in iterate_bounded(stream, until):
                    add_tokens(usage, chunk)
                    text = think.feed(chunk.text)[: self._max_answer_chars - sent]
                    so_far += text
                    if len(so_far) - checked_at >= RUNAWAY_CHECK_CHARS or "<" in text:
                        checked_at = len(so_far)
                        if why := runaway(so_far):
                            raise RunawayReply(why)
                    if text:
                        emitted = True
                        sent += len(text)
                        yield text
                    if sent >= self._max_answer_chars:
                        yield " …"
                        break  # closing the stream ends the request: a runaway reply stops here
                tail = think.flush()
                if why := runaway(so_far + tail):
                    raise RunawayReply(why)
                if tail:
                    emitted = True
                    yield tail
                if emitted:
                    self._record_outcome(None, "")
                    if watch is not None:
                        watch.succeeded()
                    yield usage
                    return
                kind, reason = "malformed", "empty reply"
            except RunawayReply as exc:
                kind, reason = "runaway", str(exc)
                if emitted:  # what came so far is withdrawn, not finished (stream_answer)
                    yield Usage(mode="fallback", error=reason, details={"retract": True})
                    emitted = False
                break
            except WallClockTimeout:
                kind, reason = "deadline", "the answer did not finish before the deadline"
            except Exception as exc:  # noqa: BLE001 - classified below
                kind, reason, retry_after = classify_error(exc)
            if emitted:
                break
            if worth_retrying(kind, reason) and retries_left > 0:
                retries_left -= 1
                self._sleep(backoff(attempt, retry_after, self._backoff_s, self._max_wait_s))
                continue
            if kind == "malformed" and empty_retry:
                empty_retry = False
                continue
            break
        if not skipped:
            self._record_outcome(kind, reason)
            if watch is not None:
                watch.failed(step, self._scrub(reason), structured=False)
                quiet = watch.quiet  # a failed probe stays quiet
        reason = self._scrub(f"stream interrupted ({reason})" if emitted else reason)
        if not quiet:
            logger.warning("LLM step %s fell back to offline reasoning: %s", step, reason)
        if emitted:
            yield (
                P.STREAM_BROKEN_ZH
                if P.language_rule(question) == P.LANGUAGE_ZH
                else P.STREAM_BROKEN
            )
        try:
            for piece in fallback():
                if isinstance(piece, str):
                    yield piece
        except Exception as exc:  # noqa: BLE001 - the offline stand-in failing must not crash
            logger.warning("offline %s failed too: %s", step, type(exc).__name__)
        usage.mode, usage.method, usage.error = "bypassed" if quiet else "fallback", None, reason
        yield usage
