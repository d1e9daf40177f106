"""Reading checks kept beside the conversations (SQLite or PostgreSQL), run in the background
after an upload, and the deployment's threshold chosen on them.

A document is checked once per version: after an upload (the admin's new or replaced
documents), and at start for every document without a current check (a restart resumes what
was left). The checker waits until the knowledge base's vectors are in (bounded), yields to
questions before each of its own (the store's busy signal), runs at a lower priority, and
stops a document's questions at its time budget. Nothing of it is saved in a thread, shown
in a chat or searchable: the questions go through the graph with no history and nothing
saved, and the results sit in an admin-only table that a document's deletion clears.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from hopwise.database import Lease, Step, StoreUnavailable
from hopwise.selfcheck.calibration import Calibration, bounds, calibrate
from hopwise.selfcheck.check import DocumentCheck, check_document
from hopwise.state import Tables
from ingest.busy import lower_thread_priority
from ingest.models import DocumentInfo

if TYPE_CHECKING:
    from graph.offline.model import ReaderModel
    from graph.offline.reading import Reading
    from graph.protocols import Reasoner, Retriever, Similarity
    from graph.result import QuestionResult
    from hopwise.database import Database
    from hopwise.settings import Settings
    from ingest.models import Chunk

logger = logging.getLogger(__name__)

SELFCHECK_STEPS: list[Step] = [
    "CREATE TABLE IF NOT EXISTS hopwise_selfcheck (doc_id TEXT PRIMARY KEY, version INTEGER, "
    "checksum TEXT, checked_at DOUBLE PRECISION, report TEXT NOT NULL)"
]
VECTORS_WAIT_S = 600.0  # the longest a check waits for the knowledge base's vectors
POLL_S = 2.0
SWEEP_LEASE = "hopwise-selfcheck"
LANGUAGE_CHUNKS = 3  # a document's first chunks tell its language
STALLED_S = 30.0  # no vector added for this long: check with what there is


class SelfCheckLog(Tables):
    """One reading check per document (its latest)."""

    component = "selfcheck"
    steps = SELFCHECK_STEPS

    def put(self, check: DocumentCheck) -> None:
        with self.transaction() as cur:
            cur.execute(
                "INSERT INTO hopwise_selfcheck (doc_id, version, checksum, checked_at, report) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (doc_id) DO UPDATE SET version = "
                "excluded.version, checksum = excluded.checksum, checked_at = "
                "excluded.checked_at, report = excluded.report",
                (check.doc_id, check.version, check.checksum, check.checked_at,
                 json.dumps(check.as_json(), ensure_ascii=False)),
            )  # fmt: skip

    def all(self) -> dict[str, DocumentCheck]:
        rows = self.fetch("SELECT doc_id, report FROM hopwise_selfcheck")
        return {str(doc_id): DocumentCheck.of(json.loads(report)) for doc_id, report in rows}

    def delete(self, doc_id: str) -> None:
        with self.transaction() as cur:
            cur.execute("DELETE FROM hopwise_selfcheck WHERE doc_id = ?", (doc_id,))


class CheckedApp(Protocol):
    """What the reading checks use of the application (hopwise.app.Hopwise is one): its
    documents, its offline reader and where the checks are kept."""

    settings: Settings
    database: Database
    retriever: Retriever
    similarity: Similarity | None

    def list_documents(self) -> list[DocumentInfo]: ...

    def get_document(self, doc_id: str) -> DocumentInfo | None: ...

    def document_chunks(self, doc: DocumentInfo) -> list[Chunk]: ...

    def kb_stats(self) -> dict[str, Any]: ...

    def try_offline(
        self, question: str, groups: Sequence[str], reasoner: Reasoner | None = None
    ) -> QuestionResult: ...

    def use_reader_threshold(self, threshold: float) -> None: ...


def current(check: DocumentCheck | None, doc: DocumentInfo) -> bool:
    return check is not None and check.version == doc.version and check.checksum == doc.checksum


class SelfChecker:
    """The deployment's reading checks: run, kept, shown, and turned into its threshold."""

    def __init__(self, app: CheckedApp) -> None:
        self.app = app
        self.log = SelfCheckLog(app.database)
        self.limit = app.settings.selfcheck_questions
        self.budget_s = app.settings.selfcheck_budget_s
        self.calibration: Calibration | None = None
        self.model: ReaderModel | None = None  # the fitted reader checked (None: the shipped one)
        self._queue: list[str] = []
        self._running: str | None = None
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._languages: dict[tuple[str, int], str] = {}  # of documents not checked yet
        self._lease: Lease | None = None  # held by the process that checks what was left

    # ---- what an admin reads

    def checks(self) -> dict[str, DocumentCheck]:
        """The current check of every document that has one ({} when the store is out)."""
        try:
            saved = self.log.all()
        except StoreUnavailable:
            return {}
        docs = {d.doc_id: d for d in self.app.list_documents()}
        for gone in saved.keys() - docs.keys():  # deleted elsewhere (the CLI): its check goes
            with contextlib.suppress(StoreUnavailable):
                self.log.delete(gone)
        return {i: c for i, c in saved.items() if i in docs and current(c, docs[i])}

    @property
    def running(self) -> str | None:
        """The document being checked now (None: none)."""
        with self._changed:
            return self._running

    def pending(self) -> list[str]:
        """Documents waiting for their check, the one being checked first."""
        with self._changed:
            return ([self._running] if self._running else []) + list(self._queue)

    # ---- running checks

    def check(
        self, doc: DocumentInfo, before_each: Callable[[], None] | None = None
    ) -> DocumentCheck:
        """Check one document now (this thread), save it, and choose the threshold again."""
        from graph.offline import OfflineReasoner
        from graph.offline.model import load_model

        model = self.model or load_model()  # fitted thresholds: not the last calibration
        groups = self.admin_groups()
        reader = OfflineReasoner(similarity=self.app.similarity, model=model)  # this check's own

        def ask(question: str) -> tuple[Any, Reading | None]:
            reader.readings = []  # the reading behind this question's first line
            result = self.app.try_offline(question, groups, reasoner=reader)
            return result, reader.readings[-1] if reader.readings else None

        chunks = self.app.document_chunks(doc)
        found = check_document(doc, chunks, ask, limit=self.limit, budget_s=self.budget_s,
                               before_each=before_each,
                               other_languages=lambda: self.languages(besides=doc.doc_id))  # fmt: skip
        latest = self.app.get_document(doc.doc_id)
        if latest is not None and latest.version == doc.version:  # not deleted or replaced
            self.log.put(found)
        self.recalibrate()
        return found

    def languages(self, besides: str = "") -> set[str]:
        """The languages of the deployment's documents but `besides`: from their checks, or
        read once from their first chunks."""
        from ingest.lang import language_of

        saved = self.checks()
        out = set()
        for doc in self.app.list_documents():
            if doc.doc_id == besides:
                continue
            check = saved.get(doc.doc_id)
            if check is not None and check.lang:
                out.add(check.lang)
                continue
            key = (doc.doc_id, doc.version)
            if key not in self._languages:
                text = " ".join(c.text for c in self.app.document_chunks(doc)[:LANGUAGE_CHUNKS])
                self._languages[key] = language_of(text)
            out.add(self._languages[key])
        return out - {""}

    def admin_groups(self) -> list[str]:
        """Every group a document names, and `all`: what an admin reads."""
        return sorted({g for d in self.app.list_documents() for g in d.groups} | {"all"})

    def outdated(self) -> list[DocumentInfo]:
        """Documents without a check of their current version."""
        try:
            saved = self.log.all()
        except StoreUnavailable:
            return []
        return [d for d in self.app.list_documents() if not current(saved.get(d.doc_id), d)]

    def forget(self, doc_id: str) -> None:
        """A deleted document's check goes with it."""
        with self._changed:
            if doc_id in self._queue:
                self._queue.remove(doc_id)
        try:
            self.log.delete(doc_id)
            self.recalibrate()
        except Exception:  # noqa: BLE001 - the next read of the checks removes it
            logger.warning("The reading check of %s could not be removed now", doc_id)

    def recalibrate(self) -> Calibration:
        """Choose the threshold on every current check and hand it to the reader."""
        from graph.offline.model import load_model

        pairs = [(o.stated_prob, o.span_right) for c in self.checks().values()
                 for o in c.outcomes if o.stated_prob > 0]  # fmt: skip
        shipped, floor = bounds(self.model or load_model())
        self.calibration = calibrate(pairs, shipped, floor)
        self.app.use_reader_threshold(self.calibration.threshold)
        return self.calibration

    # ---- in the background

    def enqueue(self, doc_ids: Sequence[str]) -> None:
        with self._changed:
            for doc_id in doc_ids:
                if doc_id not in self._queue and doc_id != self._running:
                    self._queue.append(doc_id)
            self._changed.notify_all()

    def start(self) -> None:
        """Check, in a background thread, every document without a current check, then each
        upload's documents as they come."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="hopwise-selfcheck", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def sweeps(self) -> bool:
        """Whether this process checks the documents left without a check: one process per
        deployment (the lease SWEEP_LEASE); every process checks the uploads it receives."""
        db = self.app.database
        if str(getattr(db, "path", "")) == ":memory:":
            return True  # nobody to share with
        try:
            self._lease = db.try_lease(SWEEP_LEASE)
        except (StoreUnavailable, OSError):
            return False
        return self._lease is not None

    def _run(self) -> None:
        lower_thread_priority()
        try:
            if self.sweeps():
                self.enqueue([d.doc_id for d in self.outdated()])
        except Exception:  # noqa: BLE001 - a store that is out now: checks come with uploads
            logger.info("Reading checks wait for the next upload (the store was not readable)")
        while not self._stop.is_set():
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._stop.is_set())
                if self._stop.is_set():
                    return
                self._running = self._queue.pop(0)
            try:
                self._check_one(self._running)
            except Exception:  # noqa: BLE001 - one document's check never stops the others
                logger.warning("The reading check of %s failed", self._running, exc_info=True)
            finally:
                with self._changed:
                    self._running = None

    def _check_one(self, doc_id: str) -> None:
        self._wait_for_vectors()
        doc = self.app.get_document(doc_id)
        if doc is None or self._stop.is_set():
            return
        busy = getattr(self.app.retriever, "busy", None)
        self.check(doc, before_each=busy.wait_idle if busy is not None else None)

    def _wait_for_vectors(self) -> None:
        """Until the knowledge base's vectors are in (a check reads as questions will): at
        most VECTORS_WAIT_S, and no longer than STALLED_S without progress (no process is
        embedding them now)."""
        deadline = time.monotonic() + VECTORS_WAIT_S
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline and not self._stop.is_set():
            try:
                stats = self.app.kb_stats()
            except Exception:  # noqa: BLE001 - checked below as it is
                return
            if stats.get("embedding_complete", True) or self.app.settings.embedding_worker == "off":
                return
            done = int(stats.get("embedded_chunks") or 0)
            if done != last:
                last, since = done, time.monotonic()
            elif time.monotonic() - since > STALLED_S:
                return
            self._stop.wait(POLL_S)
