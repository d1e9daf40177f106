"""`hopwise worker`: the embedding worker as a process of its own, for deployments that keep it
apart from the web replicas (docs/deployment.md). It runs the app's background loop: it waits
for the deployment's worker lease (one holder across every replica and worker), then fills the
vectors the knowledge base lacks, and looks again every --idle-s seconds.

Run the web replicas with HOPWISE_EMBEDDING_WORKER=off to leave the role to this process.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any


def register(subparsers: Any) -> None:
    worker = subparsers.add_parser(
        "worker", help="fill missing vectors in the background (one per deployment is elected)"
    )
    worker.add_argument(
        "--once", action="store_true",
        help="one pass (when elected), then exit: 0 when every chunk has a vector",
    )  # fmt: skip
    worker.add_argument(
        "--idle-s", dest="idle_s", type=float, default=30.0,
        help="seconds between passes and between tries for the lease (default 30)",
    )  # fmt: skip
    worker.add_argument("--json", action="store_true", help="print a JSON line per pass")
    worker.set_defaults(handler=run_worker)


def run_worker(args: Any) -> int:
    from hopwise.app import WorkerElection, log_embedded, open_store
    from hopwise.database import Database, PostgresDatabase, SqliteDatabase
    from hopwise.settings import load_settings
    from ingest.vectors import EmbeddingWorker

    settings = load_settings()
    store = open_store(settings)
    db: Database = (
        PostgresDatabase(settings.database_url, what="the worker lease", pool_size=2)
        if settings.database_url
        else SqliteDatabase(settings.checkpoint_path, what="the worker lease")
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    election = WorkerElection(db, replicas=bool(settings.database_url) or not settings.is_embedded)
    try:
        if store.vectors is None:
            reason = store.embedding_problem or (
                "embeddings are off or written inline by an endpoint (HOPWISE_EMBEDDINGS)"
            )
            print(f"hopwise: error: no background embeddings to fill: {reason}", file=sys.stderr)
            return 1
        worker = EmbeddingWorker(store.vectors, idle_s=args.idle_s)

        def progress(doc_id: str, added: int) -> None:
            log_embedded(doc_id, added)
            if added and not args.json:
                print(f"embedded  {doc_id}  ({added})", file=sys.stderr, flush=True)

        while not stop.is_set():
            elected = election()
            added = worker.run_once(on_document=progress) if elected else 0
            coverage = store.vectors.coverage()
            line = {
                "elected": elected, "embedded": added, "with_vectors": coverage.embedded,
                "chunks": coverage.total, "complete": coverage.complete, "error": worker.error,
            }  # fmt: skip
            if args.json:
                print(json.dumps(line), flush=True)
            elif not elected:
                print("hopwise: another process is the embedding worker; waiting", file=sys.stderr)
            if args.once:
                return 0 if coverage.complete else 2
            stop.wait(args.idle_s)
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        election.release()
        db.close()
        store.close()
