"""`hopwise worker` against a Milvus server and PostgreSQL, as a deployment runs it: one process
of the deployment holds the worker lease and fills the vectors; the others wait, and every chunk
is embedded once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopwise.app import EMBEDDING_WORKER_LEASE
from hopwise.database import PostgresDatabase
from tests.deploy.postgres import PostgresServer
from tests.ingest.conftest import MilvusLiteServer
from tests.reliability.conftest import ROOT, cli_env, run_cli

pytestmark = pytest.mark.slow

NOTES = """# Pump maintenance

The coolant pumps are serviced every six weeks by the field crew.

## Spare parts

Spare impellers are kept in the north depot and reordered when fewer than four remain.
"""


@pytest.fixture
def deployment(
    tmp_path: Path, postgres: PostgresServer
) -> Iterator[tuple[dict[str, str], PostgresDatabase]]:
    server = MilvusLiteServer(tmp_path / "milvus.db")
    server.start()
    url = postgres.fresh_database("worker")
    env = cli_env(
        tmp_path / "ingest-data",
        HOPWISE_MILVUS_URI=server.uri,
        HOPWISE_DATABASE_URL=url,
        HOPWISE_EMBEDDINGS="builtin",
    )
    db = PostgresDatabase(url, pool_size=2)
    yield env, db
    db.close()
    server.stop()


def worker(env: dict[str, str], data: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hopwise", "worker", "--once", "--json"],
        env={**env, "HOPWISE_DATA_DIR": str(data)}, cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_one_worker_is_elected_and_each_chunk_is_embedded_once(
    tmp_path: Path, deployment: tuple[dict[str, str], PostgresDatabase]
) -> None:
    env, db = deployment
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pumps.md").write_text(NOTES, encoding="utf-8")
    ingested = run_cli("ingest", str(docs), "--json", env=env, timeout=300)
    assert ingested.returncode == 0, ingested.stderr
    chunks = sum(r["chunks"] for r in json.loads(ingested.stdout))
    assert chunks >= 1

    held = db.try_lease(EMBEDDING_WORKER_LEASE)  # another replica is the worker
    assert held is not None
    waiting = worker(env, tmp_path / "w0")
    out, err = waiting.communicate(timeout=300)
    line = json.loads(out.strip().splitlines()[-1])
    assert waiting.returncode == 2, err  # not elected: nothing embedded, not complete
    assert line["elected"] is False and line["embedded"] == 0 and line["with_vectors"] == 0
    held.release()

    pair = [worker(env, tmp_path / f"w{i}") for i in (1, 2)]
    lines = []
    for proc in pair:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 2), err
        lines.append(json.loads(out.strip().splitlines()[-1]))
    elected = [line for line in lines if line["elected"]]
    assert len(elected) >= 1
    assert sum(line["embedded"] for line in lines) == chunks  # each chunk once, by one process
    again = worker(env, tmp_path / "w3")
    out, _ = again.communicate(timeout=300)
    final = json.loads(out.strip().splitlines()[-1])
    assert final["complete"] and final["with_vectors"] == chunks and final["embedded"] == 0
