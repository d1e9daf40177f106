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

from hopwise.bench.servers import free_port
from hopwise.bench.startup import stop

NOTE = "# Harbour\n\nThe harbour gate opens at six in the morning.\n"


def test_keys_and_serve_from_the_command_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {"HOPWISE_DATA_DIR": str(tmp_path / "data"), "HOPWISE_EMBEDDINGS": "off"}
    hopwise = [sys.executable, "-m", "hopwise"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*hopwise, *args], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    (tmp_path / "harbour.md").write_text(NOTE, encoding="utf-8")
    made = run("keys", "create", "--label", "ci bot", "--json")
    assert made.returncode == 0, made.stderr
    key = json.loads(made.stdout)
    assert key["user"] == "local" and key["key"].startswith(f"hwk_{key['key_id']}_")
    with sqlite3.connect(tmp_path / "data" / "api_keys.sqlite") as db:
        stored = " ".join(
            str(v) for row in db.execute("SELECT * FROM hopwise_api_keys") for v in row
        )
    assert key["key"] not in stored and key["key"].split("_")[2] not in stored  # a hash only

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
        second = run("serve", "--port", str(free_port()))  # the same embedded knowledge base
        assert second.returncode == 1
        line = second.stderr.strip().splitlines()[-1]
        assert (
            line.startswith("hopwise: error: the knowledge base at")
            and "HOPWISE_MILVUS_URI" in line
        )
        assert "hopwise serve" in line  # the holder, by its command line

        headers = {"Authorization": f"Bearer {key['key']}"}
        assert httpx.get(f"{url}/api/v1/documents", headers=headers).json() == {"documents": []}
        listed = run("keys", "list")
        assert (
            key["key_id"] in listed.stdout
            and "ci bot" in listed.stdout
            and key["key"] not in listed.stdout
        )
        assert run("keys", "revoke", key["key_id"]).returncode == 0
        refused = httpx.get(f"{url}/api/v1/documents", headers=headers)
        assert refused.status_code == 401 and "revoked" in refused.json()["message"]
    finally:
        stop(server)
        log.close()
