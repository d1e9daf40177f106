"""Secrets never leak: with distinctive API keys, Milvus token and admin password set, run
ingest, ask (LLM over the stub, a failing endpoint, and an endpoint that echoes the key back in
its error, as real providers do), an eval smoke run, the trace export and CLI errors; then grep
every file written under the data dir and the eval output, all captured output, the logs and
the exported trace. The stub receiving the key in its Authorization header is the only place
the key may travel."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import streamlit as st

from tests.fakes.openai_stub import StubOpenAIServer, plausible_responder
from tests.ingest.conftest import free_port
from tests.reliability.conftest import cli_env
from tests.ui.apptools import assert_no_exception, new_app

SECRETS = {
    "HOPWISE_LLM_API_KEY": "sk-hopwise-LLMSECRET-7f3a9c",
    "HOPWISE_EMBEDDING_API_KEY": "emb-EMBSECRET-51c2d8",
    "HOPWISE_MILVUS_TOKEN": "root:MILVUSSECRET-88d1e0",
    "HOPWISE_ADMIN_PASSWORD": "ADMINSECRET-horse-42",
}
DOC = "# Warranty\n\nThe turbine warranty lasts two years from delivery.\n"


class EchoKeyServer:
    """An OpenAI-compatible endpoint that refuses every call with 401 and quotes the key it
    got, like 'Incorrect API key provided: sk-...'."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def _refuse(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                body = json.dumps(
                    {"error": {"message": f"Incorrect API key provided: {key}",
                               "type": "invalid_request_error", "code": "invalid_api_key"}}
                ).encode()  # fmt: skip
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _refuse  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def stub() -> Iterator[StubOpenAIServer]:
    with StubOpenAIServer(responder=plausible_responder) as server:
        yield server


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoKeyServer]:
    server = EchoKeyServer()
    yield server
    server.close()


def leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def written_files(*roots: Path) -> str:
    """Every byte written under the roots, decoded leniently (SQLite and Milvus files too)."""
    parts = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def run_parallel(jobs: list[tuple[dict[str, str], list[str], int | None]], cwd: Path) -> list[str]:
    """Run `hopwise` jobs at once (each on its own data dir); checks exit codes."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hopwise", *args],
            env=env,
            cwd=cwd,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for env, args, _ in jobs
    ]
    outputs = []
    for proc, (_, args, expected) in zip(procs, jobs, strict=True):
        out, err = proc.communicate(timeout=120)
        if expected is not None:
            assert proc.returncode == expected, (args, err[-2000:])
        outputs.append(f"$ {args}\n{out}\n{err}")
    return outputs


@pytest.mark.slow
def test_cli_runs_leak_no_secret(tmp_path: Path, stub: StubOpenAIServer, echo: EchoKeyServer):
    doc, out, prefix = tmp_path / "warranty.md", tmp_path / "eval-out", tmp_path / "mini"
    doc.write_text(DOC)
    Path(f"{prefix}.corpus.jsonl").write_text(
        json.dumps({"id": "p1", "title": "Warranty", "text": DOC}) + "\n"
    )
    Path(f"{prefix}.questions.jsonl").write_text(
        json.dumps({"id": "q1", "question": "How long is the turbine warranty?",
                    "answer": "two years", "supporting_ids": ["p1"], "lang": "en"}) + "\n"
    )  # fmt: skip
    llm = {"HOPWISE_LLM_BASE_URL": stub.url, "HOPWISE_LLM_MODEL": "stub-model",
           "HOPWISE_LLM_MAX_RETRIES": "0", **SECRETS}  # fmt: skip
    dense = {"HOPWISE_EMBEDDING_BASE_URL": stub.url, "HOPWISE_EMBEDDING_MODEL": "stub-embed"}

    def env(name: str, **extra: str) -> dict[str, str]:
        return cli_env(tmp_path / name, **{**llm, **dense, **extra})

    dead = f"http://127.0.0.1:{free_port()}"
    question = ["ask", "How long is the turbine warranty?", "--no-web"]
    outputs = run_parallel(
        [
            (env("data"), ["-v", "ingest", str(doc)], 0),
            (env("eval"), ["eval", str(prefix), "--limit", "1", "--json", "--out", str(out)], 0),
            (env("dead", HOPWISE_MILVUS_URI=dead, HOPWISE_MILVUS_TIMEOUT_S="1"), ["docs", "list"], 1),
            (env("bad"), ["search", "x", "--groups", 'bad"group'], 1),
            (env("echo-dense", HOPWISE_EMBEDDING_BASE_URL=echo.url), ["-v", "ingest", str(doc)], 1),
        ],
        tmp_path,
    )  # fmt: skip
    for copy in ("echo-llm", "echo-query"):
        shutil.copytree(tmp_path / "data", tmp_path / copy)
    outputs += run_parallel(
        [
            (env("data"), ["-v", *question, "--json"], 0),
            (env("echo-llm", HOPWISE_LLM_BASE_URL=echo.url), ["-v", *question, "--json"], 0),
            (env("echo-query", HOPWISE_EMBEDDING_BASE_URL=echo.url), ["-v", *question], None),
        ],
        tmp_path,
    )  # fmt: skip
    seen = "\n".join(outputs)
    assert "two years" in seen and "degraded" in seen and "Incorrect API key" in seen
    assert any(r.headers.get("authorization", "").endswith(SECRETS["HOPWISE_LLM_API_KEY"])
               for r in stub.requests)  # fmt: skip
    assert leaks(seen) == [], [o for o in outputs if leaks(o)]
    assert leaks(written_files(tmp_path)) == []


def test_in_process_ask_trace_export_and_logs(
    tmp_path: Path, stub: StubOpenAIServer, echo: EchoKeyServer,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    from hopwise.app import Hopwise
    from hopwise.settings import load_settings
    from ingest.pipeline import ingest_bytes
    from ui.formatting import trace_json

    caplog.set_level(logging.DEBUG)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    data = tmp_path / "data"
    exports = []
    for url, fault in ((stub.url, None), (stub.url, "http500"), (echo.url, None)):
        settings = load_settings(
            data_dir=data, web_search=False, llm_base_url=url, llm_model="stub-model",
            llm_max_retries=0,
        )  # fmt: skip
        stub.fault = fault
        app = Hopwise.from_settings(settings)
        try:
            ingest_bytes(DOC.encode(), "warranty.md", app.retriever, config=settings.ingest)
            result = app.ask("How long is the turbine warranty?")
            exports.append(trace_json(result))
            exports.append(repr(settings))  # what a debugging print would show
        finally:
            app.close()
            stub.fault = None
    exports.append(echoed_embedding_errors(data / "dense", echo.url))
    assert "two years" in exports[0] and "Incorrect API key" in exports[-1]
    assert leaks("\n".join(exports)) == []
    assert caplog.text.count("Incorrect API key") >= 2  # the refusals were logged, key masked
    assert leaks(caplog.text) == []
    assert leaks(written_files(data)) == []


def echoed_embedding_errors(data: Path, url: str) -> str:
    """What a user sees when the embedding endpoint refuses the key: the ingest result and the
    error of a question (dense store opened before the endpoint started refusing)."""
    from hopwise.app import build_embedder, open_store
    from hopwise.settings import load_settings
    from ingest.pipeline import ingest_bytes
    from tests.fakes.hash_embedder import HashEmbedder

    settings = load_settings(
        data_dir=data, web_search=False, embedding_base_url=url, embedding_model="m",
        embedding_dim=8, llm_max_retries=0,
    )  # fmt: skip
    refused = build_embedder(settings)
    assert refused is not None
    seen = []
    with open_store(settings, embedder=HashEmbedder(8, "m")) as store:
        assert (
            ingest_bytes(DOC.encode(), "w.md", store, config=settings.ingest).status == "ingested"
        )
        store.embedder = refused
        result = ingest_bytes(DOC.encode(), "warranty.md", store, config=settings.ingest)
        seen.append(f"{result.status}: {result.reason}")
        try:  # BM25 carries on while embeddings are down; the failure is logged
            seen.append(repr(store.search("warranty", ["all"])))
        except Exception as exc:  # noqa: BLE001 - its message is what the user would see
            seen.append(f"{type(exc).__name__}: {exc}")
    assert seen[0].startswith("failed")
    return "\n".join(seen)


def test_admin_page_never_shows_the_password(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOPWISE_DATA_DIR", str(tmp_path / "data"))
        mp.setenv("HOPWISE_WEB_SEARCH", "off")
        mp.setenv("HOPWISE_ADMIN_PASSWORD", SECRETS["HOPWISE_ADMIN_PASSWORD"])
        mp.chdir(tmp_path)
        st.cache_resource.clear()
        try:
            at = new_app().run()
            at.switch_page("app_pages/admin.py").run()
            at.text_input[0].set_value("wrong guess")
            at.button[0].click().run()
            shown = [str(e.value) for kind in (at.error, at.warning, at.markdown, at.caption)
                     for e in kind]  # fmt: skip
            at.text_input[0].set_value(SECRETS["HOPWISE_ADMIN_PASSWORD"])
            at.button[0].click().run()
            assert_no_exception(at)
            shown += [str(e.value) for kind in (at.error, at.success, at.markdown, at.caption)
                      for e in kind]  # fmt: skip
            assert at.get("file_uploader"), "the correct password signs in"
        finally:
            st.cache_resource.clear()
    assert leaks("\n".join(shown)) == []
    assert leaks(written_files(tmp_path / "data")) == []
