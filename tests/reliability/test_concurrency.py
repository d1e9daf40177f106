"""8 concurrent question threads (Hopwise.ask, offline) on one runner, as Streamlit serves its
sessions, while an ingest keeps replacing a document in the same embedded store: no errors,
and every answer cites only chunks that exist at the end or existed in some version."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from graph.offline import OfflineReasoner
from hopwise.app import Hopwise, open_checkpointer, open_store
from hopwise.settings import load_settings
from ingest.pipeline import ingest_bytes

BASE = {
    "turbines.md": "# Turbines\n\nThe T-200 turbine is made by Northwind Ltd in Aarhus.\n\n"
    "## Warranty\nThe T-200 warranty lasts two years from delivery.\n",
    "northwind.md": "# Northwind Ltd\n\nNorthwind Ltd was founded in 1987 by Ida Berg.\n\n"
    "## Offices\nIts head office is in Aarhus, Denmark.\n",
    "维护.md": "# 维护手册\n\nT-200 涡轮机每六个月检查一次。\n\n检查由北风公司的工程师完成。\n",
}
QUESTIONS = [
    "Who founded the company that makes the T-200 turbine?",
    "How long is the T-200 warranty?",
    "What is the current T-200 inspection interval in the rolling notice?",
    "T-200 涡轮机多久检查一次？",
    "Where is the head office of the T-200 maker?",
    "What does the rolling notice say about the T-200?",
]


def rolling(version: int) -> bytes:
    body = "\n\n".join(
        f"Rolling notice {version}.{i}: the T-200 inspection interval is {version + i} months "
        f"and the turbine notice edition is {version}."
        for i in range(30)
    )
    return f"# Rolling notice\n\n{body}\n".encode()


def run_load(tmp_path: Path, per_thread: int, versions: int) -> dict[str, float]:
    settings = load_settings(data_dir=tmp_path / "data", web_search=False)
    store = open_store(settings)
    app = Hopwise(
        settings, store, OfflineReasoner(), None, open_checkpointer(settings.checkpoint_path)
    )
    written: set[str] = set()
    lock = threading.Lock()

    def ingest(name: str, data: bytes) -> None:
        result = ingest_bytes(data, name, store, groups=["all"], config=settings.ingest)
        assert result.status == "ingested", result.reason
        ids = {c.chunk_id for c in store.get_chunks(str(result.doc_id))}
        with lock:
            written.update(ids)

    try:
        for name, text in BASE.items():
            ingest(name, text.encode())
        ingest("rolling.md", rolling(1))
        done = threading.Event()

        def writer() -> int:
            version = 1
            while version < versions or not done.is_set():
                version += 1
                ingest("rolling.md", rolling(version))
                if version >= versions * 4:  # questions are slow today; stop anyway
                    break
            return version

        def asker(worker: int) -> list[dict]:
            results = []
            for i in range(per_thread):
                question = QUESTIONS[(worker + i) % len(QUESTIONS)]
                results.append(app.ask(question, thread_id=f"load-{worker}", web=False))
            return results

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=9) as pool:
            ingest_job = pool.submit(writer)
            jobs = [pool.submit(asker, w) for w in range(8)]
            results = [r for job in jobs for r in job.result()]  # re-raises any error
            elapsed = time.monotonic() - started
            done.set()
            last_version = ingest_job.result()
        final = {c.chunk_id for doc in store.list_documents() for c in store.get_chunks(doc.doc_id)}
    finally:
        app.close()

    assert len(results) == 8 * per_thread and last_version >= versions
    cited_rolling = 0
    for result in results:
        assert result.answer and result.stop_reason, result
        for item in result.citations + result.evidence:
            if item.chunk_id:
                assert item.chunk_id in written | final, item
                cited_rolling += "rolling" in str(item.source)
    assert cited_rolling, "no answer used the document being replaced"
    assert final <= written
    rate = len(results) / elapsed
    print(f"concurrency: {len(results)} questions on 8 threads in {elapsed:.2f}s "
          f"({rate:.1f} questions/s) while {last_version - 1} new versions were ingested")  # fmt: skip
    return {"questions": len(results), "seconds": elapsed, "rate": rate}


def test_eight_askers_and_an_ingest(tmp_path: Path) -> None:
    stats = run_load(tmp_path, per_thread=3, versions=4)
    assert stats["rate"] > 0.5  # loose floor: a lock held too long would show here


@pytest.mark.slow
def test_eight_askers_and_an_ingest_longer(tmp_path: Path) -> None:
    stats = run_load(tmp_path, per_thread=15, versions=12)
    assert stats["rate"] > 0.5
