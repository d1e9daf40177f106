"""A real `hopwise serve` app on a loopback port (uvicorn in a thread of the test process, over
the embedded knowledge base of a temp data dir), with three users: ann (finance, admin), bob
(no groups) and cara (ops), each with an API key. The documents are small ones of our own: a
travel policy everyone reads and a finance-only budget full of markers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from hopwise.api.app import create_app
from hopwise.api.service import ApiService
from hopwise.bench.servers import free_port
from hopwise.settings import load_settings
from tests.fakes.env import isolate_hopwise_env

USERS = {
    "ann": {"password": "ann-long-password", "groups": ["finance"], "admin": True},
    "bob": {"password": "bob-long-password", "groups": []},
    "cara": {"password": "cara-long-password", "groups": ["ops"]},
}
TRAVEL = """# Travel policy

## Hotels
The hotel cap in Lisbon is 180 euros a night.

## Trains
Second-class tickets are booked for trips under four hours.
"""
BUDGET = """# Treasury budget

## Reserve
The contingency reserve code is MARZIPAN-9047 and the Tarvos fund holds 6.1 million euros.
The treasurer is Oskar Lindqvist-Brae. The reserve is kept at Kestrel Bank, vault Q-88.
"""
FINANCE_MARKERS = (
    "MARZIPAN-9047", "Tarvos", "Lindqvist-Brae", "6.1 million", "Treasury budget", "Kestrel",
    "Q-88", "budget.md",
)  # fmt: skip


@dataclass
class Api:
    """The running server and what the tests need of it."""

    url: str
    service: ApiService
    keys: dict[str, str]
    finance_doc: str
    travel_doc: str

    def client(self, user: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)


class ThreadServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # a thread cannot take signals
        pass


def serve_in_thread(app: Any) -> tuple[str, ThreadServer, threading.Thread]:
    port = free_port()
    server = ThreadServer(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="hopwise-api-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


@pytest.fixture(scope="session")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The settings are read once, in an isolated environment that is restored before the
    first test runs (a session fixture must not leave HOPWISE_* variables behind)."""
    tmp = tmp_path_factory.mktemp("api")
    with pytest.MonkeyPatch.context() as mp:
        isolate_hopwise_env(mp, tmp, tmp / "data")
        mp.setenv("HOPWISE_USERS", json.dumps(USERS))
        mp.setenv("HOPWISE_EMBEDDINGS", "off")
        mp.setenv("HOPWISE_MAX_UPLOAD_MB", "2")
        mp.setenv("HOPWISE_API_MAX_REQUEST_KB", "256")
        settings = load_settings()
    service = ApiService(settings, secrets={})
    service.open()
    runner = service.runner
    runner.ingest_uploads([("travel.md", TRAVEL.encode())], groups=["all"])
    runner.ingest_uploads([("budget.md", BUDGET.encode())], groups=["finance"])
    docs = {d.source: d.doc_id for d in runner.list_documents()}
    users = service.users()
    keys = {name: service.keys.create(name, users, label="tests")[1] for name in USERS}
    url, server, thread = serve_in_thread(create_app(service))
    try:
        yield Api(url, service, keys, docs["budget.md"], docs["travel.md"])
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def no_finance(text: str, typed: Sequence[str] = ()) -> None:
    """Fails when a finance marker is in `text` (a response, a stream, an error), except one
    the caller typed itself (a question quoting it is echoed back)."""
    found = [m for m in FINANCE_MARKERS if m in text and not any(m in t for t in typed)]
    assert not found, f"finance text leaked: {found} in {text[:300]!r}"


def new_key(api: Api, user: str) -> str:
    return api.service.keys.create(user, api.service.users())[1]


def ask(client: httpx.Client, question: str, **body: Any) -> httpx.Response:
    return client.post("/api/v1/ask", json={"question": question, **body})


def sse_events(text: str) -> list[tuple[str, Any]]:
    """(event, data) pairs of a Server-Sent Events body."""
    events = []
    for block in text.split("\n\n"):
        kind, data = "message", []
        for line in block.splitlines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            events.append((kind, json.loads("\n".join(data))))
    return events
