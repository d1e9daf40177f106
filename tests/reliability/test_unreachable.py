"""Milvus server unreachable: the CLI says so in one line and quickly; the chat and admin pages
show st.error and keep running; when the server is back the next request works, with no app
restart (the store drops a broken client and opens a fresh one on the next call)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st

from ingest.models import Chunk
from ingest.store import MilvusStore
from tests.ingest.conftest import free_port
from tests.reliability.conftest import ROOT, cli_env, server_on
from tests.ui.apptools import ADMIN_PASSWORD, assert_no_exception, new_app

TIMEOUT_S = "1"
HOLD_LOCK = (  # exactly as a running Milvus Lite engine holds its database
    "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.lockf(f, fcntl.LOCK_EX)\n"
    "print('locked', flush=True)\ntime.sleep(60)\n"
)
COMMANDS = {
    "search": ["search", "warranty"],
    "ingest": ["ingest", "{doc}"],
    "docs list": ["docs", "list"],
    "ask": ["ask", "How long is the warranty?", "--no-web"],
}


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_cli_commands_fail_fast_with_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "warranty.md"
    doc.write_text("# Warranty\n\nThe warranty lasts two years.\n")
    env = cli_env(
        tmp_path / "data", HOPWISE_MILVUS_URI=f"http://127.0.0.1:{free_port()}",
        HOPWISE_MILVUS_TIMEOUT_S=TIMEOUT_S, HOPWISE_MILVUS_TOKEN="root:Milvus",
    )  # fmt: skip
    env.pop("PYTHONWARNINGS")  # an import warning would be a second line too
    locked = tmp_path / "locked"
    locked.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(locked / ".milvus.db.lock")], stdout=subprocess.PIPE
    )
    jobs = {name: (env, args) for name, args in COMMANDS.items()}
    embedded = {k: v for k, v in env.items() if k != "HOPWISE_MILVUS_URI"}
    jobs["locked"] = ({**embedded, "HOPWISE_DATA_DIR": str(locked)}, ["docs", "list"])
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        started = time.monotonic()
        procs = {
            name: subprocess.Popen(
                [sys.executable, "-m", "hopwise", *[a.format(doc=doc) for a in args]],
                env=run_env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for name, (run_env, args) in jobs.items()
        }
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=60)
            lines = err.strip().splitlines()
            assert proc.returncode == 1, (name, out, err)
            assert len(lines) == 1 and "Traceback" not in err, (name, err)
            assert lines[0].startswith("hopwise: error:"), lines
            if name == "locked":
                assert "open in another process" in lines[0]
                continue
            assert "Milvus server" in lines[0] and "127.0.0.1" in lines[0], lines
            assert "root:Milvus" not in err + out
        # each waits for one connect timeout, in parallel; no 75-retry loop of minutes
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()


class Server:
    """A Milvus Lite server that can go down and come back on the same port."""

    def __init__(self, db: Path) -> None:
        self.db, self.port = db, free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.current = None

    def start(self) -> None:
        self.current = server_on(self.db, self.port)
        self.current.start()

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "server.db")
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def app_env(server: Server, tmp_path: Path) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith("HOPWISE_"):
                mp.delenv(key, raising=False)
        mp.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
        mp.setenv("HOPWISE_WEB_SEARCH", "off")
        mp.setenv("HOPWISE_MILVUS_URI", server.uri)
        mp.setenv("HOPWISE_MILVUS_TIMEOUT_S", TIMEOUT_S)
        mp.setenv("HOPWISE_ADMIN_PASSWORD", ADMIN_PASSWORD)
        mp.chdir(tmp_path)
        st.cache_resource.clear()
        try:
            yield
        finally:
            st.cache_resource.clear()


def errors(at) -> str:
    return "\n".join(str(e.value) for e in at.error)


def answer(at) -> str:
    assistant = [m for m in at.chat_message if m.name == "assistant"][-1]
    return "\n".join(str(m.value) for m in assistant.markdown)


def ask(at, question: str = "How long is the turbine warranty?"):
    at.chat_input[0].set_value(question).run()
    assert_no_exception(at)
    return at


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_pages_show_the_outage_and_recover_without_a_restart(server: Server, app_env: None) -> None:
    # 1. the server is down when the app starts: a message, no stack trace
    at = new_app().run()
    assert_no_exception(at)
    assert "could not be opened" in errors(at) and not at.chat_input

    # 2. it comes up: the very next page run opens the knowledge base (failures are not cached)
    server.start()
    with MilvusStore(server.uri) as store:
        store.replace_document(
            [Chunk(chunk_id="w-1", doc_id="w", doc_version=1, source="warranty.md",
                   text="The turbine warranty lasts two years from delivery.")]
        )  # fmt: skip
    at.run()
    assert_no_exception(at)
    assert "two years" in answer(ask(at))

    # 3. it goes down while the app runs: the question fails with a message, the page lives on
    server.stop()
    started = time.monotonic()
    ask(at)
    assert "not reachable" in errors(at), errors(at)
    assert time.monotonic() - started < 20
    admin = new_app().run()
    admin.switch_page("app_pages/admin.py").run()
    admin.text_input[0].set_value(ADMIN_PASSWORD)
    admin.button[0].click().run()
    assert_no_exception(admin)
    assert "not reachable" in errors(admin)

    # 4. it is back: the same cached runner answers again, the admin page lists documents
    server.start()
    assert "two years" in answer(ask(at))
    admin.run()
    assert_no_exception(admin)
    assert not errors(admin)
    assert any("warranty.md" in str(m.value) for m in admin.markdown)  # its document row
