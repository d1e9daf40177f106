"""Load on the API of a replica deployment (slow): 32 users with keys, 3 questions each, at
once, on 1 and on 2 `hopwise serve` replicas sharing PostgreSQL and a Milvus server, while
`hopwise ingest` adds a document. Every question answered, nothing lost or misfiled (checked
in PostgreSQL), no finance leak, no 5xx. Speed is printed, never asserted (`hopwise bench api`
is the benchmark)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopwise.bench.api import run_replicas
from hopwise.bench.servers import MilvusLiteServer, PostgresServer

pytestmark = pytest.mark.slow
USERS, QUESTIONS = 32, 3


@pytest.fixture(scope="module")
def milvus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusLiteServer]:
    server = MilvusLiteServer(tmp_path_factory.mktemp("milvus") / "milvus.db")
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("replicas", [1, 2])
def test_thirty_two_users_with_an_ingest_beside_them(
    replicas: int, postgres: PostgresServer, milvus: MilvusLiteServer, tmp_path: Path
) -> None:
    run = run_replicas(
        tmp_path, replicas, USERS, QUESTIONS, postgres.fresh_database(f"apiload{replicas}"),
        milvus.uri, measure_overhead=False,
    )  # fmt: skip
    summary = run.summary()
    print(f"\n{json.dumps(summary)}")
    assert summary["answered"] == USERS * QUESTIONS
    assert summary["server_errors"] == 0
    assert [r["status"] for r in run.records].count(200) == USERS * QUESTIONS
    assert summary["lost"] == summary["misfiled"] == summary["extra_threads"] == 0
    assert summary["leaks"] == 0 and summary["wrong_answers"] == 0
    assert summary["ingest_during_load"] == "ok"
    assert summary["saved_turns"] == USERS * QUESTIONS


def test_the_benchmark_command_prints_its_checks(capsys: pytest.CaptureFixture[str]) -> None:
    """`hopwise bench api`, tiny: its own cluster and Milvus server, the JSON it prints."""
    from hopwise.bench.servers import missing_reason
    from hopwise.cli import main

    if missing_reason():
        pytest.skip(missing_reason())

    assert (
        main(["bench", "api", "--users", "2", "--questions", "2", "--replicas", "1", "--json"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    (run,) = result["runs"]
    assert run["answered"] == run["questions"] == 4 and run["server_errors"] == 0
    assert run["lost"] == run["misfiled"] == run["leaks"] == run["wrong_answers"] == 0
    assert run["in_process_p50_ms"] > 0 and "overhead_p50_ms" in run
