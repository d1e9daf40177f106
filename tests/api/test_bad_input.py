"""Bad input gets a clear 4xx in words, never a traceback, and changes nothing: malformed
JSON, an oversize body (declared or streamed), unknown fields, a 50 MB upload, an empty and a
100,000-character question, a DOCX zip bomb, a body that is not UTF-8."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.conftest import Api
from tests.fakes import docs

JSON = {"Content-Type": "application/json"}


def state(api: Api) -> tuple[list[tuple[str, int]], int, int]:
    """What a bad request must not change: the documents, and ann's and bob's threads."""
    runner = api.service.runner
    documents = sorted((d.doc_id, d.version) for d in runner.list_documents())
    return documents, len(runner.list_threads("ann")), len(runner.list_threads("bob"))


def streamed(total: int) -> Iterator[bytes]:
    """A body without Content-Length (chunked), `total` bytes of a JSON string."""
    yield b'{"question": "'
    for _ in range(total // 65536):
        yield b"a" * 65536
    yield b'"}'


def bad_requests(api: Api, tmp: Path) -> list[tuple[str, httpx.Response, int]]:
    bomb = docs.make_zip_bomb_docx(tmp, inflated_mb=64).read_bytes()
    big = b"# Big\n\n" + b"x" * (50 * 1024 * 1024)
    long_question = "Where is the hotel cap written down? " * 2703  # 100,011 characters
    with api.client("bob") as bob, api.client("ann") as ann:
        return [
            ("malformed JSON", bob.post("/api/v1/ask", content=b'{"question": ', headers=JSON), 400),
            ("not UTF-8", bob.post("/api/v1/ask", content=b'{"question": "\xff\xfe?"}', headers=JSON), 400),
            ("oversize, declared", bob.post("/api/v1/ask", json={"question": "x" * 300_000}), 413),
            ("oversize, streamed", bob.post("/api/v1/ask", content=streamed(400_000), headers=JSON), 413),
            ("unknown field", bob.post("/api/v1/ask", json={"question": "hi", "temperature": 2}), 422),
            ("not an object", bob.post("/api/v1/ask", json=["What is the hotel cap?"]), 422),
            ("empty question", bob.post("/api/v1/ask", json={"question": "   "}), 422),
            ("long question", bob.post("/api/v1/ask", json={"question": long_question}), 422),
            ("bad thread id", bob.post("/api/v1/ask", json={"question": "hi", "thread_id": "../x"}), 422),
            ("unknown rename field", bob.patch("/api/v1/threads/abc", json={"name": "x"}), 422),
            ("empty chat", bob.post("/v1/chat/completions", json={"model": "hopwise", "messages": []}), 422),
            ("last message not a user's", bob.post("/v1/chat/completions", json={"model": "hopwise", "messages": [{"role": "assistant", "content": "hi"}]}), 422),
            ("50 MB upload", ann.post("/api/v1/documents", files=[("files", ("big.md", big))]), 413),
            ("zip bomb", ann.post("/api/v1/documents", files=[("files", ("bomb.docx", bomb))]), 422),
            ("unsupported type", ann.post("/api/v1/documents", files=[("files", ("run.exe", b"MZ\x90"))]), 422),
            ("no file", ann.post("/api/v1/documents", files={"groups": (None, "all")}), 422),
            ("bad group", ann.post("/api/v1/documents", files=[("files", ("g.md", b"# G\n"))], data={"groups": 'all" or 1==1'}), 422),
            ("not multipart", ann.post("/api/v1/documents", json={"files": []}), 415),
        ]  # fmt: skip


def test_bad_input_is_a_clear_4xx_and_changes_nothing(api: Api, tmp_path: Path) -> None:
    before = state(api)
    for what, reply, status in bad_requests(api, tmp_path):
        assert reply.status_code == status, (what, reply.status_code, reply.text[:300])
        body = reply.json()
        assert body["status"] == status, what
        assert isinstance(body["message"], str) and len(body["message"]) > 8, what
        assert "Traceback" not in reply.text and 'File "' not in reply.text, what
        assert len(reply.content) < 20_000, what  # the words, not the input echoed back
    assert state(api) == before


def test_messages_say_what_is_wrong(api: Api, tmp_path: Path) -> None:
    replies = {what: r.json()["message"] for what, r, _ in bad_requests(api, tmp_path)}
    assert "temperature: unknown field" in replies["unknown field"]
    assert "empty" in replies["empty question"]
    assert "longer than 4000 characters" in replies["long question"]
    assert "larger than 2 MB" in replies["50 MB upload"]
    assert "bomb.docx" in replies["zip bomb"]
    assert "256 KB" in replies["oversize, declared"]


@pytest.mark.parametrize("path", ["/api/v1/nothing", "/api/v1/threads/x/y/z"])
def test_unknown_paths_are_json_404s(api: Api, path: str) -> None:
    with api.client("bob") as bob:
        reply = bob.get(path)
    assert reply.status_code == 404 and reply.json()["status"] == 404
