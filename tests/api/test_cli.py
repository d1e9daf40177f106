"""The commands as an operator runs them: `hopwise keys create|list|revoke` beside a running
`hopwise serve` (zero configuration but a data dir), the key shown once and only its hash
stored, a revocation refused at once by the running server, and a second process on the same
embedded knowledge base told in one line what holds it and the way out."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hopwise.bench.servers import free_port
from hopwise.bench.startup import stop
from hopwise.cli import main
from tests.fakes.env import isolate_hopwise_env


@pytest.mark.slow  # 8–12 s of subprocesses or servers: in .ci/run's slow suite
def test_keys_and_serve_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = isolate_hopwise_env(monkeypatch, tmp_path, tmp_path / "data")
    monkeypatch.setenv("HOPWISE_EMBEDDINGS", "off")
    env = {**os.environ}

    def keys(*args: str) -> tuple[int, str, str]:
        """`hopwise keys …` through the console script's own entry point, in this process."""
        code = main(["keys", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    code, out, _ = keys("create", "--label", "ci bot", "--json")
    assert code == 0
    key = json.loads(out)
    assert key["user"] == "local" and key["key"].startswith(f"hwk_{key['key_id']}_")
    with sqlite3.connect(data / "api_keys.sqlite") as db:
        stored = " ".join(
            str(v) for row in db.execute("SELECT * FROM hopwise_api_keys") for v in row
        )
    assert key["key"] not in stored and key["key"].split("_")[2] not in stored  # a hash only

    hopwise = [sys.executable, "-m", "hopwise"]
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([*hopwise, "serve", "--port", str(port)], env=env, cwd=tmp_path,
                              stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, (
                tmp_path / "serve.log"
            ).read_text()
            try:
                if httpx.get(f"{url}/api/v1/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        second = subprocess.run([*hopwise, "serve", "--port", str(free_port())], env=env,
                                cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert second.returncode == 1  # the same embedded knowledge base
        line = second.stderr.strip().splitlines()[-1]
        assert (
            line.startswith("hopwise: error: the knowledge base at")
            and "HOPWISE_MILVUS_URI" in line
        )
        assert "hopwise serve" in line  # the holder, by its command line

        headers = {"Authorization": f"Bearer {key['key']}"}
        assert httpx.get(f"{url}/api/v1/documents", headers=headers).json() == {"documents": []}
        code, listed, _ = keys("list")
        assert key["key_id"] in listed and "ci bot" in listed and key["key"] not in listed
        assert keys("revoke", key["key_id"])[0] == 0  # while the server runs
        refused = httpx.get(f"{url}/api/v1/documents", headers=headers)
        assert refused.status_code == 401 and "revoked" in refused.json()["message"]
        code, _, err = keys("revoke", key["key_id"])
        assert code == 1 and "no active key" in err
        code, _, err = keys("create", "--user", "nobody")
        assert code == 1 and err.startswith("hopwise: error:") and "local user" in err
    finally:
        stop(server)
        log.close()
