"""Load on the replica deployment, and the replica benchmark: 16 users at once in Chromium, spread
over the replicas, each signing in and asking QUESTIONS_EACH questions while an admin's ingest
runs beside them (`hopwise ingest` against the same Milvus server and PostgreSQL).

Checked afterwards, from PostgreSQL: every user's chat holds exactly their own questions, once
each, in order (none lost, none duplicated, none in someone else's chat); each user's page listed
no one else's chat; every answer cited a source. Printed: questions per second for 1 and for 2
replicas (the README's replica benchmark). On a 2-core machine two replicas share the same two
cores, so the number says what a second machine would add only where there is one."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from hopwise.bench.startup import stop
from tests.deploy.postgres import PostgresServer
from tests.ingest.conftest import MilvusLiteServer
from tests.ui.apptools import CHROMIUM, CHROMIUM_ARGS
from tests.ui.test_replicas import ROOT, start_replica

pytestmark = pytest.mark.slow

USERS_COUNT = 16
QUESTIONS_EACH = 2
USERS = {f"user{i:02d}": {"password": f"password-of-user{i:02d}"} for i in range(USERS_COUNT)}
HANDBOOK = """# Site handbook

## Stock
Spare impellers are kept in the north depot. Impellers are reordered when fewer than four remain.

## Safety
Visitors sign in at the harbour gate and wear a yellow helmet on the quay.

## Inspections
The boiler pressure valves are inspected every nine weeks by the facilities team.
"""
QUESTIONS = [
    ("Where are spare impellers kept?", "north depot"),
    ("What colour helmet do visitors wear on the quay?", "yellow"),
    ("How often are the boiler pressure valves inspected?", "nine weeks"),
]
LATE_DOC = "# Canteen\n\nThe canteen opens at half past seven on weekdays.\n"
CHAT = "[data-testid='stChatMessage']"


def question_of(user: int, turn: int) -> tuple[str, str]:
    text, expected = QUESTIONS[(user + turn) % len(QUESTIONS)]
    return f"{text} (ticket {user:02d}-{turn})", expected


async def one_user(browser, url: str, index: int) -> dict[str, object]:  # noqa: ANN001
    name = f"user{index:02d}"
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(240_000)
    await page.goto(url)
    form = page.locator("[data-testid='stSidebar'] [data-testid='stForm']")
    await form.get_by_label("User", exact=True).fill(name)
    await form.get_by_label("Password", exact=True).fill(USERS[name]["password"])
    await form.get_by_role("button", name="Sign in").click()
    await page.get_by_text(f"Signed in as {name}").wait_for()
    answers = []
    for turn in range(QUESTIONS_EACH):
        question, expected = question_of(index, turn)
        box = page.get_by_placeholder("Ask a question about your documents…")
        await box.fill(question)
        await box.press("Enter")
        message = page.locator(CHAT).nth(2 * turn + 1)
        await message.get_by_role("button", name="Open hop trace →").wait_for()
        text = await message.inner_text()
        answers.append({"question": question, "expected": expected, "text": text})
    sidebar = await page.locator("[data-testid='stSidebar']").inner_text()
    await context.close()
    return {"name": name, "answers": answers, "sidebar": sidebar}


async def drive(urls: list[str]) -> tuple[list[dict[str, object]], float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        started = time.monotonic()
        results = await asyncio.gather(
            *(one_user(browser, urls[i % len(urls)], i) for i in range(USERS_COUNT))
        )
        elapsed = time.monotonic() - started
        await browser.close()
    return list(results), elapsed


@pytest.fixture(scope="module")
def backing(
    tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer
) -> Iterator[tuple[Path, PostgresServer, MilvusLiteServer]]:
    root = tmp_path_factory.mktemp("load")
    milvus = MilvusLiteServer(root / "milvus.db")
    milvus.start()
    yield root, postgres, milvus
    milvus.stop()


def run_load(root: Path, postgres: PostgresServer, milvus: MilvusLiteServer, replicas: int) -> None:
    database = postgres.fresh_database(f"load{replicas}")
    shared = {
        "HOPWISE_DATABASE_URL": database,
        "HOPWISE_MILVUS_URI": milvus.uri,
        "HOPWISE_COLLECTION": f"load{replicas}",
        "HOPWISE_ORIGINALS_DIR": str(root / f"originals{replicas}"),
        "HOPWISE_USERS": json.dumps(USERS),
        "HOPWISE_EMBEDDINGS": "off",  # BM25: the measure is the deployment, not the embedder
    }
    docs = root / f"docs{replicas}"
    docs.mkdir()
    (docs / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {**shared, "HOPWISE_DATA_DIR": str(root / f"cli{replicas}"), "HOPWISE_WEB_SEARCH": "off"}
    cli = [sys.executable, "-m", "hopwise", "ingest"]
    subprocess.run([*cli, str(docs)], env=env, cwd=ROOT, check=True, capture_output=True)
    late = root / f"late{replicas}"
    late.mkdir()
    (late / "canteen.md").write_text(LATE_DOC, encoding="utf-8")

    servers = [start_replica(root, f"load{replicas}-r{i}", shared) for i in range(replicas)]
    try:
        ingest = subprocess.Popen([*cli, str(late)], env=env, cwd=ROOT)  # beside the users
        results, elapsed = asyncio.run(drive([s.url for s in servers]))
        assert ingest.wait(timeout=300) == 0
    finally:
        for server in servers:
            stop(server.proc)

    asked = USERS_COUNT * QUESTIONS_EACH
    print(
        f"\nreplicas={replicas}: {asked} questions by {USERS_COUNT} users in {elapsed:.1f} s "
        f"(sign-in included): {asked / elapsed:.2f} questions/s"
    )
    for result in results:
        for answer in result["answers"]:  # type: ignore[attr-defined]
            assert answer["expected"] in answer["text"], answer
            assert "[1]" in answer["text"], answer  # cited
        others = [n for n in USERS if n != result["name"]]
        tickets = [f"ticket {n[-2:]}-" for n in others]
        assert not any(t in str(result["sidebar"]) for t in tickets), result["name"]

    with psycopg.connect(database) as conn:  # what was saved, per user
        rows = conn.execute(
            "SELECT t.owner, u.question FROM hopwise_turns u JOIN hopwise_threads t "
            "ON t.thread_id = u.thread_id ORDER BY u.created_at"
        ).fetchall()
    for index in range(USERS_COUNT):
        name = f"user{index:02d}"
        saved = [q for owner, q in rows if owner == name]
        assert saved == [question_of(index, t)[0] for t in range(QUESTIONS_EACH)], (name, saved)
    assert len(rows) == asked


def test_sixteen_users_on_one_replica(backing) -> None:  # noqa: ANN001
    run_load(*backing, replicas=1)


def test_sixteen_users_on_two_replicas(backing) -> None:  # noqa: ANN001
    run_load(*backing, replicas=2)
