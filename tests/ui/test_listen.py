"""`streamlit run ui/app.py` with no flags, as a new user starts it: it listens on loopback
only, and prints its address without asking a public service for the machine's IP (Streamlit
does that at every headless start unless an address is configured)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from hopwise.bench.startup import free_port, stop
from tests.ui.apptools import ADMIN_PASSWORD
from tests.ui.test_browser import ROOT, wait_healthy


def _other_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routes a UDP socket, sends nothing
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_the_app_listens_on_loopback_and_asks_no_one_for_its_address(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPWISE_")}
    env |= {"HOPWISE_DATA_DIR": str(tmp_path / "data"), "HOPWISE_ADMIN_PASSWORD": ADMIN_PASSWORD}
    port = free_port()
    log_path = tmp_path / "console.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "ui/app.py", "--server.port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            wait_healthy(f"http://127.0.0.1:{port}", proc)
            other = _other_address()
            if other is not None:
                with socket.socket() as conn:
                    conn.settimeout(5)
                    assert conn.connect_ex((other, port)) != 0, f"reachable on {other}"
            deadline = time.monotonic() + 10
            while "URL:" not in log_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            stop(proc)
    console = log_path.read_text()
    assert f"URL: http://127.0.0.1:{port}" in console, console
    assert "External URL" not in console and "external IP" not in console, console
