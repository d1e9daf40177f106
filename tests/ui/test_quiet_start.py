"""A one-person install starts quietly (issue 46, item 7): no "missing ScriptRunContext"
warning from the warm-up thread, no line about being the embedding worker; that line is said,
in plain words, only where there are several replicas."""

from __future__ import annotations

import logging
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from hopwise.app import WorkerElection
from hopwise.database import SqliteDatabase
from ui.services import quiet_own_threads


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def records_of(name: str, call: object) -> list[logging.LogRecord]:
    """The records `name`'s logger emits while `call()` runs, whatever the handlers around."""
    log, collect = logging.getLogger(name), Collect()
    level = log.level
    log.addHandler(collect)
    log.setLevel(logging.DEBUG)
    try:
        call()  # type: ignore[operator]
    finally:
        log.removeHandler(collect)
        log.setLevel(level)
    return collect.records


def warnings_from_thread(name: str) -> list[str]:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    def in_thread() -> None:
        worker = threading.Thread(target=get_script_run_ctx, name=name)
        worker.start()
        worker.join()

    logger = "streamlit.runtime.scriptrunner_utils.script_run_context"
    return [r.getMessage() for r in records_of(logger, in_thread)]


def test_hopwise_threads_do_not_warn_about_a_missing_script_context() -> None:
    quiet_own_threads()
    quiet_own_threads()  # once is enough: a second call adds nothing
    assert warnings_from_thread("hopwise-warm-up") == []
    other = warnings_from_thread("someone-elses-thread")  # not hidden for anyone else
    assert other and "missing ScriptRunContext" in other[0]


@pytest.mark.parametrize(("replicas", "level"), [(False, logging.DEBUG), (True, logging.INFO)])
def test_the_embedding_worker_says_so_only_among_replicas(
    tmp_path: Path, replicas: bool, level: int
) -> None:
    election = WorkerElection(SqliteDatabase(tmp_path / "c.sqlite"), replicas=replicas)
    try:
        records = records_of("hopwise.app", election)
    finally:
        election.release()
    said = [r for r in records if "search vectors" in r.getMessage()]
    assert [r.levelno for r in said] == [level]


@pytest.mark.slow
def test_a_default_start_logs_neither(tmp_path: Path) -> None:
    """`streamlit run ui/app.py` with nothing configured, a page opened and the knowledge base
    opened by the warm-up thread: the console holds neither line."""
    from tests.ui.test_browser import running_app

    data = tmp_path / "data"
    with running_app(data) as url:
        urllib.request.urlopen(url, timeout=10).read()
        deadline = time.monotonic() + 60  # the warm-up opens the store, then its worker runs
        while time.monotonic() < deadline and not list(data.glob("locks/*.lock")):
            time.sleep(0.5)
        time.sleep(2)
    log = (data.parent / "streamlit.log").read_text(encoding="utf-8")
    assert list(data.glob("locks/*.lock")), log  # the worker was elected: the line had its chance
    assert "ScriptRunContext" not in log
    assert "embedding worker" not in log and "search vectors" not in log
