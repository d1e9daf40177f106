"""Real engines on loopback for the benchmarks and the tests: a throwaway PostgreSQL cluster
(Debian's binaries, `initdb` and `pg_ctl` in a temporary directory, on a free loopback port; as
root the cluster belongs to the `postgres` user, since initdb refuses root) and the C++ Milvus
Lite engine serving gRPC on a loopback port (it stands in for a Milvus server)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import psycopg


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_bin() -> Path | None:
    """The directory of Debian's server binaries (initdb, pg_ctl), or None."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").is_file() and Path(candidate, "pg_ctl").is_file():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def missing_reason() -> str:
    """Why a PostgreSQL test cannot run here ('' when it can)."""
    if postgres_bin() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and no 'postgres' user exists to own the test cluster"
    return ""


class PostgresServer:
    """`start()` a throwaway cluster; `url` connects to its `hopwise` database; `stop()`,
    `restart()` and `pause()`/`resume()` (stopped, same data) drive faults."""

    def __init__(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError(missing_reason())
        self.bin = bin_dir
        self.dir = Path(tempfile.mkdtemp(prefix="hopwise-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/hopwise"
        self._owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            self._owner = pwd.getpwnam("postgres")
            os.chown(self.dir, self._owner.pw_uid, self._owner.pw_gid)
        os.chmod(self.dir, 0o700)

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self._owner is not None:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> PostgresServer:
        if not (self.data / "PG_VERSION").exists():
            self._run(
                "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
            )  # fmt: skip
        self.resume()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'hopwise'")
            if exists.fetchone() is None:
                conn.execute("CREATE DATABASE hopwise")
        return self

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def resume(self) -> None:
        """Start the server (again) on the same port and data."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.dir} -c fsync=off -c max_connections=200 "
            "-c shared_buffers=32MB"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-o", options,
            "-w", "-t", "60", "start",
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(psycopg.OperationalError):
                psycopg.connect(self.admin_url, connect_timeout=2).close()
                return
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not accept connections: {self.log_tail()}")

    def pause(self) -> None:
        """Stop the server now (connections are cut); `resume()` brings it back."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)

    def stop(self) -> None:
        self.pause()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "server.log").read_text(errors="replace")[-2000:]
        return ""

    def fresh_database(self, name: str) -> str:
        """A new empty database on this server; its URL."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


class MilvusLiteServer:
    """The C++ Milvus Lite engine serving gRPC on a loopback port (stands in for a server)."""

    def __init__(self, db_file: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from milvus_lite.server import Server
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self._server = Server(str(db_file), address=f"127.0.0.1:{self.port}")

    def start(self, timeout_s: float = 20.0) -> None:
        if not (self._server.init() and self._server.start()):
            raise RuntimeError("milvus-lite server failed to start")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("milvus-lite server did not open its port")

    def stop(self) -> None:
        proc = self._server._p
        if proc is not None and proc.poll() is None:
            proc.terminate()
        self._server.stop()
