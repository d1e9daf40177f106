"""The real local model (SmolLM2-135M-Instruct through tools/real_model/server.mjs) for the slow
suite: started on a free loopback port, stopped after; skipped, with the reason, until
`make real-model` has prepared it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(
    os.environ.get("HOPWISE_REAL_MODEL_DIR", Path.home() / ".cache" / "hopwise" / "real-model")
)
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = GGUF.removesuffix(".gguf")
START_S = 90.0


def missing() -> str | None:
    """Why the real model cannot run here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not installed (the model server runs on it)"
    if not (MODEL_DIR / GGUF).is_file():
        return f"the real model is not prepared in {MODEL_DIR}: run `make real-model`"
    if not (MODEL_DIR / "node_modules" / "@node-llama-cpp" / "linux-x64").is_dir():
        return f"node-llama-cpp is not prepared in {MODEL_DIR}: run `make real-model`"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def real_model_server() -> Iterator[str]:
    """The base URL of a running real-model server (the repo's server.mjs, run beside its
    node_modules)."""
    if reason := missing():
        pytest.skip(reason)
    shutil.copy(ROOT / "tools" / "real_model" / "server.mjs", MODEL_DIR / "server.mjs")
    port = _free_port()
    log = MODEL_DIR / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["node", str(MODEL_DIR / "server.mjs"), "--model", str(MODEL_DIR / GGUF),
             "--port", str(port), "--threads", "1"],
            stdout=out, stderr=subprocess.STDOUT, cwd=MODEL_DIR,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the model server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.unlink(missing_ok=True)
