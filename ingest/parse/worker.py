"""The killable parse worker: a long-lived subprocess that parses, or runs a `worker_task`
function, restarted after a timeout or a crash.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ingest.errors import IngestError
from ingest.models import ParsedDocument
from ingest.parse.formats import parse_inline
from ingest.parse.limits import WORKER_MEMORY_LIMIT
from ingest.parse.progress import PageProgress, listener_errors_logged, reporting

log = logging.getLogger(__name__)


class _Task:
    """A pure function the worker may run by name (the allow-list is every function marked
    with `worker_task`), and the classes its result may be rebuilt from."""

    def __init__(self, function: Callable[..., Any], results: tuple[type, ...]) -> None:
        self.function = function
        self.name = f"{function.__module__}:{function.__qualname__}"
        self.results = {(kind.__module__, kind.__qualname__): kind for kind in results}


_TASKS: dict[str, _Task] = {}
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def worker_task(*results: type) -> Callable[[F], F]:
    """Allow the worker to run the decorated module-level function (`call_in_worker`); its
    result is plain data or instances of `results` (dataclasses of plain data)."""

    def register(function: F) -> F:
        task = _Task(function, results)
        _TASKS[task.name] = task
        return function

    return register


class PlainData(pickle.Unpickler):
    """Unpickles a worker's reply: builtins, and instances of the task's declared result
    classes only, so a worker that an untrusted file took over cannot run code here."""

    def __init__(self, data: bytes, allowed: dict[tuple[str, str], type]) -> None:
        super().__init__(io.BytesIO(data))
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        kind = self.allowed.get((module, name))
        if kind is None:
            raise pickle.UnpicklingError(f"the worker may not send {module}.{name}")
        return kind


class Worker:
    """One long-lived worker subprocess (a parse, or a `worker_task` call such as a PDF page
    render), restarted after a timeout or crash.

    A pathological file can spin or balloon inside a C extension, where no thread can stop
    it; a separate process can be killed. Keeping the process between requests keeps the
    normal path fast (one start-up, then a pipe round-trip per request).
    """

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._errors: Any = None  # the worker's stderr (a temp file), read when it dies
        self._lock = threading.Lock()
        self._preload = preload  # modules imported before the worker says it is ready
        self.unavailable = False  # the worker cannot start here: run in-process instead

    def parse(
        self,
        data: bytes,
        source: str,
        ext: str,
        timeout_s: float,
        ocr_timeout_s: float | None = None,
        on_page: PageProgress | None = None,
    ) -> ParsedDocument:
        with self._lock:
            proc = None if self.unavailable else self._ensure()
            if proc is None:
                with reporting(on_page):
                    return parse_inline(data, source, ext)
            assert proc.stdin is not None and proc.stdout is not None
            started = time.monotonic()
            deadline = started + timeout_s
            self._forget_errors()
            try:
                _send(proc.stdin, pickle.dumps(("parse", (data, source, ext))))
                while True:
                    reply = _recv(proc.stdout, deadline)
                    if not reply.startswith(b"P"):
                        break
                    stage, done, total = json.loads(reply[1:])
                    if stage == "ocr":  # scans get the OCR deadline instead of the parse one
                        deadline = max(deadline, started + (ocr_timeout_s or timeout_s))
                    if on_page is not None:
                        with listener_errors_logged():
                            on_page(str(stage), int(done), int(total))
            except TimeoutError as exc:
                self.stop()
                limit = deadline - started
                raise IngestError(f"parsing took longer than {limit:g} s; file refused") from exc
            except (OSError, EOFError, ValueError) as exc:
                cause = self._death(proc)
                raise IngestError(f"the parser crashed on this file: {cause}") from exc
            except BaseException:
                # Interrupted mid-conversation (e.g. the page reran): what the worker still
                # has to say belongs to this file, so it must never be read as the next one's.
                self.stop()
                raise
        # The reply is JSON, not pickle: the worker handles untrusted files, so nothing it
        # sends back may be able to run code in this process.
        if reply.startswith(b"E"):
            raise IngestError(reply[1:].decode("utf-8", "replace"))
        return ParsedDocument.model_validate_json(reply[1:])

    def call(self, function: Callable[..., T], args: tuple[Any, ...], timeout_s: float) -> T:
        """`function(*args)` in the worker within `timeout_s` (waiting for the worker
        included): TimeoutError past it, RuntimeError if the worker dies or the call fails."""
        task = _TASKS.get(f"{function.__module__}:{function.__qualname__}")
        if task is None or task.function is not function:
            raise ValueError(f"{function.__qualname__} is not a worker task")
        if self.unavailable:
            return function(*args)
        started = time.monotonic()
        if not self._lock.acquire(timeout=timeout_s):
            raise TimeoutError(f"the worker stayed busy for {timeout_s:g} s")
        try:
            proc = None if self.unavailable else self._ensure(function.__module__)
            if proc is None:
                return function(*args)
            assert proc.stdin is not None and proc.stdout is not None
            self._forget_errors()
            try:
                _send(proc.stdin, pickle.dumps(("call", (task.name, args))))
                reply = _recv(proc.stdout, started + timeout_s)
            except TimeoutError as exc:
                self.stop()
                raise TimeoutError(f"took longer than {timeout_s:g} s") from exc
            except (OSError, EOFError, ValueError) as exc:
                raise RuntimeError(f"the worker crashed: {self._death(proc)}") from exc
            except BaseException:
                self.stop()  # interrupted: its reply must never be read as the next one's
                raise
        finally:
            self._lock.release()
        if reply.startswith(b"E"):
            raise RuntimeError(reply[1:].decode("utf-8", "replace"))
        result: T = PlainData(reply[1:], task.results).load()
        return result

    def _ensure(self, *modules: str) -> subprocess.Popen[bytes] | None:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from ingest.parse.worker import serve_worker; serve_worker(sys.argv[1:])",
                *self._preload,
                *modules,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._error_file(),
            env=env,
        )
        assert self._proc.stdout is not None
        try:  # the worker says "R" once its imports are done
            ready = _read_exact(self._proc.stdout.fileno(), 1, time.monotonic() + 60) == b"R"
        except (TimeoutError, EOFError, OSError):
            ready = False
        if not ready:
            log.warning("worker process could not start; running in-process without a deadline")
            self.stop()
            self.unavailable = True
        return self._proc

    def _error_file(self) -> Any:
        """Where the worker's stderr goes: a temp file, emptied before each request, so a
        worker that dies leaves its last words there (a native library's abort message)."""
        if self._errors is None:
            try:
                self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - as long as the worker
            except OSError:  # no writable temp dir: the worker runs, its last words are lost
                return subprocess.DEVNULL
        return self._errors

    def _forget_errors(self) -> None:
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.seek(0)
                self._errors.truncate()

    def _death(self, proc: subprocess.Popen[bytes]) -> str:
        """Why the worker stopped answering, in words, after it is reaped (a pipe can close
        before the exit status exists); the worker is stopped."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(DEATH_WAIT_S)
        code = proc.poll()
        self.stop()
        last = ""
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.seek(max(0, self._errors.seek(0, os.SEEK_END) - 4096))
                lines = self._errors.read().decode("utf-8", "replace").splitlines()
                last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        return death_cause(code, last)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if stream:
                        stream.close()


DEATH_WAIT_S = 2.0  # how long a worker whose pipe closed gets to report its exit status
_SIGNAL_CAUSES: dict[int, str] = {
    signal.SIGKILL: "it was killed (SIGKILL; the system may have run out of memory)",
    signal.SIGABRT: "it aborted (SIGABRT; often a native library out of memory under the "
    f"worker's {WORKER_MEMORY_LIMIT // 1024**3} GB limit)",
    signal.SIGSEGV: "it crashed in native code (SIGSEGV)",
    signal.SIGBUS: "it crashed in native code (SIGBUS)",
}


def death_cause(code: int | None, last_words: str = "") -> str:
    """A dead worker's exit status in words, with the last line it wrote to stderr."""
    if code is None:
        cause = "it stopped answering and did not exit"
    elif code < 0:
        number = -code
        try:
            name = signal.Signals(number).name
        except ValueError:  # a real-time signal has no name
            name = str(number)
        cause = _SIGNAL_CAUSES.get(number, f"it was stopped by signal {name}")
    else:
        cause = f"it exited with status {code}"
    shown = "".join(ch for ch in last_words if ch.isprintable())[:200]
    return f"{cause}; its last message: {shown}" if shown else cause


def _send(stream: Any, payload: bytes) -> None:
    stream.write(struct.pack(">Q", len(payload)) + payload)
    stream.flush()


def _recv(stream: Any, deadline: float) -> bytes:
    """Read one length-prefixed message, giving up at `deadline` (monotonic seconds)."""
    fd = stream.fileno()
    header = _read_exact(fd, 8, deadline)
    return _read_exact(fd, struct.unpack(">Q", header)[0], deadline)


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        piece = os.read(fd, min(size, 1 << 20))
        if not piece:
            raise EOFError
        parts.append(piece)
        size -= len(piece)
    return b"".join(parts)


def serve_worker(preload: Sequence[str] = ()) -> None:
    """The worker subprocess: read requests on stdin, answer on the original stdout."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from libraries must not corrupt the protocol
    for module in preload:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    out.write(b"R")
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        header = stdin.read(8)
        if len(header) < 8:
            return
        kind, request = pickle.loads(stdin.read(struct.unpack(">Q", header)[0]))
        if kind == "call":
            _send(out, _run_task(*request))
            continue
        data, source, ext = request

        def progress(stage: str, done: int, total: int) -> None:
            _send(out, b"P" + json.dumps([stage, done, total]).encode("ascii"))

        try:
            with reporting(progress):
                reply = b"K" + parse_inline(data, source, ext).model_dump_json().encode("utf-8")
        except IngestError as exc:
            reply = b"E" + str(exc).encode("utf-8")
        _send(out, reply)


def _run_task(name: str, args: tuple[Any, ...]) -> bytes:
    """A `worker_task` call in the worker: its module is imported, which registers it."""
    try:
        importlib.import_module(name.partition(":")[0])
        task = _TASKS.get(name)
        if task is None:
            raise ValueError(f"{name} is not a worker task")
        return b"K" + pickle.dumps(task.function(*args))
    except Exception as exc:  # noqa: BLE001 - the caller gets the error, the worker lives on
        return b"E" + f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")


PARSE_WORKER = Worker(
    preload=("pypdfium2", "docx", "bs4", "charset_normalizer", "ingest.parse.ocr")
)
TASK_WORKER = Worker()  # its own process: a page view never queues behind a slow parse
atexit.register(PARSE_WORKER.stop)
atexit.register(TASK_WORKER.stop)


def call_in_worker(function: Callable[..., T], *args: Any, timeout_s: float) -> T:
    """Run a `worker_task` function in the task worker, killed past `timeout_s` (TimeoutError);
    in-process, without a deadline, where no worker can start."""
    return TASK_WORKER.call(function, args, timeout_s)
