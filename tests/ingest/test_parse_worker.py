"""A parse worker that dies says why: its exit status (after it is reaped) in words, and the
last line it wrote, instead of "crashed (exit code None)"."""

from __future__ import annotations

import io
import os
import signal

import pytest
from PIL import Image

from ingest.errors import IngestError
from ingest.parse import worker as parsers
from tests.ingest.worker_tasks import abort_saying, double


def test_exit_statuses_are_named() -> None:
    assert "SIGKILL" in parsers.death_cause(-signal.SIGKILL)
    assert "out of memory" in parsers.death_cause(-signal.SIGKILL)
    aborted = parsers.death_cause(-signal.SIGABRT, "terminate called: std::bad_alloc")
    assert "SIGABRT" in aborted and aborted.endswith(
        "its last message: terminate called: std::bad_alloc"
    )
    assert parsers.death_cause(3) == "it exited with status 3"
    assert "did not exit" in parsers.death_cause(None)
    assert "\x1b" not in parsers.death_cause(1, "\x1b[31mred\x1b[0m")  # no control characters


def test_a_worker_that_aborts_is_named_with_its_last_words_and_replaced() -> None:
    worker = parsers.Worker()
    try:
        with pytest.raises(RuntimeError) as died:
            worker.call(abort_saying, ("terminate called after std::bad_alloc",), timeout_s=60)
        assert "SIGABRT" in str(died.value)
        assert "terminate called after std::bad_alloc" in str(died.value)
        assert worker.call(double, (21,), timeout_s=60) == 42  # a new worker answers
    finally:
        worker.stop()


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (120, 60), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def test_a_parse_whose_worker_is_killed_names_the_signal() -> None:
    worker = parsers.Worker()

    def kill_worker(stage: str, done: int, total: int) -> None:
        assert worker._proc is not None
        os.kill(worker._proc.pid, signal.SIGKILL)  # as the kernel's OOM killer would

    try:
        with pytest.raises(IngestError) as died:
            worker.parse(png(), "scan.png", ".png", timeout_s=60, on_page=kill_worker)
        message = str(died.value)
        assert message.startswith("the parser crashed on this file:")
        assert "SIGKILL" in message and "None" not in message
    finally:
        worker.stop()


def test_a_real_time_signal_is_named_by_its_number() -> None:
    rt = signal.SIGRTMIN + 2  # valid, but no member of signal.Signals
    assert parsers.death_cause(-rt) == f"it was stopped by signal {rt}"
