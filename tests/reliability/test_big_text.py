"""Big plain-text files stream through parsing, chunking and the store a window at a time:
memory stays bounded (≤ 300 MB for a 50 MB file), offsets point into the whole text, and a
stream that fails half-way leaves the knowledge base as it was."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ingest.chunker import chunk_document, chunk_windows
from ingest.config import IngestConfig
from ingest.errors import IngestError
from ingest.parse import iter_text_windows, parse_bytes
from ingest.pipeline import ingest_bytes
from ingest.store import MilvusStore
from tests.reliability.conftest import ROOT

WORDS = [
    "turbine",
    "gearbox",
    "relay",
    "inspection",
    "bearing",
    "lubricant",
    "sensor",
    "valve",
    "pressure",
    "shift",
]


def paragraphs(count: int) -> bytes:
    return "\n\n".join(
        " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(60)) + f" entry {i}."
        for i in range(count)
    ).encode()


def test_windows_cover_the_text_with_offsets_into_the_whole() -> None:
    data = paragraphs(400)
    whole = parse_bytes(data, "log.txt").text
    windows = list(iter_text_windows(data, "log.txt", window_chars=5_000))
    assert len(windows) > 5
    assert "\n\n".join(w.text for _, w in windows) == whole
    for offset, window in windows:
        assert whole[offset : offset + len(window.text)] == window.text
    record = {"doc_id": "doc-x", "doc_version": 1, "groups": ["all"], "checksum": "c"}
    chunks = list(chunk_windows(iter(windows), **record, chunk_tokens=120, overlap_tokens=10))
    assert [c.chunk_id for c in chunks] == [f"doc-x-v1-{i:05d}" for i in range(len(chunks))]
    assert all(whole[c.start_char : c.end_char] == c.text for c in chunks)
    assert {f"entry {i}." for i in range(400)} <= {
        piece for c in chunks for piece in (f"entry {i}." for i in range(400)) if piece in c.text
    }
    single = chunk_document(
        parse_bytes(data, "log.txt"), **record, chunk_tokens=120, overlap_tokens=10
    )
    assert abs(len(single) - len(chunks)) <= len(windows)  # breaks only at window edges


def test_a_stream_that_fails_half_way_changes_nothing(tmp_path: Path) -> None:
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        first = ingest_bytes(paragraphs(50), "log.txt", store, config=IngestConfig())
        assert first.status == "ingested"
        client: Any = store.client
        real, calls = client.insert_columns, []

        def second_batch_fails(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            if len(calls) == 2:
                raise OSError(errno.EIO, "Input/output error")
            return real(*args, **kwargs)

        client.insert_columns = second_batch_fails
        result = ingest_bytes(paragraphs(6000), "log.txt", store, config=IngestConfig())
        assert result.status == "failed" and "Input/output error" in result.reason
        assert len(calls) == 2  # one batch was written before the failure
        assert [(d.version, d.chunks) for d in store.list_documents()] == [(1, first.chunks)]
        assert store.count_chunks() == first.chunks


def test_an_insert_the_engine_refuses_after_it_was_sent_changes_nothing(tmp_path: Path) -> None:
    """Rows go to the engine while the next are built: a failure reported only when the
    engine answers (not when the rows are sent) still rolls the whole write back."""
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        first = ingest_bytes(paragraphs(50), "log.txt", store, config=IngestConfig())
        client: Any = store.client
        real, answers = client.insert_columns, []

        def refused_on_answer(*args: Any, **kwargs: Any) -> Any:
            done = real(*args, **kwargs)
            answers.append(1)
            if len(answers) != 2 or done is None:
                return done

            def refuse() -> None:
                done()  # the rows did go in: the rollback must remove them
                raise OSError(errno.EIO, "Input/output error")

            return refuse

        client.insert_columns = refused_on_answer
        result = ingest_bytes(paragraphs(1500), "log.txt", store, config=IngestConfig())
        assert result.status == "failed" and "Input/output error" in result.reason
        assert len(answers) >= 2
        assert [(d.version, d.chunks) for d in store.list_documents()] == [(1, first.chunks)]
        assert store.count_chunks() == first.chunks


def test_rows_that_fail_to_build_while_an_insert_is_under_way_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rollback waits for the insert the engine is taking, then removes it too."""
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        first = ingest_bytes(paragraphs(50), "log.txt", store, config=IngestConfig())
        real, built = store._rows, []

        def second_piece_fails(*args: Any, **kwargs: Any) -> Any:
            built.append(1)
            if len(built) == 2:
                raise ValueError("a row that cannot be built")
            return real(*args, **kwargs)

        monkeypatch.setattr(store, "_rows", second_piece_fails)
        result = ingest_bytes(paragraphs(1500), "log.txt", store, config=IngestConfig())
        assert result.status == "failed" and "cannot be built" in result.reason
        assert [(d.version, d.chunks) for d in store.list_documents()] == [(1, first.chunks)]
        assert store.count_chunks() == first.chunks


def test_the_parse_deadline_stops_a_stream_and_rolls_it_back(tmp_path: Path) -> None:
    config = IngestConfig(parse_timeout_s=1e-9)
    with MilvusStore(str(tmp_path / "milvus.db")) as store:
        result = ingest_bytes(paragraphs(6000), "log.txt", store, config=config)
        assert result.status == "failed" and "longer than" in result.reason
        assert store.list_documents() == [] and store.count_chunks() == 0
    with pytest.raises(IngestError):
        next(iter_text_windows(b"\x00\x01\x02" * 100, "x.txt"))


PEAK_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from ingest.config import IngestConfig
    from ingest.pipeline import ingest_file
    from ingest.store import MilvusStore

    def high_water_mb():  # VmHWM starts anew at exec (ru_maxrss keeps the forking parent's)
        status = Path("/proc/self/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0]) / 1024

    path, db = Path(sys.argv[1]), sys.argv[2]
    with MilvusStore(db) as store:
        before = high_water_mb()
        config = IngestConfig(max_upload_mb=60, parse_timeout_s=600)
        result = ingest_file(path, store, config=config)
        peak = high_water_mb()
        print(json.dumps({"status": result.status, "reason": result.reason,
                          "chunks": result.chunks, "before_mb": before, "peak_mb": peak,
                          "stored": store.count_chunks()}))
    """
)


def peak_memory(tmp_path: Path, megabytes: float) -> dict:
    """Ingest a generated TXT of about `megabytes` in a fresh process; its peak RSS."""
    count = int(megabytes * 1024 * 1024 / 600)
    path = tmp_path / "big.txt"
    path.write_bytes(paragraphs(count))
    done = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, str(path), str(tmp_path / "milvus.db")],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "ingested", report
    assert report["stored"] == report["chunks"] > 0
    return report


@pytest.mark.slow  # 20–50 s of subprocesses: in .ci/run's slow suite, not the default run
def test_a_12_mb_text_file_adds_little_memory(tmp_path: Path) -> None:
    report = peak_memory(tmp_path, 12)
    # the whole text is held once or twice (bytes and str); chunks, rows and Milvus requests
    # only a window at a time. Reading it all into blocks took ~7x the file.
    assert report["peak_mb"] - report["before_mb"] < 80, report


@pytest.mark.slow
def test_a_50_mb_text_file_ingests_in_300_mb(tmp_path: Path) -> None:
    report = peak_memory(tmp_path, 50)
    assert report["peak_mb"] <= 300, report
