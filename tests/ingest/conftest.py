"""Store backends for the contract suite: embedded Milvus Lite (BM25 and hybrid), a Milvus Lite
server on loopback (the remote path), and the in-memory fake. Engines are session-scoped; every
test gets fresh collections, so the suite stays fast."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from hopwise.bench.servers import MilvusLiteServer as MilvusLiteServer
from hopwise.bench.servers import free_port as free_port
from ingest.store import EMBEDDED, MilvusStore
from tests.fakes.hash_embedder import HashEmbedder
from tests.fakes.memory_store import MemoryBacking, MemoryStore

BACKENDS = [
    "lite-bm25",
    "lite-hybrid",
    "server-bm25",
    pytest.param("server-hybrid", marks=pytest.mark.slow),
    "memory",
    "memory-hybrid",
]


@pytest.fixture(scope="session")
def milvus_lite_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One embedded database for the session; an extra reference keeps the engine running
    while a test closes and reopens its store (a restart costs ~0.5 s)."""
    path = str((tmp_path_factory.mktemp("lite") / "kb.db").resolve())
    EMBEDDED.acquire(path)
    yield path
    EMBEDDED.release(path)


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusLiteServer]:
    server = MilvusLiteServer(tmp_path_factory.mktemp("server") / "server.db")
    server.start()
    yield server
    server.stop()


@dataclass
class Backend:
    """One store under test. `state` survives across the session: the open store is reused
    (closing a gRPC connection costs ~0.2 s) and read-only tests share one filled collection."""

    name: str
    make: Callable[[], Any]
    dense: bool
    state: dict[str, Any]

    def open(self) -> Any:
        if self.state.get("store") is None:
            self.state["store"] = self.make()
        return self.state["store"]

    def reopen(self) -> Any:
        """Close the store and open a new one over the same data (repair runs on open)."""
        self.open().close()
        self.state["store"] = None
        return self.open()

    def clear(self, store: Any) -> None:
        self.state["filled"] = False
        if isinstance(store, MemoryStore):
            store.backing.chunks.clear()
            store.backing.manifest.clear()
            store.backing.vectors.clear()
            return
        for name in (store.collection, store.manifest):
            store.client.delete(name, filter='doc_id != ""')
        if store.phrases is not None:
            store.build_phrases()  # the worker has nothing left to write, then empty its table
            store.phrases.clear()


@pytest.fixture(scope="session")
def backend_states() -> Iterator[dict[str, dict[str, Any]]]:
    states: dict[str, dict[str, Any]] = {}
    yield states
    for state in states.values():
        if state.get("store") is not None:
            state["store"].close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, backend_states: dict[str, dict[str, Any]]) -> Backend:
    """A store backend whose collections are created once per session (~0.5 s each)."""
    name: str = request.param
    dense = name.endswith("hybrid")
    state = backend_states.setdefault(name, {"filled": False, "backing": MemoryBacking()})

    if name.startswith("memory"):

        def make() -> Any:
            return MemoryStore(state["backing"], embedder=HashEmbedder(64) if dense else None)
    else:
        uri = (
            request.getfixturevalue("milvus_server").uri
            if name.startswith("server")
            else request.getfixturevalue("milvus_lite_db")
        )
        collection = "contract_" + name.replace("-", "_")

        def make() -> Any:
            embedder = HashEmbedder(64) if dense else None
            return MilvusStore(uri, collection=collection, embedder=embedder, repair_after_s=0)

    return Backend(name=name, make=make, dense=dense, state=state)


@pytest.fixture
def store(backend: Backend) -> Any:
    """An empty store, for tests that write."""
    opened = backend.open()
    backend.clear(opened)
    return opened
