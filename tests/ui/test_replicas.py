"""Two replicas of the app, as a company runs them when one machine is not enough: two
`streamlit run ui/app.py` processes on two loopback ports, each with its own data dir, sharing
one PostgreSQL (HOPWISE_DATABASE_URL), one Milvus server (the C++ engine's gRPC server) and
one originals directory. Debian's Chromium drives both; the session cookie is the host's, so
one browser context is signed in on both, as behind a load balancer.

A user signs in on replica 1, asks, continues the chat on replica 2 and sees the trace there;
feedback given on 2 is on 1's Admin page; failed sign-ins count across both; a document uploaded
on 1 is answered and deleted from 2; chunks are embedded once (one replica is elected); signing
out on 2 signs out on 1. Then the faults: PostgreSQL stopped mid-conversation (the page says
so, answers with history off, and recovers), and a replica killed with SIGKILL mid-answer
(only that answer is lost)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hopwise.bench.startup import free_port, stop
from tests.deploy.postgres import PostgresServer
from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder
from tests.ingest.conftest import MilvusLiteServer
from tests.ui.test_browser import ask, shoot, wait_healthy, wait_idle
from tests.ui.test_browser_manage import Session

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
USERS = {
    "ada": {"password": "ada-long-password", "groups": ["ops"], "admin": True},
    "ben": {"password": "ben-long-password", "groups": []},
}
MANUAL = """# Boiler room manual

## Inspections
The boiler pressure valves are inspected every nine weeks by the facilities team.

## Contacts
The facilities team is led by Ilse Varga, who works from the harbour office.
"""
QUESTION = "How often are the boiler pressure valves inspected?"
FOLLOW_UP = "Who leads the team that inspects the boiler pressure valves?"


@dataclass
class Replica:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start_replica(root: Path, name: str, shared: dict[str, str], **extra: str) -> Replica:
    """`streamlit run ui/app.py` with its own data dir and port, sharing `shared` settings."""
    data = root / name / "data"
    data.parent.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {"HOPWISE_DATA_DIR": str(data), "HOPWISE_WEB_SEARCH": "off", **shared, **extra}
    port = free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "ui/app.py", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer",
    ]  # fmt: skip
    log = data.parent / "streamlit.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, proc, timeout_s=120)
    return Replica(url, proc, log)


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer
) -> Iterator[tuple[dict[str, str], list[Replica], Path]]:
    root = tmp_path_factory.mktemp("replicas")
    milvus = MilvusLiteServer(root / "milvus.db")
    milvus.start()
    shared = {
        "HOPWISE_DATABASE_URL": postgres.fresh_database("replicas"),
        "HOPWISE_MILVUS_URI": milvus.uri,
        "HOPWISE_ORIGINALS_DIR": str(root / "originals"),
        "HOPWISE_USERS": json.dumps(USERS),
        "HOPWISE_EMBEDDINGS": "builtin",
    }
    replicas = [start_replica(root, f"r{i}", shared) for i in (1, 2)]
    yield shared, replicas, root
    for replica in replicas:
        if replica.proc.poll() is None:
            stop(replica.proc)
    milvus.stop()


def upload(page, path: Path) -> None:  # noqa: ANN001 - a Playwright page
    """On the Admin page of the page's replica: upload one file and wait for it."""
    page.get_by_role("link", name="Admin").click()
    page.get_by_text("Upload documents").wait_for()
    wait_idle(page)
    page.locator("input[type=file]").set_input_files([str(path)])
    page.get_by_text(path.name).first.wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text("Last upload: 1 ingested").wait_for()
    wait_idle(page)


def thread_of(page) -> str:  # noqa: ANN001 - a Playwright page
    found = re.search(r"[?&]thread=([0-9a-f]+)", page.url)
    assert found, page.url
    return found.group(1)


def embedded_lines(replicas: list[Replica]) -> list[list[int]]:
    """Per replica, the chunk counts its embedding worker logged."""
    return [
        [int(n) for n in re.findall(r"embedded (\d+) chunks of", r.log_text())] for r in replicas
    ]


def test_two_replicas_share_chats_sign_ins_documents_and_feedback(
    browser, deployment, tmp_path: Path
) -> None:
    shared, (one, two), root = deployment
    manual = tmp_path / "boiler-manual.md"
    manual.write_text(MANUAL, encoding="utf-8")

    # -- ada signs in on replica 1 and uploads the manual there
    ada = Session(browser, one.url)
    page = ada.page
    ada.sign_in("ada")
    assert ada.session_cookie()
    upload(page, manual)

    # -- she asks on replica 1 ...
    page.get_by_role("link", name="Chat").click()
    first = ask(page, QUESTION)
    assert "nine weeks" in first.inner_text() and "[1]" in first.inner_text()
    thread = thread_of(page)

    # -- ... and continues the same chat on replica 2 (the same browser: the host's cookie)
    page.goto(f"{two.url}/?thread={thread}")
    page.get_by_text("Signed in as ada").wait_for()
    page.get_by_text("nine weeks").first.wait_for()  # the answer given on replica 1
    second = ask(page, FOLLOW_UP, message=3)
    assert "Ilse Varga" in second.inner_text()
    shoot(page, root, "replica-two-continues")
    page.get_by_role("button", name="Open hop trace →").last.click()
    page.get_by_role("heading", name="Hop trace").wait_for()
    page.get_by_text("Query sent:").first.wait_for()
    wait_idle(page)
    assert "answer=2" in page.url and f"thread={thread}" in page.url

    # -- feedback given on replica 2 is on replica 1's Admin page
    page.goto(f"{two.url}/?thread={thread}")
    answer = page.locator("[data-testid='stChatMessage']").last
    answer.get_by_text("Ilse Varga").first.wait_for()
    wait_idle(page)
    answer.locator("[data-testid='stFeedback'] button").last.click()  # thumbs down
    wait_idle(page)
    answer.get_by_role("button", name="Comment").click()
    page.get_by_label("What was good or wrong?").fill("Replica two says hello")
    page.get_by_role("button", name="Send", exact=True).click()
    wait_idle(page)
    page.goto(f"{one.url}/admin")
    page.get_by_role("link", name="Export CSV").wait_for()
    wait_idle(page)
    with page.expect_download() as info:
        page.get_by_role("link", name="Export CSV").click()
    feedback_csv = Path(info.value.path()).read_text(encoding="utf-8")
    assert "Replica two says hello" in feedback_csv and FOLLOW_UP in feedback_csv

    # -- failed sign-ins count across both replicas (ben's wrong password, then the right one)
    ben = Session(browser, one.url)
    form = ben.page.locator("[data-testid='stSidebar'] [data-testid='stForm']")
    for attempt, url in enumerate((one.url, two.url, one.url)):
        ben.page.goto(url)
        form.get_by_label("User", exact=True).fill("ben")
        form.get_by_label("Password", exact=True).fill("not ben's password")
        form.get_by_role("button", name="Sign in").click()
        ben.page.get_by_text("Wrong credentials.").wait_for()
        if attempt < 2:
            ben.page.wait_for_timeout(2500)  # out of the previous failure's wait
    ben.page.goto(two.url)  # the third failure (4 s wait) was on replica 1
    form.get_by_label("User", exact=True).fill("ben")
    form.get_by_label("Password", exact=True).fill(USERS["ben"]["password"])
    form.get_by_role("button", name="Sign in").click()
    ben.page.get_by_text("Too many failed attempts").wait_for()
    ben.context.close()

    # -- the document is deleted from replica 2, and replica 1 no longer answers from it
    page.goto(f"{two.url}/admin")
    page.get_by_text("boiler-manual.md").first.wait_for()
    wait_idle(page)
    page.get_by_role("button", name="Delete…").first.click()
    page.get_by_role("button", name="Yes, delete").click()
    page.get_by_text("Deleted boiler-manual.md").wait_for()
    page.goto(one.url)
    page.get_by_role("button", name="New chat").click()
    wait_idle(page)
    gone = ask(page, QUESTION)
    assert "nine weeks" not in gone.inner_text()

    # -- the chunks were embedded once, by one replica (the elected worker)
    counts = embedded_lines([one, two])
    assert len([c for c in counts if c]) <= 1, counts
    assert sum(sum(c) for c in counts) in (0, 2), counts  # two chunks; none if deleted first

    # -- signing out on replica 2 signs out on replica 1
    page.goto(two.url)
    page.get_by_text("Signed in as ada").wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.locator("[data-testid='stSidebar'] [data-testid='stForm']").wait_for()
    page.wait_for_timeout(1000)  # the page's script drops the cookie
    page.goto(one.url)
    page.locator("[data-testid='stSidebar'] [data-testid='stForm']").wait_for()
    assert page.get_by_text("Signed in as ada").count() == 0
    ada.context.close()


def test_each_chunk_is_embedded_by_one_replica(browser, deployment, tmp_path: Path) -> None:
    """Upload on replica 2 and wait for the vectors: one replica's worker embeds them all."""
    _, replicas, _ = deployment
    notes = tmp_path / "depot-notes.md"
    notes.write_text(
        "# Depot notes\n\n## Stock\nSpare impellers are kept in the north depot.\n\n"
        "## Orders\nImpellers are reordered when fewer than four remain.\n",
        encoding="utf-8",
    )
    ada = Session(browser, replicas[1].url)
    ada.sign_in("ada")
    page = ada.page
    before = [sum(c) for c in embedded_lines(replicas)]
    upload(page, notes)
    deadline = time.monotonic() + 120  # the elected worker looks again every 30 s
    while time.monotonic() < deadline:
        after = [sum(c) for c in embedded_lines(replicas)]
        if sum(after) > sum(before):
            break
        time.sleep(1)
    time.sleep(3)  # a second worker, if any, would have logged by now
    added = [a - b for a, b in zip([sum(c) for c in embedded_lines(replicas)], before, strict=True)]
    assert sorted(added)[0] == 0 and sorted(added)[1] >= 1, added  # one replica embedded
    ada.context.close()


def test_postgres_stopped_mid_conversation_then_back(
    browser, deployment, postgres: PostgresServer
) -> None:
    """The page says the conversation store is unavailable and still answers; when the
    database is back, answers are saved again."""
    _, (one, _two), root = deployment
    ada = Session(browser, one.url)
    ada.sign_in("ada")
    page = ada.page
    page.set_viewport_size({"width": 420, "height": 900})  # a phone from here on
    ask(page, "Hello")
    postgres.pause()
    try:
        page.reload()
        page.get_by_text("Signed in as ada").wait_for(state="attached")  # verified here before
        page.get_by_text("Conversations are not being saved").first.wait_for()
        assert "is unavailable" in page.locator("main").inner_text()
        during = ask(page, "Where are spare impellers kept?")
        assert "north depot" in during.inner_text()
        page.get_by_text("This answer was not saved").first.wait_for()
        wait_idle(page)
        (root / "screenshots").mkdir(exist_ok=True)
        page.screenshot(path=str(root / "screenshots" / "replica-db-down-420.png"))
    finally:
        postgres.resume()
    page.wait_for_timeout(4000)  # the fast-fail window after the last failure
    page.goto(one.url)  # a new browser session: a new chat
    page.get_by_text("Signed in as ada").wait_for(state="attached")
    wait_idle(page)
    after = ask(page, "When are impellers reordered?")
    assert "four" in after.inner_text()
    assert page.get_by_text("not being saved").count() == 0
    assert page.get_by_text("This answer was not saved").count() == 0
    page.reload()  # the chat was saved: it is listed and reopens
    page.get_by_text("When are impellers reordered?").first.wait_for()
    ada.context.close()


def test_a_replica_killed_mid_answer_loses_only_that_answer(browser, deployment) -> None:
    """A third replica whose model answers slowly is killed with SIGKILL while it streams; the
    chat, opened on replica 1, keeps every earlier answer and nothing of the lost one."""
    shared, (one, _two), root = deployment
    with StubOpenAIServer(responder=plausible_responder, latency_s=2.0) as model:
        slow = start_replica(
            root, "r3", shared,
            HOPWISE_LLM_BASE_URL=model.url, HOPWISE_LLM_MODEL="stub", HOPWISE_LLM_API_KEY="k",
            HOPWISE_EMBEDDING_WORKER="off",
        )  # fmt: skip
        ada = Session(browser, slow.url)
        ada.sign_in("ada")
        page = ada.page
        kept = ask(page, "Where are spare impellers kept?")
        assert kept.inner_text()
        thread = thread_of(page)
        box = page.get_by_placeholder("Ask a question about your documents…")
        box.fill("When are impellers reordered?")
        box.press("Enter")
        page.get_by_role("button", name="Stop").wait_for()  # answering, mid-stream
        os.kill(slow.proc.pid, signal.SIGKILL)
        slow.proc.wait(timeout=10)
        page.goto(f"{one.url}/?thread={thread}")
        page.get_by_text("Signed in as ada").wait_for()
        wait_idle(page)
        messages = page.locator("[data-testid='stChatMessage']")
        messages.first.wait_for()
        assert messages.count() == 2  # the saved question and answer; the killed one is gone
        assert "When are impellers reordered?" not in page.locator("main").inner_text()
        again = ask(page, "When are impellers reordered?", message=3)
        assert "four" in again.inner_text()
        ada.context.close()
